"""``mlcommons-summary-csv``: the MLCommons submission checker's summary.csv.

Both layouts are read by column name: the current 31-column one and the
older 28-column one (no ``total_accelerators``, ``design_power_watts``,
``PrivateID``). The ``version`` column gives the round. The ``compliance``,
``errors`` and ``inferred`` columns are unreliable in real data and ignored.
``Model`` is the model the submitter ran (kept as ``used_model``). The
checker writes MLCommons' own names, so the file is the authority on its
model and accelerator names: a name the registries lack keeps its row, with
a warning ``unregistered-name``.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.readers.base import RawRecord
from pipeline.readers.base import ReadResult
from pipeline.readers.tabular import RawTable, complete_rows, open_csv, single_round

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
    "used_model": ("Model",),
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
    out = ReadResult(authoritative_names=True)
    csv_file = open_csv(path, display, REQUIRED, "the checker's summary.csv columns", out)
    if csv_file is None:
        return out
    if csv_file.frame is not None:
        _read_columns(csv_file.frame, display, out)
        return out
    columns = _columns(csv_file.header)
    for line, row in complete_rows(csv_file, display, out):
        values = {name: _pick(row, [c for c in candidates if c in row])
                  for name, candidates in COLUMN_MAP.items()}
        if "has_power" in row:
            values["power"] = "true" if row["has_power"].strip().lower() == "true" else ""
        places = {name: f"line {line}, column {col}" for name, col in columns.items()}
        out.records.append(RawRecord(display, line, values, places))
    out.round = single_round(r.fields.get("round", "") for r in out.records)
    return out


def _columns(header) -> dict[str, str]:
    """Canonical field -> the checker column its place names: the first present."""
    return {name: next((c for c in candidates if c in header), candidates[0])
            for name, candidates in COLUMN_MAP.items()}


def _pick(row: dict, present: list[str]) -> str:
    """A row's field, as the bulk path takes it: the first non-blank of the
    present columns, else the last one's text ("" when none is present)."""
    return next((row[c] for c in present if row[c].strip()), row[present[-1]] if present else "")


def _read_columns(frame, display: str, out: ReadResult) -> None:
    """The bulk path: each canonical field from the first non-empty checker column."""
    import numpy as np
    import pandas as pd

    frame = frame.astype("str")   # the columns as text (tabular.parse_csv reads most as codes)
    fields, columns = {}, _columns(frame.columns)
    for name, candidates in COLUMN_MAP.items():
        present = [c for c in candidates if c in frame.columns]
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
    out.round = single_round(table["round"])
