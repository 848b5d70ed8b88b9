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

from .conftest import text_under_c_locale

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


SENSITIVITY = ("sensitivity", sensitivity.PRESETS, "", "sensitivity.schema.json")


def _preset(name="mlperf-p100-v100"):
    return json.loads((schemas_dir() / "whatif" / f"{name}.json").read_text(encoding="utf-8"))


def _error(path) -> InputError:
    with pytest.raises(InputError) as caught:
        load_checked(SENSITIVITY[0], path, *SENSITIVITY[1:])
    return caught.value


def test_a_missing_file_names_the_presets(tmp_path):
    err = _error(tmp_path / "none.json")
    assert err.path == str(tmp_path / "none.json")
    assert err.message == ("no such sensitivity file or preset (presets: "
                           f"{', '.join(sensitivity.PRESETS)})")


def test_bad_json_is_located(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n  "name": "x",\n  "classes": [,]\n}\n', encoding="utf-8")
    err = _error(path)
    assert (err.path, err.line) == (str(path), 3)
    assert err.message == "not valid JSON: Expecting value"


def test_a_schema_error_names_the_field_its_line_and_value(tmp_path):
    raw = _preset()
    raw["classes"][1]["gradient_mb"] = "lots"
    path = tmp_path / "model.json"
    path.write_text(json.dumps(raw, indent=2), encoding="utf-8")
    err = _error(path)
    text = path.read_text(encoding="utf-8")
    # the second class's "gradient_mb" line, not the first class's
    expected_line = text.count("\n", 0, text.index('"gradient_mb": "lots"')) + 1
    assert text.index('"gradient_mb"') < text.index('"gradient_mb": "lots"')
    assert (err.path, err.field, err.line, err.value) == (str(path), "classes/1/gradient_mb",
                                                          expected_line, "lots")
    assert "'lots' is not of type" in err.message
    assert err.expected == "a sensitivity file as schemas/sensitivity.schema.json describes"


def test_a_top_level_error_is_on_the_documents_first_line_with_no_value(tmp_path):
    path = tmp_path / "list.json"
    path.write_text("\n\n[1, 2]\n", encoding="utf-8")
    err = _error(path)
    assert (err.field, err.line, err.value) == ("(top level)", 3, None)
    assert "is not of type 'object'" in err.message


def test_the_first_error_by_path_is_reported(tmp_path):
    raw = _preset()
    raw["classes"][0]["gradient_mb"] = "x"
    raw["gpu_models"] = "P100"
    path = tmp_path / "two.json"
    path.write_text(json.dumps(raw, indent=2), encoding="utf-8")
    err = _error(path)
    assert err.field == "classes/0/gradient_mb"  # "classes" sorts before "gpu_models"
    raw["classes"][0]["gradient_mb"] = 1.0
    raw["classes"][0]["title"] = {"not": "text"}  # a dict instance: no value shown
    path.write_text(json.dumps(raw, indent=2), encoding="utf-8")
    err = _error(path)
    assert (err.field, err.value) == ("classes/0/title", None)


def test_a_utf8_file_reads_under_any_locale(tmp_path):
    """Model files are UTF-8 whatever the user's locale (here C, ASCII)."""
    raw = _preset()
    raw["title"] = "Modèle — vitesse"
    path = tmp_path / "utf8.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    assert load_checked(*SENSITIVITY[:1], path, *SENSITIVITY[1:])[0]["title"] == raw["title"]
    code = ("import sys; from swftools.whatif import sensitivity as s; "
            "from swftools.whatif.jsonfile import load_checked; "
            "print(load_checked('sensitivity', sys.argv[1], s.PRESETS, '', "
            "'sensitivity.schema.json')[0]['title'].encode('utf-8').hex())")
    assert text_under_c_locale(code, str(path)) == "Modèle — vitesse"
