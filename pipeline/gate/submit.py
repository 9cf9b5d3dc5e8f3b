"""``mlrepro submit``: seal a file (or a submission tree) as the next version
``<root>/<round>/<submitter>/v<N>/`` of the submissions store.

The file is read first by ingest, as any version's files are read later: one
that does not parse in its format, or whose rows fail their checks or name
another submitter, is refused (findings, nothing written). Status and
tolerance are not judged here: they are decided when the version is read,
so the sealed version records what was declared (a warning says when a
version declared verified will count as post-deadline).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import yaml

from pipeline import readers
from pipeline.core import rules
from pipeline.core.errors import UsageError
from pipeline.core.findings import Finding, located
from pipeline.core.model import STATUSES, VERIFIED, Source
from pipeline.ingest.submissions import ingest
from pipeline.store import clock
from pipeline.store.hashes import sha256_file, sha256_tree
from pipeline.store.manifests import MANIFEST, Version, declared_status, load_manifest
from pipeline.store.versions import VERSION_DIR, root_name, version_at

ROUND_NAME = re.compile(r"^v\d+\.\d+$")
SUBMITTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


@dataclass
class SubmitResult:
    version: Version | None
    findings: list[Finding]


def submit(source: Path, submitter: str, round_: str, status: str, root: Path,
           submitted_at: datetime | None = None, fmt: str | None = None,
           notes: str | None = None, withdraws: list[dict] | None = None) -> SubmitResult:
    """Seal SOURCE as the next version of ``root/round/submitter``, or refuse it
    (its findings, nothing written)."""
    return seal(source, submitter, round_, status, root, root_name(root), submitted_at, fmt, notes, withdraws)


def seal(source: Path, submitter: str, round_: str, status: str, root: Path, shown: str | None,
         submitted_at: datetime | None = None, fmt: str | None = None,
         notes: str | None = None, withdraws: list[dict] | None = None) -> SubmitResult:
    """:func:`submit` into ROOT, whose locations name it SHOWN (a dry run seals
    into a copy of the user's root)."""
    submitted_at = _arguments(source, submitter, round_, status, submitted_at)
    fmt = fmt or readers.detect(source)
    if fmt is None or fmt not in readers.READERS:
        return SubmitResult(None, readers.read(source, source.as_posix(),
                                               fmt if fmt in readers.READERS else None).findings)
    if source.is_dir():
        digest, link = sha256_tree(source)
        if link is not None:
            return SubmitResult(None, [located("path-escape", Source(f"{source.as_posix()}/{link}"),
                                               "regular files only", "a symbolic link",
                                               "a submitted tree may not hold links")])
    else:
        digest = sha256_file(source)
    problems = refusals(source, fmt, submitter, round_, status)
    if problems:
        return SubmitResult(None, problems)
    warnings = _late_warning(round_, submitter, status, submitted_at, shown)

    def manifest(number: int, supersedes: int | None) -> dict:
        out = {"submitter": submitter, "round": round_, "version": number,
               "submitted_at": submitted_at.isoformat(), "status": status,
               "files": [{"path": source.name, "format": fmt, "sha256": digest}]}
        if supersedes:
            out["supersedes"] = supersedes
        if notes:
            out["notes"] = notes
        if withdraws:
            out["withdraws"] = [dict(w) for w in withdraws]
        return out

    target, refused = _seal(source, manifest, status, root / round_ / submitter, root, shown)
    if refused is not None:
        return SubmitResult(None, [refused])
    version = version_at(target, root)
    load_manifest(version)
    return SubmitResult(version, warnings)


def _arguments(source: Path, submitter: str, round_: str, status: str,
               submitted_at: datetime | None) -> datetime:
    """The submitted_at to seal; a usage error for any argument that cannot be right."""
    if status not in STATUSES:
        raise UsageError(f"--status must be one of {', '.join(STATUSES)}, not {status!r}")
    if not ROUND_NAME.match(round_):
        raise UsageError(f"--round must look like v6.0, not {round_!r}")
    if not SUBMITTER_NAME.match(submitter):
        raise UsageError(f"--submitter {submitter!r}: letters, digits, _ . - only")
    if not (source.is_file() or source.is_dir()):
        raise UsageError(f"{source}: not a file or folder")
    submitted_at = submitted_at or datetime.now(timezone.utc).replace(microsecond=0)
    if submitted_at.tzinfo is None:
        raise UsageError("--submitted-at needs a time zone (e.g. 2026-02-20T10:00:00+00:00)")
    _plausible(round_, submitted_at)
    return submitted_at


def refusals(source: Path, fmt: str, submitter: str, round_: str, status: str) -> list[Finding]:
    """Why SOURCE cannot be sealed: ingest's errors on it, read in its format
    for its round and status, and every row that names another submitter."""
    report = ingest([source], fmt, round_, status)
    problems = [f for f in report.findings if f.severity == "error"]
    for cell, named in zip(report.table["source"], report.table["submitter"]):
        if named != submitter:
            problems.append(located("submitter-mismatch", Source.from_cell(cell).at(column="submitter"),
                                    submitter, named, "the row's submitter differs from its submission's submitter"))
    return problems


def _seal(source: Path, manifest, status: str, sub_dir: Path, root: Path,
          shown: str | None) -> tuple[Path, Finding | None]:
    """Write the next version folder of SUB_DIR whole (built hidden beside it,
    then renamed into place); ``manifest(number, supersedes)`` is its manifest.
    Returns (its path, None), or (the path, why not)."""
    sub_dir.mkdir(parents=True, exist_ok=True)
    with _locked(sub_dir):   # concurrent submits for one submitter each take the next number
        existing = sorted(int(m.group(1)) for p in sub_dir.iterdir() if (m := VERSION_DIR.match(p.name)))
        number = max(existing, default=0) + 1
        previous = [n for n in existing if declared_status(sub_dir / f"v{n}") == status]
        target = sub_dir / f"v{number}"
        tmp = Path(tempfile.mkdtemp(prefix=f".v{number}.", dir=sub_dir))
        try:
            if source.is_dir():
                shutil.copytree(source, tmp / source.name)
            else:
                shutil.copyfile(source, tmp / source.name)
            (tmp / MANIFEST).write_text(yaml.safe_dump(manifest(number, previous[-1] if previous else None),
                                                       sort_keys=False), encoding="utf-8",
                                        newline="\n")
            if target.exists():
                where = Source(target.relative_to(root).as_posix(), root=shown)
                return target, located("version-exists", where, "a new version folder", "it exists",
                                       "versions are immutable")
            os.rename(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
    return target, None


@contextmanager
def _locked(folder: Path):
    """An exclusive fcntl lock on the submitter folder itself (no lock file to
    leave behind or to mistake for a version)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)      # closing the descriptor releases the lock


def _plausible(round_: str, submitted_at: datetime) -> None:
    """Refuse a submitted_at that the gate would refuse (see :mod:`pipeline.store.clock`)."""
    info = rules.rounds().get(round_)
    if info is not None and info.opens is not None and submitted_at < info.opens:
        raise UsageError(f"--submitted-at {submitted_at.isoformat()} is before {round_} opens "
                         f"({info.opens.isoformat()})")
    if submitted_at > clock.now() + clock.FUTURE_SLACK:
        raise UsageError(f"--submitted-at {submitted_at.isoformat()} is more than a day in the future")


def _late_warning(round_: str, submitter: str, status: str, submitted_at: datetime,
                  shown: str | None) -> list[Finding]:
    """Before sealing: a version declared verified that would already be past the
    round's deadline when it becomes visible (now, at the earliest)."""
    info = rules.rounds().get(round_)
    when = max(submitted_at, clock.now())
    if status != VERIFIED or info is None or when <= info.submission_deadline:
        return []
    where = Source(f"{round_}/{submitter}/v<next>/{MANIFEST}", key="submitted_at", root=shown)
    return [located("verified-after-deadline", where,
                    f"at or before {info.submission_deadline.isoformat()} (the {round_} deadline)",
                    f"{when.isoformat()} (the earliest it can become visible)",
                    "declared verified, but it will count as post-deadline: the gate's clock and the "
                    "commit time decide, not submitted_at", severity="warning")]
