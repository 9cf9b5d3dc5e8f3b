"""A partner's CSV, read one way: the standard library's csv module, row by
row, as a stream (a file of a million rows is never held as rows).

:func:`open_csv` reads the file and checks its header; :func:`complete_rows`
then gives each row that has the header's field count and rejects any other
on its line. An empty line is no row; a line of empty fields is a row whose
values are missing."""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pipeline.core.findings import located
from pipeline.core.model import Source
from pipeline.readers.base import Disposition, ReadResult, read_text


@dataclass
class CsvFile:
    where: Source                               # the file
    header: list[str]                           # column names, stripped
    rows: Iterator[tuple[int, list[str]]]       # (1-based line, fields) of each row, read once


def open_csv(path, where: Source, required: tuple[str, ...], expected: str, out: ReadResult) -> CsvFile | None:
    """The file's header and rows; None (with findings, and a disposition per
    row in ``out``) when the file cannot be read or lacks a required column."""
    text, found = read_text(path, where)
    if text is None:
        out.findings.extend(found)
        return None
    header, rows = parse(text)
    missing = [c for c in required if c not in header]
    if not missing:
        return CsvFile(where, header, rows)
    out.findings.append(located("missing-column", where.at(line=1), expected, f"missing {missing}",
                                f"required column {missing[0]!r} is absent"))
    out.dispositions.extend(Disposition(f"{where.file}:{line}", "rejected", "missing-column",
                                        "the file lacks a required column") for line, _ in rows)
    return None


def parse(text: str) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """The header and (line, fields) of each row after it, as they are read.

    A field may be as long as the file (the csv module's default limit is
    128 KiB, and the file is already bounded). Should the csv module still
    fail, the rest of the file becomes one row of one field naming the
    error, so that the reader rejects it on its line (wrong number of
    fields) instead of raising."""
    csv.field_size_limit(max(csv.field_size_limit(), min(len(text) + 1, sys.maxsize)))
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] = []
    start = 1
    try:
        for fields in reader:
            start = reader.line_num + 1
            if _blank(fields):
                continue
            header = [h.strip() for h in fields]
            break
    except csv.Error as exc:
        return [], iter([(start, [f"<not CSV from here on: {exc}>"])])
    return header, _rows(reader, start)


def _rows(reader, start: int) -> Iterator[tuple[int, list[str]]]:
    try:
        for fields in reader:
            if not _blank(fields):
                yield start, fields
            start = reader.line_num + 1
    except csv.Error as exc:
        yield start, [f"<not CSV from here on: {exc}>"]


def _blank(fields: list[str]) -> bool:
    """An empty line (or one of spaces): no row at all."""
    return len(fields) < 2 and not (fields and fields[0].strip())


def complete_rows(csv_file: CsvFile, out: ReadResult) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of every row with the header's field count; the others
    are rejected in ``out``."""
    width = len(csv_file.header)
    where = csv_file.where
    for line, fields in csv_file.rows:
        if len(fields) != width:
            out.reject(f"{where.file}:{line}", [located(
                "format-mismatch", where.at(line=line), f"{width} fields", f"{len(fields)} fields",
                "the row has the wrong number of fields")])
            continue
        yield line, fields


def single_round(values: Iterable[object]) -> str | None:
    """The round a file states, when all its rows state the same one."""
    rounds = {str(v).strip() for v in values} - {"", "None", "nan"}
    return rounds.pop() if len(rounds) == 1 else None
