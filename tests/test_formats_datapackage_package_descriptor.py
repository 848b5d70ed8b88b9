"""Checking a package descriptor (``datapackage/package.py``'s ``descriptor``): which profile
error is reported and where, and the path rule for a resource's ``schema`` and ``dialect``;
worked out by hand from ``schemas/datapackage.profile.json`` and the docstrings."""

from __future__ import annotations

import pytest

from swftools.errors import InputError
from swftools.formats import datapackage as dp

from .test_formats_datapackage import pkg  # noqa: F401 (fixture)
from .test_formats_datapackage import set_descriptor

PROFILE = "(expected a descriptor following schemas/datapackage.profile.json)"


def message_of(pkg) -> str:
    with pytest.raises(InputError) as err:
        dp.descriptor(pkg)
    return str(err.value)


def test_first_profile_error_by_its_place_is_reported(pkg):
    """Two errors in one resource: ``format`` (not a string) comes before ``bytes`` (negative)
    in the profile, but the reported one is the first by its path: resources/0/bytes."""
    def change(desc):
        desc["resources"][0].update(format=1, bytes=-1)
    path = set_descriptor(pkg, change)
    assert message_of(pkg) == f"{path}: resources/0/bytes: -1 is less than the minimum of 0 {PROFILE}"


def test_profile_error_of_the_whole_descriptor_is_at_the_top_level(pkg):
    path = set_descriptor(pkg, lambda desc: desc.pop("resources"))
    assert message_of(pkg) == \
        f"{path}: (top level): 'resources' is a required property {PROFILE}"


@pytest.mark.parametrize("key, value, problem", [
    ("schema", "../jobs.json", "climbs out of the package with '..'"),
    ("dialect", "/etc/dialect.json", "is an absolute path"),
])
def test_schema_and_dialect_paths_stay_inside_the_package(pkg, key, value, problem):
    """A resource's ``schema`` or ``dialect`` file follows the path rule (only a URL is let
    through, for read() to refuse when it needs it); reported at its own line."""
    path = set_descriptor(pkg, lambda desc: desc["resources"][0].update({key: value}))
    line = 1 + next(i for i, text in enumerate(path.read_text().splitlines())
                    if f'"{key}": "{value}"' in text)
    assert message_of(pkg) == (f"{path}:{line}: resource 'jobs': {key} {value!r} {problem} "
                               "(expected a relative path inside the package)")
