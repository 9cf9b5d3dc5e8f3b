"""``mlrepro submit``: seal a file (or a submission tree) as the next version
``<root>/<round>/<submitter>/v<N>/`` of the submissions store.

The file is read first by ingest, as any version's files are read later: one
that does not parse in its format, or whose rows fail their checks or name
another submitter, is refused (findings, nothing written). The status is
decided under the submitter folder's lock, with the clock read there too (so
a version never seals an earlier time than the one before it): :func:`_status`.
Tolerance is judged when the version is read.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import yaml

from pipeline import readers
from pipeline.core.errors import UsageError
from pipeline.core.findings import Finding, located
from pipeline.core.model import AUTO, POST_DEADLINE, RESULT_KEY, STATUSES, VERIFIED, Source
from pipeline.core.rules import Rules
from pipeline.core.vocabulary import Severity
from pipeline.ingest.submissions import ingest
from pipeline.store import clock, contents
from pipeline.store.hashes import sha256_file, sha256_tree
from pipeline.store.manifests import MANIFEST, Version, read_declared, declared_submitted_at, load_manifest
from pipeline.store.versions import root_name, version_at, version_number

ROUND_NAME = re.compile(r"^v\d+\.\d+$")
SUBMITTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


@dataclass
class SubmitResult:
    version: Version | None
    findings: list[Finding]
    status: str | None = None        # the status sealed (``auto`` decided), None when refused


def submit(rules: Rules, source: Path, submitter: str, round_: str, status: str, root: Path,
           submitted_at: datetime | None = None, fmt: str | None = None,
           notes: str | None = None, withdraws: list[dict] | None = None, force: bool = False,
           into: Path | None = None) -> SubmitResult:
    """Seal SOURCE as the next version of ``root/round/submitter``, or refuse it
    (its findings, nothing written). ``status``: verified, post-deadline or
    auto; ``force`` seals a version declared verified after the deadline.
    INTO: seal there instead, locations still naming ROOT (a dry run seals into a copy)."""
    shown = root_name(root)
    root = into or root
    _arguments(rules, source, submitter, round_, status, submitted_at)
    fmt = fmt or readers.detect(rules, source)
    if fmt is None or fmt not in readers.READERS:
        return SubmitResult(None, readers.read(rules, source, source.as_posix(),
                                               fmt if fmt in readers.READERS else None).findings)
    if source.is_dir():
        digest, link = sha256_tree(source)
        if link is not None:
            return SubmitResult(None, [located("path-escape", Source(f"{source.as_posix()}/{link}"),
                                               "regular files only", "a symbolic link",
                                               "a submitted tree may not hold links")])
    else:
        digest = sha256_file(source)
    # what a version may hold, as the gate and ingest hold it (the rows are not read for a refused name)
    problems = contents.check_source(rules, source, fmt) or refusals(rules, source, fmt, submitter, round_,
                                                                      VERIFIED if status == AUTO else status)
    if problems:
        return SubmitResult(None, problems)
    sub_dir = root / round_ / submitter
    # refused before the submitter folder is made; decided again under the lock, whose clock seals
    number = _next(sub_dir)
    _, early = _status(rules, round_, status, max(submitted_at or clock.now(), clock.now()), force,
                       _where(round_, submitter, number, shown))
    if any(f.severity == Severity.ERROR for f in early):
        return SubmitResult(None, early)

    def manifest(number: int, when: datetime, declared: str, supersedes: int | None) -> dict:
        optional = {"supersedes": supersedes, "notes": notes, "withdraws": [dict(w) for w in withdraws or ()]}
        return {"submitter": submitter, "round": round_, "version": number,
                "submitted_at": when.isoformat(), "status": str(declared),
                "files": [{"path": source.name, "format": fmt, "sha256": digest}],
                **{k: v for k, v in optional.items() if v}}

    def decide(number: int, now: datetime, previous: datetime | None) -> tuple[datetime, str | None, list[Finding]]:
        """Under the lock: the time sealed, the status sealed (None: refused), findings."""
        when = submitted_at or now
        where = _where(round_, submitter, number, shown)
        if submitted_at is None:
            _plausible(rules, round_, when, "the time now,")
        if previous is not None and when < previous:
            return when, None, [located("submitted-before-previous", where.at(key="submitted_at"),
                                        f"at or after {previous.isoformat()} (v{number - 1}'s submitted_at)",
                                        when.isoformat(), "a version cannot be submitted before the one it follows")]
        declared, found = _status(rules, round_, status, max(when, now), force, where)
        return when, declared, found

    target, declared, found = _seal(source, manifest, decide, sub_dir, root, shown)
    if target is None:
        return SubmitResult(None, found)
    version = version_at(target, root)
    load_manifest(rules, version)
    return SubmitResult(version, found, declared)


def _arguments(rules: Rules, source: Path, submitter: str, round_: str, status: str, submitted_at: datetime | None) -> None:
    """A usage error for any argument that cannot be right."""
    if status not in (AUTO, *STATUSES):
        raise UsageError(f"--status must be one of {', '.join((AUTO, *STATUSES))}, not {status!r}")
    if not ROUND_NAME.match(round_):
        raise UsageError(f"--round must look like v6.0, not {round_!r}")
    if not SUBMITTER_NAME.match(submitter):
        raise UsageError(f"--submitter {submitter!r}: letters, digits, _ . - only")
    if not (source.is_file() or source.is_dir()):
        raise UsageError(f"{source}: not a file or folder")
    if submitted_at is not None:
        if submitted_at.tzinfo is None:
            raise UsageError("--submitted-at needs a time zone (e.g. 2026-02-20T10:00:00+00:00)")
        _plausible(rules, round_, submitted_at)


def refusals(rules: Rules, source: Path, fmt: str, submitter: str, round_: str, status: str) -> list[Finding]:
    """Why SOURCE cannot be sealed: ingest's errors on it, read in its format
    for its round and status, and every row that names another submitter."""
    report = ingest(rules, [source], fmt, round_, status)
    problems = [f for f in report.findings if f.severity == Severity.ERROR]
    for row in report.table[["submitter", *RESULT_KEY]].to_dict("records"):
        if (named := row["submitter"]) != submitter:
            problems.append(located("submitter-mismatch", Source.of_row(row).at(column="submitter"),
                                    submitter, named, "the row's submitter differs from its submission's submitter"))
    return problems


def _seal(source: Path, manifest, decide, sub_dir: Path, root: Path,
          shown: str | None) -> tuple[Path | None, str | None, list[Finding]]:
    """Write the next version folder of SUB_DIR whole (built hidden beside it,
    then renamed into place). Under the folder's lock, with the clock read
    there, ``decide(number, now, previous version's submitted_at)`` gives the
    time and status to seal (a status None refuses) and its findings;
    ``manifest(number, time, status, supersedes)`` is the manifest. Returns
    (the version's path, its status, findings), or (None, None, why not)."""
    sub_dir.mkdir(parents=True, exist_ok=True)
    with _locked(sub_dir):   # concurrent submits for one submitter each take the next number, in time order
        number = _next(sub_dir)
        previous = declared_submitted_at(sub_dir / f"v{number - 1}") if number > 1 else None
        when, status, found = decide(number, clock.now(), previous)
        if status is None:
            return None, None, found
        same = [n for n in range(1, number) if read_declared(sub_dir / f"v{n}")[0].get("status") == status]
        target = sub_dir / f"v{number}"
        tmp = Path(tempfile.mkdtemp(prefix=f".v{number}.", dir=sub_dir))
        try:
            if source.is_dir():
                shutil.copytree(source, tmp / source.name)
            else:
                shutil.copyfile(source, tmp / source.name)
            (tmp / MANIFEST).write_text(yaml.safe_dump(manifest(number, when, status, same[-1] if same else None),
                                                       sort_keys=False), encoding="utf-8",
                                        newline="\n")
            if target.exists():
                where = Source(target.relative_to(root).as_posix(), root=shown)
                return None, None, [located("version-exists", where, "a new version folder", "it exists",
                                            "versions are immutable")]
            os.rename(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
    return target, status, found


def _next(sub_dir: Path) -> int:
    if not sub_dir.is_dir():
        return 1
    return max((n for p in sub_dir.iterdir() if (n := version_number(p.name)) is not None), default=0) + 1


def _where(round_: str, submitter: str, number: int, shown: str | None) -> Source:
    """The manifest of version NUMBER (sealed, or the one a refusal did not write)."""
    return Source(f"{round_}/{submitter}/v{number}/{MANIFEST}", key="status", root=shown)


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


def _plausible(rules: Rules, round_: str, submitted_at: datetime, what: str = "--submitted-at") -> None:
    """Refuse a submitted_at that the gate would refuse (see :mod:`pipeline.store.clock`)."""
    info = rules.rounds().get(round_)
    if info is not None and info.opens is not None and submitted_at < info.opens:
        raise UsageError(f"{what} {submitted_at.isoformat()} is before {round_} opens "
                         f"({info.opens.isoformat()})")
    if submitted_at > clock.now() + clock.FUTURE_SLACK:
        raise UsageError(f"{what} {submitted_at.isoformat()} is more than a day in the future")


def _status(rules: Rules, round_: str, status: str, visible: datetime, force: bool,
            where: Source) -> tuple[str | None, list[Finding]]:
    """The status to seal for a version that becomes visible at VISIBLE (None:
    refused), and why. ``auto``: verified by the round's deadline, else
    post-deadline; ``verified`` after it: refused naming the fix, or with
    ``force`` sealed with a warning (it counts as post-deadline)."""
    info = rules.rounds().get(round_)
    on_time = info is not None and visible <= info.submission_deadline
    if status == AUTO:
        return (VERIFIED if on_time else POST_DEADLINE), []
    if status != VERIFIED or on_time or info is None:
        return status, []
    expected = f"sealed at or before {info.submission_deadline.isoformat()} (the {round_} deadline)"
    found = f"{visible.isoformat()} (the earliest it can become visible)"
    if not force:
        return None, [located("verified-after-deadline", where, expected, found,
                              f"declared verified after the {round_} deadline, it would count as post-deadline: "
                              "submit it with --status post-deadline (or --status auto); nothing written")]
    return status, [located("verified-after-deadline", where, expected, found,
                            "sealed as declared (--force), but it counts as post-deadline wherever the commit "
                            "time or the gate's clock decides, and the gate fails it: declare it post-deadline "
                            "(--status post-deadline or auto)", severity=Severity.WARNING)]
