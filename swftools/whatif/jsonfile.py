"""The what-if model files (sensitivity, training model, training platform): a preset name or a
JSON file, checked against its schema, with errors that name the file, line and field."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from swftools.errors import InputError
from swftools.resources import load_json, schemas_dir


def line_of(text: str, *needles: str) -> int | None:
    """The line of the last of ``needles`` found in order in ``text`` (a JSON error locator)."""
    pos, found = 0, None
    for needle in needles:
        i = text.find(needle, pos)
        if i < 0:
            break
        pos, found = i + len(needle), i
    return None if found is None else text.count("\n", 0, found) + 1


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
        parts = [str(p) for p in err.absolute_path]
        value = err.instance if not isinstance(err.instance, (dict, list)) else None
        raise InputError(name, err.message, field="/".join(parts) or "(top level)",
                         line=line_of(text, *(f'"{p}"' for p in parts if not p.isdigit())),
                         value=None if value is None else str(value),
                         expected=f"a {kind} file as schemas/{schema} describes")
    return raw, name, text
