"""Ingest: submissions (or raw files) to the canonical table, with every input
row accounted for as accepted, rejected or excluded.

Which version counts: the newest sealed version of each submitter's round and
effective status (verified, post-deadline), unless a version folder is named
explicitly. Older versions are still checked (their manifests and hashes) and
listed as superseded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import bulk, clock, readers, rules, table
from .errors import UsageError
from .findings import Finding, ReportShape, finding
from .model import Source
from .normalize import Context
from .readers.base import Disposition, ReadResult
from .store import MANIFEST, VERSION_DIR, Version, find_versions, load_manifest, version_at

# One result per key: a verified and a post-deadline result of the same system may coexist;
# the result id and the model used (when the source gives them) tell apart distinct
# published results of one system (v5.1 AMD 5.1-0100 "finetuned" and 5.1-0101 "pruned").
KEY = ("round", "submitter", "system", "model", "scenario", "division", "status", "result_id",
       "used_model")


@dataclass
class IngestReport(ReportShape):
    """rows: the accepted results, labelled; the table (``frame()``) is the
    canonical table itself; every rejected or excluded row is a disposition."""

    table: pd.DataFrame
    dispositions: list[Disposition] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    versions: list[dict] = field(default_factory=list)

    @property
    def rows(self) -> list[dict]:
        return self.rows_head(None)

    def row_count(self) -> int:
        return len(self.table)

    def rows_head(self, limit: int | None) -> list[dict]:
        from .outputs import labelled_rows

        return labelled_rows(self.table, limit)

    def any_unverified(self) -> bool:
        from .outputs import any_unverified

        return any_unverified(self.table)

    def frame(self) -> pd.DataFrame:
        return self.table

    @property
    def summary(self) -> dict:
        d = pd.Series([x.outcome for x in self.dispositions], dtype="str")
        return {
            "accepted": len(self.table),
            "rejected": int((d == "rejected").sum()),
            "excluded": int((d == "excluded").sum()),
            "verified": int((self.table["status"] == "verified").sum()),
            "post_deadline": int((self.table["status"] == "post-deadline").sum()),
            "versions_used": sum(1 for v in self.versions if v["used"]),
            "versions_superseded": sum(1 for v in self.versions if not v["used"]),
        }

    def dispositions_frame(self) -> pd.DataFrame:
        return pd.DataFrame([d.to_dict() for d in self.dispositions],
                            columns=["source", "outcome", "codes", "reason"])


def effective_status(declared: str, manifest_display: str, version: Version,
                     visible: clock.Visible | None = None, implausible: bool = False
                     ) -> tuple[str, list[Finding]]:
    """Verified only when declared verified and in by the round's deadline (see :mod:`pipeline.clock`)."""
    return clock.effective_status(version, visible, implausible)


def ingest(paths: list[Path], fmt: str | None = None, round_: str | None = None,
           status: str | None = None, root: Path | None = None,
           visible: clock.Clock | None = None) -> IngestReport:
    """Read submissions roots, submitter folders, version folders or raw files.
    VISIBLE tells when a version became visible (default: the git clock)."""
    parts: list[pd.DataFrame] = []
    report = IngestReport(table.to_frame([]))
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder")
        if path.is_file() or readers.detect(path) == "submission-tree":
            if status is None:
                raise UsageError(f"{path}: a raw file needs --status (and --round when the file has none)")
            _read_raw(path, fmt, round_, status, parts, report)
        else:
            if visible is None:
                visible = clock.git_clock(path) or (lambda version: None)
            for version, status, used in _choose(_versions_under(path, root, report), report, visible):
                _read_version(version, status, used, parts, report)
    frame = table.coerce(pd.concat(parts, ignore_index=True)) if parts else table.to_frame([])
    frame = _reject_duplicates(frame, report)
    accepted, rejected, found = table.validate(frame)
    report.findings.extend(found)
    for src in rejected["source"]:
        where = Source.parse(src)
        codes = [f for f in found if f.file == where.file and f.line == where.line]
        report.dispositions.append(Disposition(str(src), "rejected", "schema-violation",
                                               "; ".join(sorted({f.place for f in codes}))))
    report.table = accepted.reset_index(drop=True)
    return report


