"""The canonical table's schema (``schemas/results.v2.yaml``) checked on plain
rows, without pandas or pandera: the gate's small-table path.

It reads the same YAML that :mod:`pipeline.ingest.table` gives pandera and applies
the same checks with the same outcome: each failure is a ``schema-violation``
finding naming the column, pandera's text of the check
(``greater_than(0)``, ``isin([...])``, ``not_nullable``) and the failing
value, in pandera's order (column by column, the null check first, then
the checks in order, rows in table order); a row with any failure is
rejected. A check this module does not know makes :func:`spec` return None:
the caller then lets pandera decide (nothing is skipped silently).
"""

from __future__ import annotations

import math
import re

from pipeline.core import rules
from pipeline.core.errors import ConfigError
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source

COLUMNS = (
    "round", "submitter", "system", "system_name", "accelerator", "accelerator_variant",
    "composition", "accelerators_per_node", "nodes", "total_accelerators", "model", "used_model",
    "scenario",
    "value", "units", "division", "availability", "status", "result_id", "source",
    "submission_version",
)
INT_COLUMNS = ("accelerators_per_node", "nodes", "total_accelerators")


def _check(name: str, arg):
    """(pandera's text of the check, test of a non-null value), or None."""
    if name == "str_matches" and isinstance(arg, str):
        pattern = re.compile(arg)
        return f"str_matches('{arg}')", lambda v: pattern.match(str(v)) is not None
    if name == "str_length" and isinstance(arg, dict) and set(arg) <= {"min_value", "max_value"}:
        low, high = arg.get("min_value"), arg.get("max_value")
        return (f"str_length({low}, {high})",
                lambda v: (low is None or len(str(v)) >= low) and (high is None or len(str(v)) <= high))
    if name == "isin" and isinstance(arg, list):
        allowed = set(arg)
        return f"isin({arg!r})", lambda v: v in allowed
    if name in ("greater_than", "greater_than_or_equal_to", "less_than", "less_than_or_equal_to") \
            and isinstance(arg, (int, float)) and not isinstance(arg, bool):
        test = {"greater_than": lambda v: v > arg, "greater_than_or_equal_to": lambda v: v >= arg,
                "less_than": lambda v: v < arg, "less_than_or_equal_to": lambda v: v <= arg}[name]
        return f"{name}({arg})", test
    return None


@rules.cached()
def spec() -> list[tuple[str, bool, list]] | None:
    """(column, nullable, [(check text, test)]) per column, in the schema's
    order; None when the schema uses a check or option this module does not know."""
    data = rules.load_yaml(rules.SCHEMA_FILE)
    columns = data.get("columns") or {}
    if tuple(columns) != COLUMNS:
        raise ConfigError(f"{rules.SCHEMA_FILE}: columns {list(columns)} differ from {list(COLUMNS)}")
    if set(data) - {"schema_type", "version", "columns", "strict", "ordered", "coerce"} or data.get("coerce"):
        return None
    out = []
    for name, col in columns.items():
        col = col or {}
        if set(col) - {"dtype", "nullable", "checks", "title", "description"}:
            return None
        checks = []
        for check, arg in (col.get("checks") or {}).items():
            made = _check(check, arg)
            if made is None:
                return None
            checks.append(made)
        out.append((name, bool(col.get("nullable", False)), checks))
    return out


def _null(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def validate(rows: list[dict], columns: list) -> tuple[list[dict], list[dict], list[Finding]]:
    """(accepted, rejected, findings) of rows against ``columns`` (:func:`spec`)."""
    found: list[Finding] = []
    bad: set[int] = set()
    for name, nullable, checks in columns:
        failures = []
        if not nullable:
            failures += [(i, "not_nullable", math.nan) for i, r in enumerate(rows) if _null(r.get(name))]
        for text, test in checks:
            failures += [(i, text, r[name]) for i, r in enumerate(rows)
                         if not _null(r.get(name)) and not test(r[name])]
        for i, text, value in failures:
            bad.add(i)
            where = Source.from_cell(rows[i]["source"])
            found.append(located("schema-violation", Source(where.file, where.line, column=name),
                                 text, value, "the row fails the canonical table schema"))
    return ([r for i, r in enumerate(rows) if i not in bad], [r for i, r in enumerate(rows) if i in bad],
            found)
