"""The golden-file switch: regenerating is refused in CI, allowed by hand."""

from __future__ import annotations

import pytest

from . import goldens


@pytest.mark.parametrize("variable", goldens.VARIABLES)
def test_update_refused_in_ci(monkeypatch, variable):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv(variable, "1")
    with pytest.raises(pytest.fail.Exception, match="never by a CI run"):
        goldens.updating()


def test_update_by_hand_and_default(monkeypatch):
    for v in goldens.VARIABLES:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("CI", "true")
    assert goldens.updating() is False
    monkeypatch.delenv("CI")
    monkeypatch.setenv("UPDATE_GOLDEN", "1")
    assert goldens.updating() is True
