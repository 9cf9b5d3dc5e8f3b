"""``results-csv``: the project's own one-result-per-row template."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..findings import finding
from ..normalize import RawRecord
from .base import ReadResult, csv_rows, read_text
from .tabular import RawTable, parse_csv

NAME = "results-csv"
REQUIRED = ("submitter", "system", "accelerator", "accelerators_per_node", "nodes", "model",
            "scenario", "value", "units", "division", "availability")
OPTIONAL = ("total_accelerators", "result_id", "system_name", "round", "platform")


def sniff(header_line: str) -> bool:
    cols = {c.strip() for c in header_line.split(",")}
    return set(REQUIRED) <= cols


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
                                    f"columns {list(REQUIRED)}", f"missing {missing}",
                                    f"required column {missing[0]!r} is absent"))
        for line, _ in (rows if rows is not None else csv_rows(text)[1]):
            out.dispositions.append(_lost(display, line))
        return out
    for col in header:
        if col not in REQUIRED and col not in OPTIONAL:
            out.findings.append(finding("unexpected-column", display, f"line 1, column {col}",
                                        "a column of the results-csv template", col,
                                        "unknown column (ignored)", severity="warning"))
    if frame is not None:
        _read_columns(frame, display, out)
    else:
        _read_rows(rows, header, display, out)
    return out


def _read_columns(frame, display: str, out: ReadResult) -> None:
    """The bulk path: lines map one to one onto rows."""
    if "platform" not in frame.columns:
        frame["platform"] = frame["system"]
    lines = np.arange(2, len(frame) + 2)
    out.tables.append(RawTable(display, frame, lines, {c: c for c in frame.columns}))
    if "round" in frame.columns:
        rounds = set(frame["round"].str.strip()) - {""}
        out.round = rounds.pop() if len(rounds) == 1 else None


def _read_rows(rows, header, display: str, out: ReadResult) -> None:
    for line, fields in rows:
        if len(fields) != len(header):
            out.reject(f"{display}:{line}", [finding(
                "format-mismatch", display, f"line {line}", f"{len(header)} fields",
                f"{len(fields)} fields", "the row has the wrong number of fields")])
            continue
        values = dict(zip(header, fields))
        if "system" in values and "platform" not in values:
            values["platform"] = values["system"]
        out.records.append(RawRecord(
            display, line, values,
            {name: f"line {line}, column {name}" for name in header}))
    rounds = {r.fields.get("round", "").strip() for r in out.records} - {""}
    out.round = rounds.pop() if len(rounds) == 1 else None


def _lost(display: str, line: int):
    from .base import Disposition
    return Disposition(f"{display}:{line}", "rejected", "missing-column",
                       "the file lacks a required column")
