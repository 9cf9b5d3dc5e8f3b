"""How much of a partner's input the tools read, and what a version folder
may hold: ``schemas/version_folder.yaml``, checked against its JSON schema
when first loaded (:meth:`Rules.load_yaml`). The caps are read here, on the floor every
reader stands on; the folder rule that uses the rest is
:mod:`pipeline.store.contents`."""

from __future__ import annotations

from pipeline.core.findings import Finding, located
from pipeline.core.rules import Rules

RULES_FILE = "version_folder.yaml"


def document(rules: Rules) -> dict:
    """schemas/version_folder.yaml of RULES' folder (the base's, in the gate), checked."""
    return rules.load_yaml(RULES_FILE)


def cap(rules: Rules, name: str) -> int:
    """One cap: files_per_version, bytes_per_version, rows_per_file,
    field_length, text_length or examples_per_finding (how many others a
    finding that repeats names, before it counts the rest)."""
    return document(rules)["caps"][name]


def file_bytes(rules: Rules) -> int:
    """The largest file a tool reads whole (a results table, a published table, a log)."""
    return cap(rules, "file_bytes")


def rows_over_cap(rules: Rules, count: int, where, how: str = "rows") -> Finding | None:
    """An ``over-cap`` finding when a file holds more than ``rows_per_file``
    rows (COUNT, as the file states or a cheap count finds it, before any row
    is read), else None."""
    limit = cap(rules, "rows_per_file")
    if count <= limit:
        return None
    return located("over-cap", where, f"at most {limit} rows in a file", f"{count} {how}",
                   "the file holds more rows than a partner's file may (schemas/version_folder.yaml caps): "
                   "split it over versions of its own rounds, or remove repeated rows")
