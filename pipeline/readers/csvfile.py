"""A partner's CSV, read one way: the csv module, row by row, as a stream. A
row with another field count than the header's is rejected on its line,
naming the field that probably holds an unquoted comma. An empty line is no row.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice

from pipeline.core import limits
from pipeline.core.rules import Rules
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.readers.base import ReadResult, read_text


@dataclass
class CsvFile:
    where: Source                               # the file
    header: list[str]                           # column names, stripped
    rows: Iterator[tuple[int, list[str]]]       # (1-based line, fields) of each row, read once
    text: str = field(default="", repr=False)   # the whole file (a bad row's hint samples the good ones)


def open_csv(rules: Rules, path, where: Source, required: tuple[str, ...], expected: str) -> tuple[ReadResult, CsvFile | None]:
    """The file's result so far, and its header and rows: None (with findings
    in the result) when it cannot be read or lacks a required column."""
    out = ReadResult()
    text, found = read_text(path, where, limits.file_bytes(rules))
    if text is None:
        out.findings.extend(found)
        return out, None
    if not text.strip():
        out.findings.append(located("empty-file", where, f"a header line ({expected}) and one row per result",
                                    "only blank lines" if text else "0 bytes", "the file is empty"))
        return out, None
    over = limits.rows_over_cap(rules, text.count("\n") - 1, where, "lines after the header")
    if over is not None:          # refused whole at once: never parsed row by row
        out.findings.append(over)
        return out, None
    header, line, rows = parse(text)
    missing = [c for c in required if c not in header]
    if not missing:
        return out, CsvFile(where, header, rows, text)
    out.findings.append(located("missing-column", where.at(line=line), expected, f"missing {missing}",
                                f"required column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                                f"absent: add {'it' if len(missing) == 1 else 'them'} to the header line"))
    out.reject_rows(where, (line for line, _ in rows), "missing-column", "the file lacks a required column")
    return out, None


def parse(text: str) -> tuple[list[str], int, Iterator[tuple[int, list[str]]]]:
    """The header (the first line not blank), its line, and (line, fields) of
    each row after it. Should the csv module fail, the rest of the file is one
    row naming the error, rejected on its line."""
    limit = max(csv.field_size_limit(), min(len(text) + 1, sys.maxsize))
    reader = csv.reader(io.StringIO(text, newline=""))
    lines = _read(reader, limit)
    header: list[str] = []
    start = 1
    try:
        for fields in lines:
            start = reader.line_num + 1
            if _blank(fields):
                continue
            header = [h.strip() for h in fields]
            break
    except csv.Error as exc:
        return [], start, iter([(start, [f"<not CSV from here on: {exc}>"])])
    return header, max(start - 1, 1), _rows(reader, lines, start)


def _read(reader, limit: int) -> Iterator[list[str]]:
    """The reader's rows, each parsed with the field limit at LIMIT, set back
    after it (the limit is the process's): a field may be as long as the bounded file."""
    while True:
        before = csv.field_size_limit(limit)
        try:
            fields = next(reader, None)
        finally:
            csv.field_size_limit(before)
        if fields is None:
            return
        yield fields


def _rows(reader, lines: Iterator[list[str]], start: int) -> Iterator[tuple[int, list[str]]]:
    try:
        for fields in lines:
            if not _blank(fields):
                yield start, fields
            start = reader.line_num + 1
    except csv.Error as exc:
        yield start, [f"<not CSV from here on: {exc}>"]


def _blank(fields: list[str]) -> bool:
    """An empty line (or one of spaces): no row at all."""
    return len(fields) < 2 and not (fields and fields[0].strip())


def complete_rows(csv_file: CsvFile, out: ReadResult) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of every row with the header's field count; the others rejected."""
    width = len(csv_file.header)
    kinds: list[bool | None] = []
    for line, fields in csv_file.rows:
        if len(fields) != width:
            if len(fields) == width + 1 and not kinds:
                kinds = column_kinds(csv_file)
            out.reject(Source(csv_file.where.file, line), [field_count(csv_file, line, fields, kinds)])
            continue
        yield line, fields


# number columns of the CSV formats (results-csv, the checker's summary.csv): what a bad row is
# lined up against when the file has no good row to learn its columns from
NUMBER_COLUMNS = frozenset({"value", "accelerators_per_node", "nodes", "total_accelerators", "Result",
                            "number_of_nodes"})
SAMPLE_ROWS = 200
_NUMBER = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")
_INTEGER, _DIGITS = re.compile(r"^\s*[+-]?\d+$"), re.compile(r"^\d+\s*$")
_THOUSANDS_TAIL = re.compile(r"^\d{3}\.\d*\s*$")   # 1,234.5 split at its thousands separator


def column_kinds(csv_file: CsvFile) -> list[bool | None]:
    """Per column: whether it holds numbers (None: unknown), from the first good rows, else the name."""
    width = len(csv_file.header)
    _, _, rows = parse(csv_file.text)
    sample = [fields for _, fields in islice((r for r in rows if len(r[1]) == width), SAMPLE_ROWS)]
    if not sample:
        return [True if name in NUMBER_COLUMNS else None for name in csv_file.header]
    columns = ([v for v in column if v.strip()] for column in zip(*sample))
    return [all(_NUMBER.match(v) for v in values) if values else None for values in columns]


def field_count(csv_file: CsvFile, line: int, fields: list[str], kinds: list[bool | None]) -> Finding:
    """A row whose field count is not the header's; with one too many, naming
    the field that probably holds an unquoted comma."""
    header, where = csv_file.header, csv_file.where.at(line=line)
    expected, found = f"{len(header)} fields, as the header", f"{len(fields)} fields"
    if len(fields) == len(header) + 1:
        at = _unquoted_comma(fields, kinds)
        if at == len(header):
            return located("format-mismatch", where.at(column=header[-1]), expected, found,
                           "the row has one field too many: a comma ends the line; remove it")
        if at is not None:
            first, second = fields[at], fields[at + 1]
            if _INTEGER.match(first) and _THOUSANDS_TAIL.match(second):
                fix = f"write {first.strip()}{second.strip()} (no thousands separator)"
            elif _INTEGER.match(first) and _DIGITS.match(second):
                fix = f"write {first.strip()}.{second.strip()}" + (
                    f" (a decimal) or {first.strip()}{second.strip()} (thousands)" if len(second.strip()) == 3 else "")
            else:
                fix = f'quote the field ("{first},{second}")'
            return located("format-mismatch", where.at(column=header[at]), expected, found,
                           f"the row has one field too many: the {header[at]} field probably holds an unquoted "
                           f"comma ({first},{second}); {fix}")
    why = ("too many fields: unquoted commas in a field?" if len(fields) > len(header)
           else "too few fields: a field missing, or a quote not closed?")
    return located("format-mismatch", where, expected, found, f"the row has {why}")


def _unquoted_comma(fields: list[str], kinds: list[bool | None]) -> int | None:
    """The i whose fields i and i+1, joined, line the row up with the columns'
    kinds best (``len(kinds)``: a comma ending the line); None on a tie."""
    def agree(row: list[str], skip: int | None = None) -> int:
        return sum(kind == bool(_NUMBER.match(value)) for j, (kind, value) in enumerate(zip(kinds, row))
                   if kind is not None and j != skip)

    def joined(i: int) -> float:
        """How well fields i and i+1 read as one field of column i."""
        first, second = fields[i], fields[i + 1]
        number_pair = bool(_INTEGER.match(first) and (_DIGITS.match(second) or _THOUSANDS_TAIL.match(second)))
        # 103,48 or 100,282 or 1,234.5
        text_pair = second.startswith(" ")                                      # "Dell, Inc."
        if kinds[i] is True:
            return 1.5 if number_pair else 0.0
        if kinds[i] is False:
            return (not number_pair) + 0.5 * text_pair
        return 0.5 * (number_pair or text_pair)

    width = len(kinds)
    scores = {i: agree(fields[:i] + [""] + fields[i + 2:], skip=i) + joined(i) for i in range(width)}
    if not fields[-1].strip():
        scores[width] = agree(fields[:-1]) + 0.5
    best = max(scores.values())
    at = [i for i, score in scores.items() if score == best]
    return at[0] if len(at) == 1 else None


def single_round(values: Iterable[object]) -> str | None:
    rounds = {str(v).strip() for v in values} - {"", "None", "nan"}
    return rounds.pop() if len(rounds) == 1 else None