def _versions_under(path: Path, root: Path | None, report: IngestReport) -> list[tuple[Version, bool]]:
    """(version, explicitly named) for a root, round, submitter or version folder."""
    if VERSION_DIR.match(path.name):
        return [(version_at(path, root), True)]
    if (path / MANIFEST).exists():   # a version folder by its content, but not named v<N>
        report.findings.append(finding("bad-version-folder", path.as_posix(), "path", "a folder named v<N> (v1, v2, ...)",
                                       path.name, "not a version folder name: never read as a version"))
        return []
    depth = _depth(path)
    if depth is None:
        raise UsageError(f"{path}: not a submissions root, round, submitter or version folder")
    base = path
    for _ in range(depth):
        base = base.parent
    found_versions, found = find_versions(root or base)
    report.findings.extend(found)
    target = path.resolve()
    return [(v, False) for v in found_versions
            if v.path.resolve() == target or target in v.path.resolve().parents]


def _choose(versions: list[tuple[Version, bool]], report: IngestReport,
            visible: clock.Clock) -> list[tuple[Version, str | None, bool]]:
    """Load every manifest and decide which versions are used.

    The newest sealed version of each (round, submitter, effective status) is
    used: a post-deadline version never hides the verified one (that was
    reviewed), and an on-time correction replaces the earlier verified one.
    A folder named explicitly is always used. Returns (version, status, used).
    """
    loaded = []
    for version, _ in versions:
        load_manifest(version)
        report.findings.extend(version.findings)
    implausible = clock.plausibility([v for v, _ in versions], clock.now())
    for version, named in versions:
        status = None
        if version.manifest is not None:
            report.findings.extend(implausible.get(version.display, []))
            status, found = effective_status(version.manifest.status, f"{version.display}/{MANIFEST}",
                                             version, visible(version), version.display in implausible)
            report.findings.extend(found)
        loaded.append((version, status, named))
    newest: dict[tuple, int] = {}
    for version, status, _ in loaded:
        if status is not None:
            key = (version.round, version.submitter, status)
            newest[key] = max(newest.get(key, 0), version.number)
    return [(v, status, named or status is None
             or newest.get((v.round, v.submitter, status)) == v.number)
            for v, status, named in loaded]


def withdraws_text(withdraws: list[dict]) -> str:
    """The manifest's withdrawals as one cell: ``system model scenario: reason; ...``."""
    return "; ".join(f"{w['system']} {w['model']} {w['scenario']}"
                     + (f" ({w['division']})" if w.get("division") else "") + f": {w['reason']}"
                     for w in withdraws)


