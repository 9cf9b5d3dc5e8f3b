"""Why no reader recognises a file, said against the format it most resembles:
the columns its header lacks, a separator other than a comma, or no content."""

from __future__ import annotations

import csv
from pathlib import Path

from pipeline.core.findings import Finding, located
from pipeline.core.model import Source

SEPARATORS = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "vertical bars"}
RESEMBLES = 0.5   # a header with at least this share of a format's columns resembles it


def undetected(path: Path, where: Source, head: str | None, formats: list[str],
               csv_formats: dict[str, tuple[str, ...]]) -> Finding:
    """The finding for a file no reader recognises (``head``: its first bytes, None: unreadable)."""
    if head is None or not path.is_file():
        return located("unknown-format", where.at(line=1), f"one of the formats {formats}",
                       "no reader recognises it", "cannot detect the file's format")
    if not head.strip():
        return _empty(path, where, head)
    text = head.lstrip()
    if text.startswith(("[", "{")):
        return located("unknown-format", where.at(line=1),
                       "mlcommons-summary-json: a JSON list of results with the key Performance_Result",
                       "a JSON list without Performance_Result" if text.startswith("[") else "a JSON object",
                       "cannot detect the file's format: JSON, but not MLCommons' published summary")
    if path.suffix.lower() == ".parquet":
        return located("unknown-format", where.at(line=1), "a Parquet file (it starts with PAR1)",
                       repr(head[:4]), "cannot detect the file's format: named .parquet, but not Parquet")
    return _csv(where, head, formats, csv_formats)


def _empty(path: Path, where: Source, head: str) -> Finding:
    fmt = {".json": "mlcommons-summary-json", ".parquet": "parquet"}.get(path.suffix.lower(), "results-csv")
    expected = ("a header line (the results-csv columns) and one result per line" if fmt == "results-csv"
                else f"a {fmt} file")
    return located("empty-file", where, expected, "only blank lines" if head else "0 bytes",
                   f"the file is empty: nothing to read as {fmt}")


def _csv(where: Source, head: str, formats: list[str], csv_formats: dict[str, tuple[str, ...]]) -> Finding:
    number, line = next((n, text) for n, text in enumerate(head.split("\n"), 1) if text.strip())
    at = where.at(line=number)
    best = max(_candidates(line, csv_formats), key=lambda c: c[0], default=None)
    if best is None:   # no separator splits the line (a NUL byte, say)
        return located("unknown-format", at, f"one of the formats {formats}",
                       "a first line that is not CSV text", "cannot detect the file's format")
    (share, _, _), sep, fmt, header = best
    needed = csv_formats[fmt]
    if share < RESEMBLES:
        closest = f"; closest: {fmt}, {round(share * len(needed))} of its {len(needed)} columns" if share else ""
        return located("unknown-format", at, f"one of the formats {formats}",
                       f"a first line matching no known header{closest}",
                       "cannot detect the file's format: its first line is not a header of a known format")
    if sep != ",":
        return located("wrong-separator", at, "fields separated by commas (,)",
                       f"fields separated by {SEPARATORS[sep]} ({sep!r})",
                       f"the file looks like {fmt} with its fields separated by {SEPARATORS[sep]}: save it as "
                       "comma-separated values, with numbers written with a decimal point (103.48)")
    missing = [c for c in needed if c not in header]
    if not missing:
        return located("unknown-format", at, f"the {fmt} header, names unquoted", line.strip(),
                       f"cannot detect the file's format: the header has every {fmt} column but is not plain "
                       f"text; write it without quotes, or give --input-format {fmt}")
    near = [h for h in header if h not in needed and h.casefold() in {m.casefold() for m in missing}]
    found = f"no column {', '.join(missing)}" + (
        f" (the header has {', '.join(near)}: column names are case-sensitive)" if near else "")
    them = "it" if len(missing) == 1 else "them"
    return located("missing-column", at, f"the {fmt} columns {', '.join(needed)}", found,
                   f"cannot detect the file's format: it looks like {fmt} without its "
                   f"column{'s' if len(missing) > 1 else ''} {', '.join(missing)}: add {them} to the header line")


def _candidates(line: str, csv_formats: dict[str, tuple[str, ...]]):
    """((share of a format's columns, ranks), separator, format, header); the comma and the first format win ties."""
    for rank, sep in enumerate(SEPARATORS):
        try:
            header = [h.strip() for h in next(csv.reader([line], delimiter=sep))]
        except (csv.Error, StopIteration):
            continue
        folded = {h.casefold() for h in header}
        for order, (fmt, needed) in enumerate(csv_formats.items()):
            share = sum(c.casefold() in folded for c in needed) / len(needed)
            yield (share, -rank, -order), sep, fmt, header

