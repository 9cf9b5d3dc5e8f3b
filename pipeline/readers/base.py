"""What every reader returns, and the safe way to open a partner's file."""

from __future__ import annotations

import csv
import io
import os
import stat
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.core import textcheck
from pipeline.core.errors import ConfigError
from pipeline.core.findings import Finding, finding

# texts that mean "no value" in a partner's field
PLACEHOLDERS = {"", "todo", "n/a", "na", "none", "null", "-", "tbd"}


@dataclass
class RawRecord:
    """One result as a reader found it: text fields and their places."""

    file: str                       # path as shown in findings and in `source`
    line: int | None                # 1-based line of the record, when it has one
    fields: dict[str, str]          # canonical field name -> text as read
    places: dict[str, str] = field(default_factory=dict)  # field -> "line 4, column Result"

    def place(self, name: str) -> str:
        if name in self.places:
            return self.places[name]
        return f"line {self.line}, field {name}" if self.line else f"field {name}"

    def get(self, name: str) -> str | None:
        value = self.fields.get(name)
        if value is None:
            return None
        value = str(value).strip()
        return None if value.lower() in PLACEHOLDERS else value



DEFAULT_MAX_BYTES = 64 * 1024 * 1024
MAX_BYTES_ENV = "MLREPRO_MAX_FILE_BYTES"


def max_file_bytes() -> int:
    """The size limit of a file read: ``MLREPRO_MAX_FILE_BYTES`` (read at each
    call, so a test or a run may lower it), else 64 MiB."""
    text = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(f"{MAX_BYTES_ENV}={text!r}: expected a whole number of bytes >= 1")
    return value


@dataclass
class Disposition:
    """A row that is not accepted: rejected (bad) or excluded (not comparable)."""

    source: str
    outcome: str            # rejected | excluded
    codes: str              # comma-separated finding codes
    reason: str

    def to_dict(self) -> dict:
        return {"source": self.source, "outcome": self.outcome, "codes": self.codes,
                "reason": self.reason}


@dataclass
class ReadResult:
    records: list[RawRecord] = field(default_factory=list)
    tables: list = field(default_factory=list)   # RawTable: many records as columns (bulk path)
    findings: list[Finding] = field(default_factory=list)
    dispositions: list[Disposition] = field(default_factory=list)
    round: str | None = None   # the round the file states, when it states one
    authoritative_names: bool = False   # a table MLCommons publishes: its names are kept

    def sources(self) -> list[str]:
        """``file:line`` of every record, the bulk tables' rows included."""
        out = [f"{r.file}:{r.line}" if r.line else r.file for r in self.records]
        for table in self.tables:
            out.extend(f"{table.file}:{line}" for line in table.lines)
        return out

    def all_records(self) -> list[RawRecord]:
        """Every record, the bulk tables' rows included (row by row: for tests and
        small files; ingest normalises tables in bulk)."""
        out = list(self.records)
        for table in self.tables:
            out.extend(table.record(i) for i in range(len(table)))
        return sorted(out, key=lambda r: (r.file, r.line or 0)) if self.tables else out

    def reject(self, source: str, found: list[Finding]) -> None:
        self.findings.extend(found)
        self.dispositions.append(Disposition(
            source, "rejected", ",".join(dict.fromkeys(f.code for f in found)),
            "; ".join(f.message for f in found)))


def read_text(path: Path, display: str, max_bytes: int | None = None,
              checks: tuple[str, ...] = textcheck.TABULAR) -> tuple[str | None, list[Finding]]:
    """The file's text, or None with findings. Strict UTF-8, bounded in size
    (``max_bytes``, never above :func:`max_file_bytes`; only a regular file
    is read, and never more than the limit), and held to the hygiene
    ``checks`` of :mod:`pipeline.core.textcheck`. The default is the policy for
    what partners type (CSV): a byte-order mark, CRLF line ends, control
    characters, mojibake or a repeated column refuse the file; callers
    reading machine-written files (LoadGen logs) pass ``textcheck.NONE``."""
    limit = max_file_bytes() if max_bytes is None else min(max_bytes, max_file_bytes())
    with _Buffer() as buffer:
        data, found = _read_into(buffer, path, display, limit)
        if data is None:
            return None, found
        try:
            text = str(data, "utf-8")
        except UnicodeDecodeError as exc:
            line = bytes(data[: exc.start]).count(b"\n") + 1
            return None, [finding("not-utf8", display, f"line {line}, byte {exc.start}",
                                  "UTF-8 text", repr(bytes(data[exc.start:exc.start + 4])),
                                  "the file is not valid UTF-8")]
        finally:
            del data
    found = textcheck.check(text, display, checks)
    if any(f.severity == "error" for f in found):
        return None, found
    return text, found


