"""``mlrepro validate``: every check ingest makes on submissions or raw files
(manifests, hashes, formats, rows), writing nothing; a run that finds no
result at all says so.

Every file is named as the user named it: a raw file as given; a file under
a submissions root (which ingest and the store locate relative to the root,
as the table's sources are) under the root as given, or as the folder given
lies in it (``submissions/v6.0/Dell`` lies in ``submissions``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.ingest.submissions import IngestReport, ingest
from pipeline.store.versions import root_name


def validate(paths: list[Path], fmt: str | None = None, round_: str | None = None, status: str | None = None,
             root: Path | None = None) -> IngestReport:
    report = ingest(paths, fmt, round_, status, root)
    folders = [root] if root is not None else [p for p in paths if p.is_dir()]
    report.findings[:] = [_in_root(f, folders) for f in report.findings]
    if report.table.empty and not report.dispositions and not report.errors:
        report.findings.append(located("no-results", Source(" ".join(p.as_posix() for p in paths)),
                                       "a submission version or a results file", "nothing to read",
                                       "no results found"))
    return report


def _in_root(f: Finding, folders: list[Path]) -> Finding:
    """F in the submissions root it was found under, when its file is named
    relative to one (no root named, a relative path)."""
    if f.where.root is not None or not f.where.file or f.where.file.startswith("/"):
        return f
    parts = f.where.file.split("/")
    for folder in folders:
        root = _root_of(folder, parts)
        if root is not None:
            return replace(f, where=f.where.at(root=root_name(root)))
    return f


def _root_of(folder: Path, parts: list[str]) -> Path | None:
    """The submissions root that FOLDER (a root, round, submitter or version
    folder, as named) lies in, when the root-relative path PARTS lies under
    FOLDER; None when it does not."""
    for depth in (3, 2, 1, 0):
        if depth < len(parts) and list(folder.parts[len(folder.parts) - depth:]) == parts[:depth]:
            root = folder
            for _ in range(depth):
                root = root.parent
            if root.joinpath(parts[0]).exists() or root.joinpath(parts[0]).is_symlink():
                return root
    return None
