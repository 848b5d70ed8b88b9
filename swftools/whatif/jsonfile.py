"""The what-if model files (sensitivity, training model, training platform): a preset name or a
JSON file, checked against its schema, with errors that name the file, line and field."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from swftools.errors import InputError, json_line
from swftools.resources import load_json, schemas_dir


def load_checked(kind: str, name_or_path: str | Path, presets: Sequence[str], folder: str,
                 schema: str) -> tuple[dict[str, Any], str, str]:
    """(the JSON object, its path, its text) of preset ``schemas/whatif/<folder>/<name>.json``
    or a file, checked against ``schemas/<schema>`` (InputError on the first problem; a
    preset is checked by the test suite, ``tests/test_whatif_jsonfile.py``, not at every load:
    jsonschema costs ~0.1 s a process)."""
    text_name = str(name_or_path)
    is_preset = text_name in presets
    path = (schemas_dir() / "whatif" / folder / f"{text_name}.json" if is_preset
            else Path(text_name))
    name = str(path)
    if not path.is_file():
        raise InputError(name, f"no such {kind} file or preset (presets: {', '.join(presets)})")
    text = path.read_text(encoding="utf-8")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(name, f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    if is_preset:
        return raw, name, text
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_json(schema))
    errors = sorted(validator.iter_errors(raw), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = list(err.absolute_path)
        value = err.instance if not isinstance(err.instance, (dict, list)) else None
        raise InputError(name, err.message, field="/".join(map(str, where)) or "(top level)",
                         line=json_line(text, where),
                         value=None if value is None else str(value),
                         expected=f"a {kind} file as schemas/{schema} describes")
    return raw, name, text
