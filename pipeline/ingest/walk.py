"""The walk of an ingest: which versions and files are read, with which
status, and the trace of every file and row that is not accepted.

Whose names a file holds is decided by where the file lives, never by its
format: a table in a ``published/`` folder is MLCommons', the authority on its
own names; every other file (a checker summary.csv under ``submissions/``
too) is a partner's, held to known names and labels that agree.

Which version counts: the newest sealed version of each submitter's round and
effective status, unless a version folder is named explicitly. Older versions
are still checked (manifests and hashes) and listed as superseded.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pipeline.store import clock
from pipeline import readers
from pipeline.core import limits
from pipeline.core.errors import UsageError
from pipeline.core.findings import Finding, located
from pipeline.core.model import REJECTED, STATUSES, VERIFIED, Source
from pipeline.core.vocabulary import Severity
from pipeline.ingest.normalise import Context, Normaliser
from pipeline.ingest.resolve import COUNT_PER_TYPE
from pipeline.readers.base import Disposition, ReadResult
from pipeline.store.manifests import MANIFEST, Version, find_versions, load_manifest, version_at
from pipeline.store.versions import version_number


PUBLISHED_FOLDER = "published"


def published_table(path: Path) -> bool:
    """Whether a file given directly lies in ``published/`` or ``published/<round>/``."""
    return PUBLISHED_FOLDER in path.resolve().parent.parts[-2:]


def collect(paths: list[Path], report, normaliser: Normaliser, fmt: str | None = None,
            round_: str | None = None, status: str | None = None, root: Path | None = None,
            visible: clock.Clock | None = None, published: bool = False, scans: Scans | None = None) -> set[str]:
    """Read PATHS into ``report`` and their accepted rows into ``normaliser``;
    return the submissions roots read under. ``published``: the files given
    directly are MLCommons' tables wherever they lie (a version's never are)."""
    rules = normaliser.rules
    roots: set[str] = set()
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder")
        if path.is_file() or readers.detect(rules, path) == "submission-tree":
            mlcommons = published or published_table(path)
            # a table MLCommons published holds the results it reviewed: verified unless told
            stated = status if status is not None or not mlcommons else VERIFIED
            if stated is None:
                raise UsageError(f"{path}: a raw file needs --status (and --round when the file has none)")
            _read_raw(path, fmt, round_, stated, normaliser, report, mlcommons)
        else:
            if visible is None:
                visible = clock.project_clock(rules, path) or (lambda version: None)
            for version, status_, used in _choose(rules, _versions_under(path, root, report, scans), report, visible):
                if used and version.manifest is not None and version.root_name:
                    roots.add(version.root_name)
                _read_version(version, status_, used, normaliser, report)
    return roots


def _versions_under(path: Path, root: Path | None, report, scans: Scans | None) -> list[tuple[Version, bool]]:
    """(version, explicitly named) for a root, round, submitter or version folder."""
    if version_number(path.name) is not None:
        return [(version_at(path, root), True)]
    if (path / MANIFEST).exists():   # a version folder by its content, but not named v<N>
        report.findings.append(located("bad-version-folder", Source(path.as_posix()),
                                       "a folder named v<N> (v1, v2, ...)", path.name,
                                       "not a version folder name: never read as a version"))
        return []
    depth = _depth(path)
    if depth is None:
        raise UsageError(f"{path}: not a submissions root, round, submitter or version folder")
    base = path
    for _ in range(depth):
        base = base.parent
    scanned, found = _scan(root or base, scans)
    report.findings.extend(found)
    target = path.resolve()
    return [(v, False) for v, real in scanned if real == target or target in real.parents]


# root -> (its versions with their real paths, findings), shared by ingest-all's reads of one
# root's submitter folders; each read takes its own folder's versions (it loads their manifests)
Scans = dict[Path, tuple[list[tuple[Version, Path]], list[Finding]]]


def _scan(root: Path, scans: Scans | None) -> tuple[list[tuple[Version, Path]], list[Finding]]:
    if scans is not None and root in scans:
        scanned, found = scans[root]
        return scanned, list(found)
    versions, found = find_versions(root)
    scanned = [(v, v.path.resolve()) for v in versions]
    if scans is not None:
        scans[root] = (scanned, list(found))
    return scanned, found


def _choose(rules, versions: list[tuple[Version, bool]], report,
            visible: clock.Clock) -> list[tuple[Version, str | None, bool]]:
    """(version, status, used) of each, its manifest loaded: the newest of each
    (round, submitter, effective status) is used, so a post-deadline version
    never hides the reviewed verified one; a folder named explicitly always is."""
    loaded = []
    for version, _ in versions:
        load_manifest(rules, version)
        report.findings.extend(version.findings)
    effective = clock.statuses(rules, [v for v, _ in versions], visible, clock.now())
    for version, named in versions:
        status = None
        if version.display in effective:
            status, found = effective[version.display]
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
    if any(version_number(c.name) is not None for c in children):
        return 2
    if any(any(version_number(g.name) is not None for g in c.iterdir() if g.is_dir()) for c in children):
        return 1
    if all(c.name.startswith("v") for c in children):
        return 0
    return None


def _read_version(version: Version, status: str | None, used: bool, normaliser: Normaliser, report) -> None:
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
    rules = normaliser.rules
    if m is None:
        _reject_unsealed(rules, version, report)
        return
    if m.round not in rules.rounds():
        report.findings.append(located("unknown-round", version.where(MANIFEST).at(key="round"),
                                       f"one of {sorted(rules.rounds())}", m.round, "unknown round"))
    ctx = Context(status=status, round=m.round, submitter=m.submitter, submission_version=m.version)
    _rows_cap(rules, version, report)
    for entry_file in m.files:
        where = version.where(entry_file.path)
        why = version.tampered.get(entry_file.path)
        if why is not None:
            _reject_file(rules, version, entry_file, where, why, report)
            continue
        result = readers.read(rules, version.path / entry_file.path, where, _fmt(entry_file.format), round_=m.round)
        _accept(result, where, ctx, normaliser, report)


def _rows_cap(rules, version: Version, report) -> None:
    """A version over ``rows_per_version``, counted before any file is read: no file read."""
    m = version.manifest
    counts = [readers.row_count(version.path / e.path, _fmt(e.format)) for e in m.files
              if e.path not in version.tampered]
    total, limit = sum(c for c in counts if c), limits.cap(rules, "rows_per_version")
    if total <= limit:
        return
    why = located("over-cap", m.where(version, "files"), f"at most {limit} rows in a version", f"{total} rows",
                  "the version holds more rows than a partner's version may (schemas/version_folder.yaml caps)")
    report.findings.append(why)
    for entry in m.files:
        version.tampered.setdefault(entry.path, why)


def _reject_file(rules, version: Version, entry_file, where: Source, why, report) -> None:
    """Every row of an untrusted file rejected for the file's reason (over a cap: never read)."""
    path = version.path / entry_file.path
    if why.code in ("path-escape", "over-cap") or not (path.is_file() or path.is_dir()):
        report.dispositions.append(Disposition(Source(where.file), REJECTED, why.code, why.message))
        return
    _reject_rows(readers.read(rules, path, where, _fmt(entry_file.format), round_=version.round), why.code,
                 why.message, report)


