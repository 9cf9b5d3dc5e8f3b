"""``parquet``: a table in Apache Parquet with the results-csv template's
columns; the canonical table that ``mlrepro ingest -o table.parquet`` writes
is one, so the pipeline's own output can be read back in.

Every column is read as text (numbers as Arrow writes them, missing values
as empty) and goes through the same normalisation and checks as a CSV row;
row N of the file is placed as ``line N``. The canonical table's own columns
(``status``, ``source``, ``composition``, ``submission_version``) are derived
again by the ingest, so they are not read (the status is the one the caller
gives, as for any raw file); its ``accelerator_variant`` (``MI300X 192GB``)
is read as the accelerator, which it names more precisely, so the variant
survives the round trip; any other unknown column is a warning. A file
that is not Parquet, is over the size limit, or holds a column that is not
plain values (a list, a struct) is a finding, never an exception.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.core.findings import finding
from pipeline.readers.base import Disposition, ReadResult, max_file_bytes, read_bytes
from pipeline.readers.results_csv import OPTIONAL, REQUIRED

NAME = "parquet"
MAGIC = "PAR1"
DERIVED = ("status", "source", "composition", "submission_version")   # the canonical table's own
VARIANT = "accelerator_variant"   # the canonical table's: read as the accelerator


def sniff(header_line: str) -> bool:
    return header_line.startswith(MAGIC)


def read(path: Path, display: str) -> ReadResult:
    out = ReadResult()
    data, found = read_bytes(path, display, max_file_bytes())
    if data is None:
        out.findings.extend(found)
        return out
    table = _table(data, display, out)
    if table is None:
        return out
    missing = [c for c in REQUIRED if c not in table.column_names]
    if missing:
        out.findings.append(finding("missing-column", display, "schema", f"columns {list(REQUIRED)}",
                                    f"missing {missing}", f"required column {missing[0]!r} is absent"))
        out.dispositions.extend(Disposition(f"{display}:{n}", "rejected", "missing-column",
                                            "the file lacks a required column")
                                for n in range(1, table.num_rows + 1))
        return out
    for col in table.column_names:
        if col not in REQUIRED and col not in OPTIONAL and col not in DERIVED and col != VARIANT:
            out.findings.append(finding("unexpected-column", display, f"schema, column {col}",
                                        "a column of the results-csv template", col,
                                        "unknown column (ignored)", severity="warning"))
    frame = _text_columns(table, [c for c in (*REQUIRED, *OPTIONAL, VARIANT) if c in table.column_names],
                          display, out)
    if frame is None:
        return out
    if VARIANT in frame.columns:
        variant = frame.pop(VARIANT)
        frame["accelerator"] = variant.where(variant.fillna("").str.strip() != "", frame["accelerator"])
    if "platform" not in frame.columns:
        frame["platform"] = frame["system"]
    import numpy as np

    from pipeline.readers.tabular import RawTable, single_round

    out.tables.append(RawTable(display, frame, np.arange(1, len(frame) + 1), {c: c for c in frame.columns}))
    out.round = single_round(frame["round"]) if "round" in frame.columns else None
    return out


def _table(data: bytes, display: str, out: ReadResult):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        out.findings.append(finding("format-mismatch", display, "whole file", "an Apache Parquet file",
                                    str(exc)[:200], "the file does not read as Parquet"))
        return None


def _text_columns(table, columns: list[str], display: str, out: ReadResult):
    """The columns as text (empty where missing), or None with a finding per
    column that is not plain values."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    texts, bad = {}, []
    for name in columns:
        column = table.column(name)
        if pa.types.is_nested(column.type):
            bad.append((name, column.type))
            continue
        try:
            text = pc.cast(column, pa.string())
        except (pa.ArrowException, ValueError):
            bad.append((name, column.type))
            continue
        texts[name] = pc.fill_null(text, "").to_pylist()
    for name, kind in bad:
        out.findings.append(finding("format-mismatch", display, f"schema, column {name}",
                                    "text or numbers", str(kind), "a column holds nested values"))
    if bad:
        out.dispositions.extend(Disposition(f"{display}:{n}", "rejected", "format-mismatch",
                                            "the file holds a column of nested values")
                                for n in range(1, table.num_rows + 1))
        return None
    return pd.DataFrame(texts, dtype=str)