def _depth(path: Path) -> int | None:
    """0 for a submissions root, 1 for a round, 2 for a submitter folder."""
    children = [p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if any(VERSION_DIR.match(c.name) for c in children):
        return 2
    if any(any(VERSION_DIR.match(g.name) for g in c.iterdir() if g.is_dir()) for c in children):
        return 1
    if all(c.name.startswith("v") for c in children):
        return 0
    return None


def _read_version(version: Version, status: str | None, used: bool, parts: list[pd.DataFrame],
                  report: IngestReport) -> None:
    m = version.manifest
    report.versions.append({
        "round": version.round, "submitter": version.submitter, "version": version.number,
        "path": version.display, "used": used and m is not None,
        "status_declared": m.status if m else None, "status": status,
        "submitted_at": m.submitted_at.isoformat() if m else None,
        "supersedes": m.supersedes if m else None,
        "withdraws": withdraws_text(m.withdraws) if m else ""})
    if not used:
        return
    if m is None:
        _reject_unsealed(version, report)
        return
    mdisplay = f"{version.display}/{MANIFEST}"
    if m.round not in rules.rounds():
        report.findings.append(finding("unknown-round", mdisplay, "key round",
                                       f"one of {sorted(rules.rounds())}", m.round, "unknown round"))
    ctx = Context(status=status, round=m.round, submitter=m.submitter, submission_version=m.version)
    for entry_file in m.files:
        display = f"{version.display}/{entry_file.path}"
        why = version.tampered.get(entry_file.path)
        if why is not None:
            _reject_file(version, entry_file, display, why, report)
            continue
        result = readers.read(version.path / entry_file.path, display, _fmt(entry_file.format),
                              round_=m.round)
        _accept(result, display, ctx, parts, report)


def _reject_file(version: Version, entry_file, display: str, why: Finding,
                 report: IngestReport) -> None:
    """Every row of a file that cannot be trusted is rejected for the file's reason."""
    path = version.path / entry_file.path
    if why.code == "path-escape" or not (path.is_file() or path.is_dir()):
        report.dispositions.append(Disposition(display, "rejected", why.code, why.message))
        return
    result = readers.read(path, display, _fmt(entry_file.format), round_=version.round)
    report.dispositions.extend(result.dispositions)
    for source in result.sources():
        report.dispositions.append(Disposition(source, "rejected", why.code, why.message))


def _fmt(name: str) -> str | None:
    return name if name in readers.READERS else None


def _reject_unsealed(version: Version, report: IngestReport) -> None:
    for path in sorted(version.path.rglob("*")):
        if path.is_file() and path.name != MANIFEST and readers.detect(path):
            display = f"{version.display}/{path.relative_to(version.path).as_posix()}"
            result = readers.read(path, display)
            for source in result.sources():
                report.dispositions.append(Disposition(
                    source, "rejected", version.findings[0].code,
                    "its version's manifest is missing or invalid"))


def _read_raw(path: Path, fmt, round_, status, parts, report) -> None:
    if status not in ("verified", "post-deadline"):
        raise UsageError(f"--status must be verified or post-deadline, not {status!r}")
    display = path.as_posix()
    result = readers.read(path, display, fmt, round_=round_)
    if round_ is None and result.round is None and result.sources():
        raise UsageError(f"{path}: the file does not state its round; give --round")
    _accept(result, display, Context(status=status, round=round_), parts, report)


def _accept(result: ReadResult, display: str, ctx: Context, parts: list[pd.DataFrame],
            report: IngestReport) -> None:
    """Normalise a reader's output. A file that yields no row at all still leaves a
    trace: refused whole (its findings say why), or a finding that it holds no result."""
    done = bulk.normalise_result(result, ctx)
    report.findings.extend(done.findings)
    report.dispositions.extend(done.dispositions)
    if len(done.frame):
        parts.append(done.frame)
    elif not done.dispositions:
        errors = [f for f in result.findings if f.severity == "error"]
        if not errors:
            errors = [finding("format-mismatch", display, "whole file", "at least one result",
                              "no rows", "the file holds no results")]
            report.findings.extend(errors)
        report.dispositions.append(Disposition(
            display, "rejected", ",".join(dict.fromkeys(f.code for f in errors)),
            "; ".join(dict.fromkeys(f.message for f in errors))))


def _reject_duplicates(frame: pd.DataFrame, report: IngestReport) -> pd.DataFrame:
    """Rows that share a key are all rejected: nothing says which one is the result."""
    dup = frame.duplicated(subset=list(KEY), keep=False)
    if not dup.any():
        return frame
    groups = frame[dup].groupby(list(KEY), sort=False, dropna=False)["source"].agg(list)
    for sources in groups:
        for source in sources:
            where = Source.parse(source)
            others = ", ".join(o for o in sources if o != source)
            f = finding("duplicate-row", where.file, where.place,
                        "one row per system, model, scenario and status",
                        f"the same result also at {others}",
                        "duplicate result: none of the rows sharing it is taken")
            report.findings.append(f)
            report.dispositions.append(Disposition(source, "rejected", f.code, f.message))
    return frame[~dup]
