"""Readers: one module per input format, each yielding raw records and findings.

A reader module has ``NAME``, ``sniff(header_line) -> bool`` and
``read(path, display) -> ReadResult``. Add a format by adding a module and
listing it in :data:`READERS`; detection tries them in order.
"""

from __future__ import annotations

from pathlib import Path

from ..findings import finding
from . import checker_csv, results_csv
from .base import ReadResult

READERS = {m.NAME: m for m in (checker_csv, results_csv)}
FORMATS = tuple(READERS)


def detect(path: Path) -> str | None:
    """The format of a file, from its first line; None when no reader claims it."""
    if not path.is_file():
        return None
    try:
        with open(path, "rb") as fh:
            first = fh.readline(65536).decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError:
        return None
    for name, module in READERS.items():
        if module.sniff(first):
            return name
    return None


def read(path: Path, display: str, fmt: str | None = None) -> ReadResult:
    """Read a file in ``fmt`` (detected when None). Never raises for bad data."""
    fmt = fmt or detect(path)
    if fmt is None:
        out = ReadResult()
        out.findings.append(finding("unknown-format", display, "line 1",
                                    f"one of the formats {list(FORMATS)}", "no reader recognises it",
                                    "cannot detect the file's format"))
        return out
    return READERS[fmt].read(path, display)
