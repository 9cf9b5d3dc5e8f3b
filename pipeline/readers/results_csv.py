"""``results-csv``: the project's own one-result-per-row template.

A partner types this file, so every model and accelerator name must be in the
registries (an unknown one is an error, never a guess)."""

from __future__ import annotations

from pathlib import Path

from pipeline.core.findings import finding
from pipeline.readers.base import RawRecord
from pipeline.readers.base import ReadResult
from pipeline.readers.tabular import RawTable, complete_rows, open_csv, single_round

NAME = "results-csv"
REQUIRED = ("submitter", "system", "accelerator", "accelerators_per_node", "nodes", "model",
            "scenario", "value", "units", "division", "availability")
OPTIONAL = ("total_accelerators", "result_id", "system_name", "round", "platform", "used_model")


def sniff(header_line: str) -> bool:
    cols = {c.strip() for c in header_line.split(",")}
    return set(REQUIRED) <= cols


def read(path: Path, display: str) -> ReadResult:
    out = ReadResult()
    csv_file = open_csv(path, display, REQUIRED, f"columns {list(REQUIRED)}", out)
    if csv_file is None:
        return out
    for col in csv_file.header:
        if col not in REQUIRED and col not in OPTIONAL:
            out.findings.append(finding("unexpected-column", display, f"line 1, column {col}",
                                        "a column of the results-csv template", col,
                                        "unknown column (ignored)", severity="warning"))
    frame = csv_file.frame
    if frame is not None:   # the bulk path: lines map one to one onto rows
        import numpy as np

        if "platform" not in frame.columns:
            frame["platform"] = frame["system"]
        out.tables.append(RawTable(display, frame, np.arange(2, len(frame) + 2),
                                   {c: c for c in frame.columns}))
        out.round = single_round(frame["round"]) if "round" in frame.columns else None
        return out
    for line, values in complete_rows(csv_file, display, out):
        values.setdefault("platform", values["system"])
        out.records.append(RawRecord(display, line, values,
                                     {name: f"line {line}, column {name}" for name in values}))
    out.round = single_round(r.fields.get("round", "") for r in out.records)
    return out
