"""What every reader returns, and the safe way to open a partner's file."""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import Finding, finding
from ..normalize import RawRecord

DEFAULT_MAX_BYTES = int(os.environ.get("MLREPRO_MAX_FILE_BYTES", 64 * 1024 * 1024))


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
    findings: list[Finding] = field(default_factory=list)
    dispositions: list[Disposition] = field(default_factory=list)
    round: str | None = None   # the round the file states, when it states one

    def reject(self, source: str, found: list[Finding]) -> None:
        self.findings.extend(found)
        self.dispositions.append(Disposition(
            source, "rejected", ",".join(dict.fromkeys(f.code for f in found)),
            "; ".join(f.message for f in found)))


def read_text(path: Path, display: str, max_bytes: int = DEFAULT_MAX_BYTES
              ) -> tuple[str | None, list[Finding]]:
    """The file's text, or None with a finding. Bounded in size, strict UTF-8."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return None, [finding("file-too-large", display, "whole file",
                                  f"at most {max_bytes} bytes", f"{size} bytes",
                                  "file over the size limit (MLREPRO_MAX_FILE_BYTES)")]
        data = path.read_bytes()
    except OSError as exc:
        return None, [finding("file-unreadable", display, "whole file", "a readable file",
                              exc.strerror or str(exc), "cannot read the file")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [finding("not-utf8", display, f"line {line}, byte {exc.start}",
                              "UTF-8 text", repr(data[exc.start:exc.start + 4]),
                              "the file is not valid UTF-8")]
    return text, []


def csv_rows(text: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and (line number, fields) of every non-empty data row."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] = []
    rows: list[tuple[int, list[str]]] = []
    start = 1
    for fields in reader:
        if not header:
            header = [h.strip() for h in fields]
        elif any(f.strip() for f in fields):
            rows.append((start, fields))
        start = reader.line_num + 1
    return header, rows
