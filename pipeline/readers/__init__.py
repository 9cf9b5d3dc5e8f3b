"""Readers: one module per input format, each yielding raw records and findings.

A reader module has ``NAME``, ``read(path, where) -> ReadResult`` (``where``:
the file's :class:`~pipeline.core.model.Source`) and a way
to be recognised: ``sniff(first_line)``, or ``sniff_head(first_64_KiB)`` for
formats one line does not reveal, or ``sniff_dir(rules, folder)`` for a reader of
folders. A reader that takes the round (``read(..., round_=...)``) is given
the one the caller knows, and one that takes the rules (``rules=``) is
given them. Add a format by adding a module and listing it in
:data:`READERS` (format name -> module, and whether it reads folders);
detection tries them in order.

A reader module is imported when it is first used, not with this package:
recognising or reading a folder imports only the folder readers, so a path
that needs no table library does not load one.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from pathlib import Path

from pipeline.core.findings import Finding
from pipeline.core.model import Source
from pipeline.core.rules import Rules
from pipeline.readers import resemble
from pipeline.readers.base import ReadResult, as_source

# format name -> (module under pipeline.readers, reads folders)
_MODULES = {
    "parquet": ("parquet", False),
    "mlcommons-summary-csv": ("checker_csv", False),
    "results-csv": ("results_csv", False),
    "mlcommons-summary-json": ("summary_json", False),
    "submission-tree": ("tree", True),
}


class _Readers(Mapping):
    """Format name -> reader module, each imported on first access."""

    def __getitem__(self, name: str):
        module = importlib.import_module(f"{__name__}.{_MODULES[name][0]}")
        if module.NAME != name:
            raise RuntimeError(f"{module.__name__}.NAME is {module.NAME!r}, registered as {name!r}")
        return module

    def __contains__(self, name: object) -> bool:     # without importing the module
        return name in _MODULES

    def __iter__(self):
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


READERS = _Readers()
# folder readers whose sniff_dir lives in a light module (recognising a folder loads no worker pool)
_SNIFF_DIR = {"submission-tree": "layout"}


def _folder_sniffer(name: str):
    if name in _SNIFF_DIR:
        return importlib.import_module(f"{__name__}.{_SNIFF_DIR[name]}").sniff_dir
    return READERS[name].sniff_dir
FORMATS = tuple(_MODULES)
HEAD_BYTES = 65536


def detect(rules: Rules, path: Path) -> str | None:
    """The format of a file (from its first line, or its first 64 KiB) or of a
    folder; None when no reader claims it."""
    if path.is_dir():
        return next((name for name, (_, folders) in _MODULES.items()
                     if folders and _folder_sniffer(name)(rules, path)), None)
    head = _head(path)
    if head is None:
        return None
    first = head.split("\n", 1)[0]
    for name, module in ((n, READERS[n]) for n, (_, folders) in _MODULES.items() if not folders):
        sniff_head = getattr(module, "sniff_head", None)
        if sniff_head(head) if sniff_head else module.sniff(first):
            return name
    return None


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
    """Why no reader recognises PATH, against the format it most resembles
    (:mod:`pipeline.readers.resemble`): what its header lacks, a wrong
    separator, or empty content."""
    csv_formats = {name: tuple(dict.fromkeys((*getattr(READERS[name], "SNIFF_COLUMNS", ()),
                                              *READERS[name].REQUIRED)))
                   for name in ("results-csv", "mlcommons-summary-csv")}
    return resemble.undetected(path, where, None if path.is_dir() else _head(path), list(FORMATS), csv_formats)


def read(rules: Rules, path: Path, where: Source | str, fmt: str | None = None,
         round_: str | None = None) -> ReadResult:
    """Read a file or folder in ``fmt`` (detected when None). Never raises for
    bad data. ``where``: how findings name the file (a text is its path as
    the caller names it)."""
    where = as_source(where)
    fmt = fmt or detect(rules, path)
    if fmt is None:
        out = ReadResult()
        out.findings.append(undetected(path, where))
        return out
    module = READERS[fmt]
    takes = inspect.signature(module.read).parameters
    given = {k: v for k, v in (("rules", rules), ("round_", round_)) if k in takes and v is not None}
    return module.read(path, where, **given)


def row_count(path: Path, fmt: str | None) -> int | None:
    """How many rows a file holds, found cheaply before it is read (a CSV's
    lines after the header, a Parquet file's metadata); None when the format
    does not tell so cheaply (JSON, a tree) or the file does not open."""
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
