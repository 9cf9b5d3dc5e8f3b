"""Tabular files read as columns: the bulk form of a reader's records.

A CSV whose lines map one to one onto rows (no blank lines, no line break
inside a quoted field, every row with the header's field count) is parsed in
one go into text columns; :mod:`pipeline.ingest.bulk` then takes the per-row
decisions once per distinct combination of descriptive fields. Any other CSV
goes through the row-by-row path, which gives the exact finding for every row.
Both paths produce the same rows.

Without columns (:func:`rows_only`: the gate's small-table path), no table
library is imported: a CSV whose lines map one to one onto rows gives every
row as the columns would (an all-blank row included), any other CSV goes the
row-by-row path as above.
"""

from __future__ import annotations

import io
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from pipeline.readers.base import RawRecord

_COLUMNS: ContextVar[bool] = ContextVar("mlrepro_columns", default=True)


@contextmanager
def rows_only():
    """Within: readers hand over records, never pandas columns (same rows, same findings)."""
    token = _COLUMNS.set(False)
    try:
        yield
    finally:
        _COLUMNS.reset(token)


def columns_allowed() -> bool:
    return _COLUMNS.get()


@dataclass
class RawTable:
    """Records of one file as text columns; ``frame`` has canonical field names."""

    file: str
    frame: "pd.DataFrame"        # canonical field -> text ("" where absent)
    lines: "np.ndarray"          # 1-based line of each row
    columns: dict[str, str]      # canonical field -> the file's column name (for places)

    def __len__(self) -> int:
        return len(self.frame)

    def record(self, i: int) -> RawRecord:
        """Row ``i`` as a RawRecord, for the row-by-row path."""
        if not hasattr(self, "_lists"):  # columns as Python lists, once: iloc per row is slow
            self._lists = {c: self.frame[c].tolist() for c in self.frame.columns}
        line = int(self.lines[i])
        fields = {k: values[i] for k, values in self._lists.items()}
        places = {k: f"line {line}, column {c}" for k, c in self.columns.items()}
        return RawRecord(self.file, line, fields, places)


class RecordTable(RawTable):
    """Records of many files (a submission tree gives one per result) as text
    columns, for the bulk path: each row keeps its own file, and its record
    as the reader made it (the row path's findings name its exact places)."""

    def __init__(self, records: list[RawRecord]):
        import numpy as np
        import pandas as pd

        names = list(dict.fromkeys(name for r in records for name in r.fields))
        frame = pd.DataFrame({name: [_cell(r.fields.get(name)) for r in records] for name in names},
                             index=pd.RangeIndex(len(records)))
        super().__init__("", frame, np.array([r.line for r in records], dtype=np.int64), {})
        self.files = [r.file for r in records]
        self.records = records

    def record(self, i: int) -> RawRecord:
        return self.records[i]


def _cell(value: object) -> str:
    """A field as text, "" where absent (RawRecord.get reads both as missing)."""
    return "" if value is None else str(value)


def _one_to_one(text: str) -> bool:
    return not ("\r" in text or "\n\n" in text.rstrip("\n") or not text.strip())


def _expected_rows(text: str) -> int:
    newlines = text.count("\n")
    return newlines - 1 if text.endswith("\n") else newlines


# columns with a value per row (few repeats): parsed as text, not as codes
PLAIN = frozenset({"value", "Result"})


