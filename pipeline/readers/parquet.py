"""``parquet``: a table in Apache Parquet with the results-csv template's
columns, so that ``mlrepro ingest -o table.parquet`` can be read back in. Every
column is read as text and checked as a CSV row is. The canonical table's own
columns are derived again, not read; its ``accelerator_variant`` is read as the
accelerator, so the variant survives the round trip.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.core import limits
from pipeline.core.rules import Rules
from pipeline.core.findings import located
from pipeline.core.model import Source
from pipeline.readers.base import Layout, RawRecord, ReadResult, as_source, read_bytes
from pipeline.readers.csvfile import single_round
from pipeline.readers.results_csv import OPTIONAL, REQUIRED, unexpected_column

NAME = "parquet"
MAGIC = "PAR1"
DERIVED = ("status", "source", "file", "line", "composition", "submission_version")   # the canonical table's own
VARIANT = "accelerator_variant"   # the canonical table's: read as the accelerator


def sniff(head: str) -> bool:
    return head.startswith(MAGIC)


def read(path: Path, where: Source | str, rules: Rules, round_: str | None = None) -> ReadResult:
    where = as_source(where)
    out = ReadResult()
    data, found = read_bytes(path, where, limits.file_bytes(rules))
    if data is None:
        out.findings.extend(found)
        return out
    table = _table(rules, data, where, out)
    if table is None:
        return out
    missing = [c for c in REQUIRED if c not in table.column_names]
    if missing:
        out.findings.append(located("missing-column", where, f"columns {list(REQUIRED)}",
                                    f"missing {missing}", f"required column {missing[0]!r} is absent"))
        out.reject_rows(where, range(1, table.num_rows + 1), "missing-column", "the file lacks a required column")
        return out
    out.findings += [unexpected_column(where.at(column=col), col) for col in table.column_names
                     if col not in (*REQUIRED, *OPTIONAL, *DERIVED, VARIANT)]
    names = [c for c in (*REQUIRED, *OPTIONAL, VARIANT) if c in table.column_names]
    if not _plain_columns(table, names, where, out):
        return out
    out.records = _records(where, table.select(names), out)
    return out


BATCH_ROWS = 65_536   # rows made text at a time: a large table is never held as Python strings


def _records(where: Source, table, out: ReadResult):
    import pyarrow as pa
    import pyarrow.compute as pc

    names = table.column_names
    plain, by_variant = Layout(), Layout({"accelerator": VARIANT})
    rounds: set[str] = set()
    n = 0
    for batch in table.to_batches(max_chunksize=BATCH_ROWS):
        columns = [pc.fill_null(pc.cast(column, pa.string()), "").to_pylist() for column in batch.columns]
        for values in zip(*columns):
            n += 1
            fields = dict(zip(names, values))
            variant = fields.pop(VARIANT, "")
            layout = plain
            if variant.strip():
                fields["accelerator"], layout = variant, by_variant
            fields.setdefault("platform", fields["system"])
            rounds.add(fields.get("round", ""))
            yield RawRecord(where, None, fields, layout, row=n)
    out.round = single_round(rounds)


def _table(rules: Rules, data: bytes, where: Source, out: ReadResult):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # the row count from the file's metadata, before a column is decoded: 7 KB can hold 100,000 rows
        over = limits.rows_over_cap(rules, pq.ParquetFile(pa.BufferReader(data)).metadata.num_rows, where,
                                    "rows (the file's metadata)")
        if over is not None:
            out.findings.append(over)
            return None
        return pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        out.findings.append(located("format-mismatch", where, "an Apache Parquet file",
                                    str(exc)[:200], "the file does not read as Parquet"))
        return None


def _plain_columns(table, columns: list[str], where: Source, out: ReadResult) -> bool:
    """Whether every column reads as text; else a finding per column, and every row rejected."""
    import pyarrow as pa
    import pyarrow.compute as pc

    bad = []
    for name in columns:
        column = table.column(name)
        if pa.types.is_nested(column.type):
            bad.append((name, column.type))
            continue
        try:
            pc.cast(column, pa.string())
        except (pa.ArrowException, ValueError):
            bad.append((name, column.type))
    for name, kind in bad:
        out.findings.append(located("format-mismatch", where.at(column=name),
                                    "text or numbers", str(kind), "a column holds nested values"))
    if bad:
        out.reject_rows(where, range(1, table.num_rows + 1), "format-mismatch",
                        "the file holds a column of nested values")
    return not bad
