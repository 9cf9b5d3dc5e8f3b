"""``mlrepro validate``: every check ingest makes on submissions or raw files
(manifests, hashes, formats, rows), writing nothing; a run that finds no
result at all says so.

Every file is named as the user named it: a raw file as given, a file of a
version as ``<root>/<round>/<submitter>/v<N>/...``, the root as given (or as
the folder given lies in it).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.ingest.submissions import IngestReport, ingest
from pipeline.store.versions import VERSION_DIR, root_name


def validate(paths: list[Path], fmt: str | None = None, round_: str | None = None, status: str | None = None,
             root: Path | None = None) -> IngestReport:
    report = ingest(paths, fmt, round_, status, root)
    report.findings[:] = [_in_root(f, paths, root) for f in report.findings]
    if report.table.empty and not report.dispositions and not report.errors:
        report.findings.append(located("no-results", Source(" ".join(p.as_posix() for p in paths)),
                                       "a submission version or a results file", "nothing to read",
                                       "no results found"))
    return report


def _in_root(f: Finding, paths: list[Path], root: Path | None) -> Finding:
    """A finding on a version's file that names no root (ingest names the
    files it reads relative to their submissions root), in that root."""
    parts = f.where.file.split("/")
    if f.where.root is not None or len(parts) < 4 or not VERSION_DIR.match(parts[2]):
        return f
    found = root if root is not None else next(
        (r for r in (_root_of(p, parts[:3]) for p in paths) if r is not None), None)
    return replace(f, where=f.where.at(root=root_name(found))) if found is not None else f


def _root_of(path: Path, version: list[str]) -> Path | None:
    """The submissions root of a folder given (a root, round, submitter or
    version folder) that holds the version ``<round>/<submitter>/v<N>``, as
    the folder was named; None when it does not hold it."""
    for depth in (3, 2, 1, 0):
        if list(path.parts[len(path.parts) - depth:]) == version[:depth]:
            root = path
            for _ in range(depth):
                root = root.parent
            if (root.joinpath(*version)).is_dir():
                return root
    return None
