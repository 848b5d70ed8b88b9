"""``swftools.site.resolve_site``: the one rule every command and format uses."""

from __future__ import annotations

import pytest

from swftools import table as jt
from swftools.errors import InputError
from swftools.formats.datapackage import package
from swftools.formats.nqsii import schema
from swftools.site import PRESETS, Site, load_site, preset, resolve_site


def _table(site=None):
    return jt.with_metadata(jt.empty(), {} if site is None else {"site": site})


def test_explicit_site_wins():
    aaic = load_site("aaic")
    assert resolve_site(aaic, _table("other"), fmt="nqsii") is aaic
    assert resolve_site("aaic", _table()).name == "aaic"
    with pytest.raises(InputError):
        resolve_site("no-such-site.json", _table("aaic"))


def test_then_the_trace_then_the_nqsii_default_then_none():
    assert resolve_site(None, _table("aaic")).name == "aaic"
    assert resolve_site(None, {"site": "aaic"}).name == "aaic"  # a metadata dict works too
    assert resolve_site(None, _table("unknown-site")) is None  # not a preset: ignored
    assert resolve_site(None, _table(), fmt="nqsii").name == "aaic"
    assert resolve_site(None, _table(), fmt="swf") is None
    assert resolve_site(None) is None


def test_presets_are_loaded_once_and_the_format_copies_delegate():
    assert preset("aaic") is preset("aaic")
    assert resolve_site("aaic") is preset("aaic")
    assert schema.resolve_site(None) is preset("aaic")
    assert not hasattr(package, "_resolve_site")
    assert isinstance(schema.resolve_site("aaic"), Site)


def test_abci_preset_is_schema_valid_and_abci_sized():
    # issue 15: 1,088 nodes x 4 V100, one queue per ABCI resource type, sources in the description
    import json

    import jsonschema

    from swftools.resources import load_json, schemas_dir

    settings = json.loads((schemas_dir() / "sites" / "abci.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(load_json("site.schema.json")).validate(settings)
    site = preset("abci")
    assert (site.max_nodes, site.gpus_per_node, site.gpu_model) == (1088, 4, "V100")
    assert [q.name for q in site.queues] == ["rt_F", "rt_G.large", "rt_G.small", "rt_C.large",
                                             "rt_C.small"]
    full = site.queue("rt_F")
    assert full.nodes_max > 1 and full.gpus_per_node_min == full.gpus_per_node_max == 4
    assert site.queue("rt_G.small").gpus_per_node_max == 1
    assert site.queue("rt_C.large").gpus_per_node_max == 0
    assert all(q.walltime_max_s == 72 * 3600 for q in site.queues)
    assert "docs.abci.ai" in settings["description"] and "168 h" in settings["description"]
    assert resolve_site("abci") is site


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_is_schema_valid(name):
    """``load_site`` does not validate a preset (jsonschema costs ~0.1 s a process): this
    does, for every file in ``schemas/sites``."""
    import json

    import jsonschema

    from swftools.resources import load_json, schemas_dir

    assert sorted(PRESETS) == sorted(p.stem for p in (schemas_dir() / "sites").glob("*.json"))
    settings = json.loads((schemas_dir() / "sites" / f"{name}.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(load_json("site.schema.json")).validate(settings)


def test_a_site_file_is_still_validated(tmp_path):
    """A user's site file (not a preset) gets the schema check and its located error."""
    import json

    from swftools.resources import schemas_dir

    settings = json.loads((schemas_dir() / "sites" / "aaic.json").read_text(encoding="utf-8"))
    settings["queues"][0]["nodes_min"] = "one"
    path = tmp_path / "site.json"
    path.write_text(json.dumps(settings), encoding="utf-8")
    with pytest.raises(InputError, match=r"queues/0/nodes_min: 'one' is not of type 'integer'"):
        load_site(path)


def test_the_nqsii_copy_takes_the_tables_site_before_its_default():
    assert schema.resolve_site(None, _table("abci")).name == "abci"
    assert schema.resolve_site(None, _table()).name == "aaic"
