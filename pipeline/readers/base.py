"""What every reader returns, and the safe way to open a partner's file."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.core import textcheck
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.core.vocabulary import Outcome, Severity

# texts that mean "no value" in a partner's field
PLACEHOLDERS = frozenset({"", "todo", "n/a", "na", "none", "null", "-", "tbd"})


def as_source(where: Source | str) -> Source:
    return where if isinstance(where, Source) else Source(str(where))


def inside(where: Source, rel: str) -> Source:
    """A path inside the folder at ``where``."""
    return Source(f"{where.file}/{rel}" if where.file else rel, root=where.root)


def json_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def clean(text: str | None) -> str | None:
    """A field stripped, a placeholder (``N/A``, ``TODO``, blank...) as no value."""
    if text is None:
        return None
    text = str(text).strip()
    return None if text.lower() in PLACEHOLDERS else text


@dataclass(frozen=True)
class Layout:
    """How a file names the canonical fields: field -> its column or, when
    ``keyed``, its key (a JSON record); an unnamed field is at its own name."""

    names: Mapping[str, str] = field(default_factory=dict)
    keyed: bool = False

    def place(self, where: Source, name: str) -> Source:
        named = self.names.get(name, name)
        return where.at(key=named) if self.keyed else where.at(column=named)


COLUMNS = Layout()   # a file whose columns are the canonical fields themselves


@dataclass(slots=True)
class RawRecord:
    """One result as a reader found it: text fields (absent, never None, when
    the source lacks one), and where each sits: at ``line`` or ``row`` of
    ``source`` by ``layout``, or ``elsewhere`` (a tree's system description)."""

    source: Source
    line: int | None
    fields: dict[str, str]
    layout: Layout = COLUMNS
    row: int | None = None
    elsewhere: Mapping[str, Source] | None = None

    @property
    def where(self) -> Source:
        return self.source.at(line=self.line, row=self.row)

    @property
    def origin(self) -> Source:
        """The record's place as the canonical table's ``file`` and ``line``
        hold it: its file (relative to its root) and its line (a record
        without a line: its number)."""
        return Source(self.source.file, self.line if self.line is not None else self.row)

    def place(self, name: str) -> Source:
        if self.elsewhere and name in self.elsewhere:
            return self.elsewhere[name]
        return self.layout.place(self.where, name)

    def get(self, name: str) -> str | None:
        return clean(self.fields.get(name))

    def __reduce__(self):
        # the tree reader's workers send records back pickled: as constructor
        # arguments, a tenth of what slots' default state costs
        return RawRecord, (self.source, self.line, self.fields, self.layout, self.row, self.elsewhere)


@dataclass
class Disposition:
    """A row that is not accepted: rejected (bad) or set aside (not comparable)."""

    where: Source           # the row's file (relative to its root) and line, as the canonical table's
    outcome: Outcome        # REJECTED or SET_ASIDE
    codes: str              # comma-separated finding codes
    reason: str

    @property
    def source(self) -> str:
        """``file:line``, for people to read (rejected.csv's ``source``)."""
        return self.where.cell

    def to_dict(self) -> dict:
        return {"source": self.source, "outcome": self.outcome, "codes": self.codes,
                "reason": self.reason}


def rejection(where: Source, found: list[Finding]) -> Disposition:
    """The rejection of a row for these findings."""
    return Disposition(where, Outcome.REJECTED, ",".join(dict.fromkeys(f.code for f in found)),
                       "; ".join(f.message for f in found))


@dataclass
class ReadResult:
    """What a reader makes of a file. ``records`` may stream (read once): the
    findings, dispositions and ``round`` are complete once they are read."""

    records: Iterable[RawRecord] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    dispositions: list[Disposition] = field(default_factory=list)
    round: str | None = None   # the round the file states, when it states one

    def origins(self) -> list[Source]:
        """The place of every record (reads the records): :attr:`RawRecord.origin`."""
        return [r.origin for r in self.records]

    def reject(self, where: Source, found: list[Finding]) -> None:
        self.findings.extend(found)
        self.dispositions.append(rejection(where, found))

    def reject_rows(self, where: Source, lines, code: str, reason: str) -> None:
        """Every row of a file refused whole (its findings are the file's): ``lines``, each row's line or number."""
        self.dispositions.extend(Disposition(Source(where.file, n), Outcome.REJECTED, code, reason) for n in lines)


def read_text(path: Path, where: Source | str, max_bytes: int,
              checks: tuple[str, ...] = textcheck.TABULAR) -> tuple[str | None, list[Finding]]:
    """The file's text, or None with findings: strict UTF-8, at most
    ``max_bytes`` (a table: :func:`pipeline.core.limits.file_bytes`), held to the hygiene ``checks``."""
    where = as_source(where)
    data, found = read_bytes(path, where, max_bytes)
    if data is None:
        return None, found
    try:
        text = str(data, "utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return None, [located("not-utf8", where.at(line=line), "UTF-8 text",
                              f"{data[exc.start:exc.start + 4]!r} at byte {exc.start}",
                              "the file is not valid UTF-8")]
    found = textcheck.check(text, where, checks)
    if any(f.severity == Severity.ERROR for f in found):
        return None, found
    return text, found


def read_bytes(path: Path, where: Source, limit: int) -> tuple[bytes | None, list[Finding]]:
    """At most ``limit`` bytes of a regular file, or None with a finding; a FIFO,
    a device or a file growing past the limit is never read to its end."""
    def too_large(size: object) -> tuple[None, list[Finding]]:
        return None, [located("file-too-large", where, f"at most {limit} bytes", f"{size} bytes",
                              "file over the size limit (a table: caps.file_bytes of schemas/version_folder.yaml)")]

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))   # a FIFO must not wait for a writer
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            os.close(fd)
            return too_large(info.st_size) if stat.S_ISREG(info.st_mode) else (None, [located(
                "file-unreadable", where, "a regular file", "a folder, FIFO or device", "not a regular file")])
        with open(fd, "rb") as fh:
            data = fh.read(info.st_size + 1)
            if len(data) > info.st_size:      # grew while read: one byte past the limit is enough to tell
                data += fh.read(limit + 1 - len(data))
    except OSError as exc:
        return None, [located("file-unreadable", where, "a readable file", exc.strerror or str(exc),
                              "cannot read the file")]
    if len(data) > limit:
        return too_large(f"more than {limit}")
    return data, []
