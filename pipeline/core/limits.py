"""How much of a partner's input the tools read, and what a version folder
may hold: ``schemas/version_folder.yaml``, checked against its JSON schema
(jsonschema) when first loaded. The caps are read here, on the floor every
reader stands on; the folder rule that uses the rest is
:mod:`pipeline.store.contents`."""

from __future__ import annotations

import json

from pipeline.core.errors import ConfigError
from pipeline.core.rules import Rules, memo

RULES_FILE = "version_folder.yaml"
SCHEMA_FILE = "version_folder.schema.json"


@memo()
def document(rules: Rules) -> dict:
    """schemas/version_folder.yaml of RULES' folder (the base's, in the gate), checked."""
    import jsonschema

    data = rules.load_yaml(RULES_FILE)
    path = rules.folder / SCHEMA_FILE
    try:
        with open(path, encoding="utf-8") as fh:
            schema = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load {path}: {exc}") from exc
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        where = ".".join(str(p) for p in errors[0].path) or "<top>"
        raise ConfigError(f"{RULES_FILE}: {where}: {errors[0].message}")
    return data


def cap(rules: Rules, name: str) -> int:
    """One cap: files_per_version, bytes_per_version, rows_per_file,
    field_length, text_length or examples_per_finding (how many others a
    finding that repeats names, before it counts the rest)."""
    return document(rules)["caps"][name]


def rows_over_cap(rules: Rules, count: int, where, how: str = "rows") -> "Finding | None":  # noqa: F821
    """An ``over-cap`` finding when a file holds more than ``rows_per_file``
    rows (COUNT, as the file states or a cheap count finds it, before any row
    is read), else None."""
    limit = cap(rules, "rows_per_file")
    if count <= limit:
        return None
    from pipeline.core.findings import located

    return located("over-cap", where, f"at most {limit} rows in a file", f"{count} {how}",
                   "the file holds more rows than a partner's file may (schemas/version_folder.yaml caps): "
                   "split it over versions of its own rounds, or remove repeated rows")
