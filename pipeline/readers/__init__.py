"""Readers: one module per input format, each yielding raw records and findings.

A reader module has ``NAME``, ``read(path, display) -> ReadResult`` and a way
to be recognised: ``sniff(first_line)``, or ``sniff_head(first_64_KiB)`` for
formats one line does not reveal, or ``sniff_dir(folder)`` for a reader of
folders. A reader that takes the round (``read(..., round_=...)``) is given
the one the caller knows. Add a format by adding a module and listing it in
:data:`READERS`; detection tries them in order.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from ..findings import finding
from . import checker_csv, results_csv, summary_json, tree
from .base import ReadResult

READERS = {m.NAME: m for m in (checker_csv, results_csv, summary_json, tree)}
FORMATS = tuple(READERS)
HEAD_BYTES = 65536


def detect(path: Path) -> str | None:
    """The format of a file (from its first line, or its first 64 KiB) or of a
    folder; None when no reader claims it."""
    if path.is_dir():
        return next((name for name, m in READERS.items()
                     if hasattr(m, "sniff_dir") and m.sniff_dir(path)), None)
    if not path.is_file():
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES).decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError:
        return None
    first = head.split("\n", 1)[0]
    for name, module in READERS.items():
        sniff_head = getattr(module, "sniff_head", None)
        if sniff_head(head) if sniff_head else module.sniff(first):
            return name
    return None


def read(path: Path, display: str, fmt: str | None = None, round_: str | None = None) -> ReadResult:
    """Read a file or folder in ``fmt`` (detected when None). Never raises for bad data."""
    fmt = fmt or detect(path)
    if fmt is None:
        out = ReadResult()
        out.findings.append(finding("unknown-format", display, "line 1",
                                    f"one of the formats {list(FORMATS)}", "no reader recognises it",
                                    "cannot detect the file's format"))
        return out
    module = READERS[fmt]
    if round_ is not None and "round_" in inspect.signature(module.read).parameters:
        return module.read(path, display, round_=round_)
    return module.read(path, display)