def read_bytes(path: Path, display: str, limit: int) -> tuple[bytes | None, list[Finding]]:
    """At most ``limit`` bytes of a regular file, or None with a finding. A
    FIFO, a device or a file that grows past the limit while read is refused,
    never read to its end."""
    with _Buffer() as buffer:
        data, found = _read_into(buffer, path, display, limit)
        if data is None:
            return None, found
        out = bytes(data)
        del data
    return out, []


class _Buffer:
    """A read buffer of this thread, reused from file to file: a tree ingest
    reads thousands of files of a few hundred KB, and a fresh buffer for each
    costs a page fault per page touched (more than the copy itself). A
    nested use (none today) gets a buffer of its own."""

    _local = threading.local()

    def __enter__(self) -> bytearray:
        free = getattr(self._local, "free", None)
        self._local.free = None
        self.buffer = free if free is not None else bytearray(64 * 1024)
        return self.buffer

    def __exit__(self, *exc) -> None:
        if len(self.buffer) <= _KEPT_BUFFER:
            self._local.free = self.buffer


_KEPT_BUFFER = 8 * 1024 * 1024   # a larger buffer (a rare large file) is not kept


def _read_into(buffer: bytearray, path: Path, display: str, limit: int
               ) -> tuple[memoryview | None, list[Finding]]:
    """The file's bytes as a view of ``buffer`` (grown as needed), or None with
    a finding; at most ``limit`` bytes (one more is asked for, to see a file
    that grew past the limit while read)."""
    def too_large(size: object) -> tuple[None, list[Finding]]:
        return None, [finding("file-too-large", display, "whole file", f"at most {limit} bytes",
                              f"{size} bytes", f"file over the size limit ({MAX_BYTES_ENV})")]

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None, [finding("file-unreadable", display, "whole file", "a regular file",
                                      "a folder, FIFO or device", "not a regular file")]
            if info.st_size > limit:
                return too_large(info.st_size)
            total = 0
            while total <= limit:
                want = min(max(info.st_size + 1, total + 64 * 1024), limit + 1)
                if len(buffer) < want:
                    buffer.extend(bytes(want - len(buffer)))
                with memoryview(buffer) as view:
                    n = os.readv(fd, [view[total:want]])
                if n == 0:
                    break
                total += n
        finally:
            os.close(fd)
    except OSError as exc:
        return None, [finding("file-unreadable", display, "whole file", "a readable file",
                              exc.strerror or str(exc), "cannot read the file")]
    if total > limit:
        return too_large(f"more than {limit}")
    return memoryview(buffer)[:total], []


def csv_rows(text: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and (line number, fields) of every non-empty data row.

    A field may be as long as the file (the csv module's default limit is
    128 KiB, and the file is already bounded). Should the csv module still
    fail, the rest of the file becomes one row of one field naming the
    error, so that the reader rejects it on its line (wrong number of
    fields) instead of raising."""
    csv.field_size_limit(max(csv.field_size_limit(), min(len(text) + 1, sys.maxsize)))
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] = []
    rows: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for fields in reader:
            if not header:
                header = [h.strip() for h in fields]
            elif any(f.strip() for f in fields):
                rows.append((start, fields))
            start = reader.line_num + 1
    except csv.Error as exc:
        rows.append((start, [f"<not CSV from here on: {exc}>"]))
    return header, rows