def parse_csv(text: str) -> "pd.DataFrame | None":
    """All rows as text columns when lines map one to one onto rows, else None.

    Arrow's CSV reader parses the file (on every core) straight into
    dictionary-encoded columns (pandas categoricals of text): a column of a
    million rows and a few hundred distinct values is read as codes once,
    and :mod:`pipeline.ingest.bulk` decides per distinct value without factorising
    it again. The columns in :data:`PLAIN` stay text. The cells are the
    text pandas' reader gives (no missing value: an empty cell is "")."""
    if not _one_to_one(text):
        return None
    data = text.encode("utf-8")
    try:
        frame = _arrow_csv(data)
    except Exception:  # any parse problem: the row path reports it precisely
        return None
    if frame is None:   # a header Arrow names differently from pandas: pandas' reader
        import pandas as pd

        try:
            frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, engine="pyarrow")
        except Exception:
            return None
    if len(frame) != _expected_rows(text) or len(frame) == 0:
        return None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _arrow_csv(data: bytes) -> "pd.DataFrame | None":
    """The frame pandas' ``read_csv(dtype=str, keep_default_na=False)`` gives,
    read by Arrow, every column but :data:`PLAIN` as a categorical; None
    for a header with an empty or repeated name (pandas renames those)."""
    import csv

    import pyarrow as pa
    from pyarrow import csv as pacsv

    end = data.find(b"\n")
    names = next(csv.reader([(data if end < 0 else data[:end]).decode("utf-8")]), [])
    if not names or "" in names or len(set(names)) != len(names):
        return None
    coded = pa.dictionary(pa.int32(), pa.large_string())
    table = pacsv.read_csv(io.BytesIO(data), convert_options=pacsv.ConvertOptions(
        column_types={n: pa.large_string() if n.strip() in PLAIN else coded for n in names},
        strings_can_be_null=False, quoted_strings_can_be_null=False))
    if table.column_names != names or any(not (pa.types.is_dictionary(t) or pa.types.is_large_string(t))
                                          for t in table.schema.types):
        return None
    return table.to_pandas()


def parse_rows(text: str) -> tuple[list[str], list[tuple[int, list[str]]]] | None:
    """Without a table library: header and (line, fields) of every row, an
    all-blank one included, when lines map one to one onto rows and every row
    has the header's field count (what :func:`parse_csv` takes), else None."""
    if not _one_to_one(text):
        return None
    import csv

    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
    try:
        parsed = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error:
        return None
    if len(parsed) - 1 != _expected_rows(text) or len(parsed) < 2 or \
            any(len(fields) != len(parsed[0]) for fields in parsed):
        return None
    return [h.strip() for h in parsed[0]], [(i + 2, fields) for i, fields in enumerate(parsed[1:])]


@dataclass
class CsvFile:
    """A CSV opened for a reader: columns when the bulk path applies, else rows."""

    frame: "pd.DataFrame | None"
    header: list[str]
    rows: list[tuple[int, list[str]]] | None


def open_csv(path, display: str, required: tuple[str, ...], expected: str, out) -> CsvFile | None:
    """Read, check the header; None (with findings and one disposition per row in
    ``out``) when the file cannot be read or lacks a required column."""
    from pipeline.core.findings import finding
    from pipeline.readers.base import Disposition, csv_rows, read_text

    text, found = read_text(path, display)
    if text is None:
        out.findings.extend(found)
        return None
    frame = parse_csv(text) if columns_allowed() else None
    parsed = None if columns_allowed() else parse_rows(text)
    header, rows = (list(frame.columns), None) if frame is not None else (parsed or csv_rows(text))
    missing = [c for c in required if c not in header]
    if not missing:
        return CsvFile(frame, header, rows)
    out.findings.append(finding("missing-column", display, "line 1 (header)", expected,
                                f"missing {missing}", f"required column {missing[0]!r} is absent"))
    for line, _ in (rows if rows is not None and parsed is None else csv_rows(text)[1]):
        out.dispositions.append(Disposition(f"{display}:{line}", "rejected", "missing-column",
                                            "the file lacks a required column"))
    return None


def complete_rows(csv_file: CsvFile, display: str, out):
    """(line, {column: text}) of every row with the header's field count; the
    others are rejected in ``out``."""
    from pipeline.core.findings import finding

    width = len(csv_file.header)
    for line, fields in csv_file.rows:
        if len(fields) != width:
            out.reject(f"{display}:{line}", [finding(
                "format-mismatch", display, f"line {line}", f"{width} fields",
                f"{len(fields)} fields", "the row has the wrong number of fields")])
            continue
        yield line, dict(zip(csv_file.header, fields))


def single_round(values) -> str | None:
    """The round a file states, when all its rows state the same one."""
    if hasattr(values, "unique"):   # a column: each distinct value once, not a set over every row
        values = values.unique()
    rounds = {str(v).strip() for v in values} - {"", "None", "nan"}
    return rounds.pop() if len(rounds) == 1 else None
