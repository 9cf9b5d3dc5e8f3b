"""Readers: one module per input format, each yielding raw records and findings.

A reader module has ``NAME``, ``read(path, where, rules, round_=None) -> ReadResult``
(``round_``: the submission's; only a folder's reader uses it, a file's rows state
theirs) and ``sniff(first_64_KiB)`` or ``sniff_dir(rules, folder)``.
It is imported when first used, so a path that needs no table library does not load one.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from pipeline.core.findings import Finding
from pipeline.core.model import Source
from pipeline.core.rules import Rules
from pipeline.readers import resemble
from pipeline.readers.base import ReadResult, as_source

# format name -> (module under pipeline.readers, for a reader of folders the module of its sniff_dir:
# a light one, so that recognising a folder loads no worker pool)
READERS = {
    "parquet": ("parquet", None),
    "mlcommons-summary-csv": ("checker_csv", None),
    "results-csv": ("results_csv", None),
    "mlcommons-summary-json": ("summary_json", None),
    "submission-tree": ("tree", "layout"),
}


def reader(name: str):
    """The reader module of a format, imported on first use."""
    module = importlib.import_module(f"{__name__}.{READERS[name][0]}")
    if module.NAME != name:
        raise RuntimeError(f"{module.__name__}.NAME is {module.NAME!r}, registered as {name!r}")
    return module


FORMATS = tuple(READERS)
HEAD_BYTES = 65536


def detect(rules: Rules, path: Path) -> str | None:
    """The format of a file or folder; None when no reader claims it."""
    if path.is_dir():
        return next((name for name, (_, sniffer) in READERS.items()
                     if sniffer and importlib.import_module(f"{__name__}.{sniffer}").sniff_dir(rules, path)), None)
    head = _head(path)
    if head is None:
        return None
    return next((name for name, (_, sniffer) in READERS.items() if not sniffer and reader(name).sniff(head)), None)


def _head(path: Path) -> str | None:
    """A file's first 64 KiB as text (None: not a readable file)."""
    if not path.is_file():
        return None
    try:
        with open(path, "rb") as fh:
            return fh.read(HEAD_BYTES).decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError:
        return None


def undetected(path: Path, where: Source) -> Finding:
    """Why no reader recognises PATH, against the format it most resembles."""
    csv_formats = {name: tuple(dict.fromkeys((*getattr(reader(name), "SNIFF_COLUMNS", ()),
                                              *reader(name).REQUIRED)))
                   for name in ("results-csv", "mlcommons-summary-csv")}
    return resemble.undetected(path, where, None if path.is_dir() else _head(path), list(FORMATS), csv_formats)


def read(rules: Rules, path: Path, where: Source | str, fmt: str | None = None,
         round_: str | None = None) -> ReadResult:
    """Read a file or folder in ``fmt`` (detected when None); never raises for bad data."""
    where = as_source(where)
    fmt = fmt or detect(rules, path)
    if fmt is None:
        out = ReadResult()
        out.findings.append(undetected(path, where))
        return out
    return reader(fmt).read(path, where, rules, round_)


def row_count(path: Path, fmt: str | None) -> int | None:
    """How many rows a CSV or Parquet file holds, found cheaply before it is read; None otherwise."""
    try:
        if fmt in ("results-csv", "mlcommons-summary-csv") and path.is_file():
            with open(path, "rb") as fh:
                return max(sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b"")) - 1, 0)
        if fmt == "parquet" and path.is_file():
            import pyarrow.parquet as pq

            return pq.ParquetFile(path).metadata.num_rows
    except Exception:       # noqa: BLE001 -- a file that does not open is the reader's to report
        return None
    return None