def _reject_rows(result: ReadResult, code: str, reason: str, report) -> None:
    """Every row of a file rejected for its version's reason (rows its reader refused keep the reader's)."""
    places = result.origins()   # reads the records: the reader's own refusals are known after it
    report.dispositions.extend(result.dispositions)
    report.dispositions.extend(Disposition(place, REJECTED, code, reason) for place in places)


def _fmt(name: str) -> str | None:
    return name if name in readers.READERS else None


def _reject_unsealed(rules, version: Version, report) -> None:
    for path in sorted(version.path.rglob("*")):
        if path.is_file() and path.name != MANIFEST and readers.detect(rules, path):
            _reject_rows(readers.read(rules, path, version.where(path.relative_to(version.path).as_posix())),
                         version.findings[0].code, "its version's manifest is missing or invalid", report)


# refusals that a table MLCommons published would not get (it is the authority on its own
# names), with a mixed cluster's accelerators stated without counts per type
NAMES_A_PUBLICATION_KEEPS = ("unknown-accelerator", "unknown-model")


def _published_hint(f, round_: str | None):
    """A name refused in a file outside published/: say how to read it as MLCommons' table, should it be one."""
    if f.severity != Severity.ERROR or f.code not in NAMES_A_PUBLICATION_KEEPS and f.expected != COUNT_PER_TYPE:
        return f
    place = f"{PUBLISHED_FOLDER}/{round_ or '<round>'}/{Path(f.file).name}"
    return replace(f, message=f"{f.message}; if the file is MLCommons' published table, read it from {place} "
                              "(docs/rounds.md), where a name the registry lacks keeps its row with a warning "
                              "(unregistered-name)")


def _read_raw(path: Path, fmt, round_, status, normaliser: Normaliser, report, published: bool) -> None:
    if status not in STATUSES:
        raise UsageError(f"--status must be verified or post-deadline, not {status!r}")
    where = Source(path.as_posix())
    result = readers.read(normaliser.rules, path, where, fmt, round_=round_)
    first = len(report.findings)
    records = _accept(result, where, Context(status=status, round=round_, published=published), normaliser,
                      report)
    if not published and path.is_file():   # a table; a submission tree is never MLCommons' publication
        report.findings[first:] = [_published_hint(f, result.round or round_) for f in report.findings[first:]]
    if round_ is None and result.round is None and records:
        raise UsageError(f"{path}: the file does not state its round; give --round")


def _accept(result: ReadResult, where: Source, ctx: Context, normaliser: Normaliser, report) -> int:
    """Normalise a reader's output; return how many records it held. A file
    with no row at all is still rejected whole, with its findings' reasons."""
    done = normaliser.add(result, ctx)
    report.findings.extend(done.findings)
    report.dispositions.extend(done.dispositions)
    if not done.accepted and not done.dispositions:
        errors = [f for f in done.findings if f.severity == Severity.ERROR]
        if not errors:
            errors = [located("format-mismatch", where, "at least one result", "no rows",
                              "the file holds no results")]
            report.findings.extend(errors)
        report.dispositions.append(Disposition(
            Source(where.file), REJECTED, ",".join(dict.fromkeys(f.code for f in errors)),
            "; ".join(dict.fromkeys(f.message for f in errors))))
    return done.records
