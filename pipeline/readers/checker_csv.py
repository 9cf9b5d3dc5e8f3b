"""``mlcommons-summary-csv``: the MLCommons submission checker's summary.csv.

Both layouts are read by column name: the current 31-column one and the
older 28-column one (no ``total_accelerators``, ``design_power_watts``,
``PrivateID``). The ``version`` column gives the round. The ``compliance``,
``errors`` and ``inferred`` columns are unreliable in real data and ignored.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..findings import finding
from ..normalize import RawRecord
from .base import Disposition, ReadResult, csv_rows, read_text
from .tabular import RawTable, parse_csv

NAME = "mlcommons-summary-csv"
REQUIRED = ("Organization", "Availability", "Division", "SystemName", "Platform", "Model",
            "Scenario", "Result", "number_of_nodes", "accelerator_model_name",
            "accelerators_per_node", "version", "Units")
# canonical field -> checker column (first present wins)
COLUMN_MAP = {
    "submitter": ("Organization",),
    "availability": ("Availability",),
    "division": ("Division",),
    "system_name": ("SystemName",),
    "system": ("Platform",),
    "platform": ("Platform",),
    "model": ("MlperfModel", "Model"),
    "scenario": ("Scenario",),
    "value": ("Result",),
    "nodes": ("number_of_nodes",),
    "accelerator": ("accelerator_model_name",),
    "accelerators_per_node": ("accelerators_per_node",),
    "total_accelerators": ("total_accelerators",),
    "round": ("version",),
    "units": ("Units",),
}


def sniff(header_line: str) -> bool:
    cols = {c.strip().strip('"') for c in header_line.split(",")}
    return {"Organization", "Platform", "MlperfModel", "Result"} <= cols


def read(path: Path, display: str) -> ReadResult:
    out = ReadResult()
    text, found = read_text(path, display)
    if text is None:
        out.findings.extend(found)
        return out
    frame = parse_csv(text)
    header, rows = (list(frame.columns), None) if frame is not None else csv_rows(text)
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        out.findings.append(finding("missing-column", display, "line 1 (header)",
                                    "the checker's summary.csv columns", f"missing {missing}",
                                    f"required column {missing[0]!r} is absent"))
        for line, _ in (rows if rows is not None else csv_rows(text)[1]):
            out.dispositions.append(Disposition(f"{display}:{line}", "rejected",
                                                "missing-column", "the file lacks a required column"))
        return out
    if frame is not None:
        _read_columns(frame, display, out)
        return out
    for line, fields in rows:
        if len(fields) != len(header):
            out.reject(f"{display}:{line}", [finding(
                "format-mismatch", display, f"line {line}", f"{len(header)} fields",
                f"{len(fields)} fields", "the row has the wrong number of fields")])
            continue
        row = dict(zip(header, fields))
        values, places = {}, {}
        for name, columns in COLUMN_MAP.items():
            for col in columns:
                if col in row and row[col].strip():
                    values[name], places[name] = row[col], f"line {line}, column {col}"
                    break
            else:
                places[name] = f"line {line}, column {columns[0]}"
        if str(row.get("has_power", "")).strip().lower() == "true":
            values["power"] = "true"
        out.records.append(RawRecord(display, line, values, places))
    rounds = {r.fields.get("round") for r in out.records if r.fields.get("round")}
    out.round = rounds.pop() if len(rounds) == 1 else None
    return out


def _read_columns(frame, display: str, out: ReadResult) -> None:
    """The bulk path: each canonical field from the first non-empty checker column."""
    fields, columns = {}, {}
    for name, candidates in COLUMN_MAP.items():
        present = [c for c in candidates if c in frame.columns]
        columns[name] = present[0] if present else candidates[0]
        if not present:
            fields[name] = pd.Series("", index=frame.index, dtype="str")
            continue
        value = frame[present[0]]
        for other in present[1:]:
            value = value.where(value.str.strip() != "", frame[other])
        fields[name] = value
    if "has_power" in frame.columns:
        fields["power"] = frame["has_power"].str.strip().str.lower().where(
            lambda v: v == "true", "")
    table = pd.DataFrame(fields)
    out.tables.append(RawTable(display, table, np.arange(2, len(table) + 2), columns))
    rounds = set(table["round"].str.strip()) - {""}
    out.round = rounds.pop() if len(rounds) == 1 else None
