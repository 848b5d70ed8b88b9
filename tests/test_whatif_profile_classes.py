"""``whatif profile --per-class``: per-application-class ``score:<class>`` columns (issue 25)."""

from __future__ import annotations

import numpy as np
from typer.testing import CliRunner

from swftools.cli import app
from swftools.replay.placement import Pal, PlacementInputs, PmFirst
from swftools.site import load_site
from swftools.whatif.profile import MAX_SPREAD, generate_profile, read_profile, write_profile
from swftools.whatif.run import _class_scores
from swftools.whatif.sensitivity import load_sensitivity

SITE = load_site("aaic-v100-half")
SENS = load_sensitivity("mlperf-p100-v100")


def _per_class(seed=1, spread=0.05):
    return generate_profile(SITE, spread=spread, seed=seed, app_classes=SENS.names)


def test_per_class_scores_are_deterministic_and_keep_the_gpu_scores():
    a, b, plain = _per_class(), _per_class(), generate_profile(SITE, spread=0.05, seed=1)
    assert a.to_csv() == b.to_csv()
    assert np.array_equal(a.scores, plain.scores) and np.array_equal(a.classes, plain.classes)
    assert [n for n, _ in a.app_scores] == list(SENS.names)
    grids = [g for _, g in a.app_scores]
    assert all(not np.array_equal(grids[0], g) for g in grids[1:])
    for g in grids:  # correlated with the GPU's own score, not equal to it
        r = np.corrcoef(g.ravel(), a.scores.ravel())[0, 1]
        assert 0.4 < r < 0.95
    assert _per_class(seed=2).to_csv() != a.to_csv()


def test_scores_stay_positive_at_the_largest_spread():
    p = _per_class(spread=MAX_SPREAD)
    for _, g in p.app_scores:
        assert g.min() >= 1 - 3 * MAX_SPREAD - 1e-9 and g.max() <= 1 + 3 * MAX_SPREAD + 1e-9


def test_columns_round_trip_through_read_profile(tmp_path):
    p = _per_class()
    path = write_profile(p, tmp_path / "p.csv")
    back = read_profile(path, SITE)
    assert [n for n, _ in back.app_scores] == [n for n, _ in p.app_scores]
    for (_, g), (_, h) in zip(p.app_scores, back.app_scores):
        assert np.array_equal(g, h)
    assert back.to_csv() == p.to_csv()


def test_pal_and_pm_first_see_distinct_per_class_scores(tmp_path):
    back = read_profile(write_profile(_per_class(), tmp_path / "p.csv"), SITE)
    class_score = _class_scores(back, SENS)
    assert len(class_score) == len(SENS.names)
    inputs = PlacementInputs(score=back.scores.tolist(), class_score=class_score,
                             job_class=list(range(len(SENS.names))))
    machine = inputs.resolved(len(SITE.gpu_model_of_node), SITE.gpus_per_node)
    for cls in (PmFirst, Pal):
        p = cls(machine)

        class _S:  # an idle machine as the placements read it
            g = SITE.gpus_per_node
            n_nodes = len(SITE.gpu_model_of_node)
            gpu_free = [(1 << g) - 1] * n_nodes
            exact = [0] * g + [(1 << n_nodes) - 1]
            full_gpus = (1 << g) - 1
            managed = (1 << n_nodes) - 1

        p.start(_S, None)
        assert len({tuple(map(tuple, v)) for v in p.values}) == len(SENS.names)
        # the best GPU for a 1-GPU job differs between application classes
        picks = {p.choose(_S, j, 1, 1) for j in range(len(SENS.names))}
        assert len(picks) > 1


def test_cli_per_class(tmp_path):
    out = tmp_path / "s.csv"
    r = CliRunner().invoke(app, ["whatif", "profile", "--site", "aaic-v100-half", "--seed", "1",
                                 "--per-class", "-o", str(out)])
    assert r.exit_code == 0, r.output
    head = out.read_text().splitlines()[0]
    assert head == "node,gpu_index,score,class," + ",".join(f"score:{n}" for n in SENS.names)
    r = CliRunner().invoke(app, ["whatif", "profile", "--procs", "4", "--per-class",
                                 "-o", str(tmp_path / "f.csv")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "f.csv").read_text().startswith("node,gpu_index,score,class,score:compute")
    r = CliRunner().invoke(app, ["whatif", "profile", "--procs", "4", "--sensitivity",
                                 "compute-only", "-o", str(tmp_path / "g.csv")])
    assert r.exit_code == 2 and "--per-class" in r.output
