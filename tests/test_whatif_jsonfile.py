"""``swftools.whatif.jsonfile``: the what-if model files, presets checked here rather than at
every load (jsonschema costs ~0.1 s a process), files at load with a located error."""

from __future__ import annotations

import json

import jsonschema
import pytest

from swftools.errors import InputError
from swftools.resources import load_json, schemas_dir
from swftools.whatif import sensitivity, training
from swftools.whatif.jsonfile import load_checked

# (presets, folder under schemas/whatif, schema)
KINDS = [(sensitivity.PRESETS, "", "sensitivity.schema.json"),
         (training.MODEL_PRESETS, "models", "training-model.schema.json"),
         (training.PLATFORM_PRESETS, "platforms", "training-platform.schema.json")]
PRESETS = [(name, folder, schema) for names, folder, schema in KINDS for name in names]


@pytest.mark.parametrize("presets, folder, schema", KINDS, ids=["sensitivity", "models",
                                                                "platforms"])
def test_the_presets_are_the_files(presets, folder, schema):
    assert sorted(presets) == sorted(p.stem for p in (schemas_dir() / "whatif" / folder)
                                     .glob("*.json"))


@pytest.mark.parametrize("name, folder, schema", PRESETS, ids=[p[0] for p in PRESETS])
def test_every_preset_is_schema_valid(name, folder, schema):
    raw = json.loads((schemas_dir() / "whatif" / folder / f"{name}.json")
                     .read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(load_json(schema)).validate(raw)


def test_a_file_is_checked_with_a_located_error(tmp_path):
    raw = json.loads((schemas_dir() / "whatif" / "mlperf-p100-v100.json")
                     .read_text(encoding="utf-8"))
    del raw["gpu_models"]
    path = tmp_path / "model.json"
    path.write_text(json.dumps(raw, indent=2), encoding="utf-8")
    assert load_checked("sensitivity", "mlperf-p100-v100", sensitivity.PRESETS, "",
                        "sensitivity.schema.json")[0]["gpu_models"]
    with pytest.raises(InputError, match="gpu_models"):
        load_checked("sensitivity", path, sensitivity.PRESETS, "", "sensitivity.schema.json")
