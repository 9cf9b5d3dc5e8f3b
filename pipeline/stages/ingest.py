"""The ``ingest`` stage (``mlrepro ingest-all``): a whole submissions root,
one submitter at a time, into the canonical table, its rejected rows, every
finding and the versions table.

Every ``<round>/<submitter>/`` folder under the root is ingested on its own
(the newest sealed version of each status is used) into four parts,
``results.parquet``, ``rejected.csv``, ``findings.json`` and ``versions.csv``,
and the parts are joined by :func:`pipeline.ingest.root.merge_parts`. With a
cache folder, a submitter's parts are kept under a key made of everything
they are computed from: the submitter folder's files (path and bytes), the
code of the ``pipeline`` package, the rules under ``schemas/`` and the
interpreter's version. A new partner folder, or a new version of one partner,
is read on the next run; every unchanged submitter comes from the cache. A
cached part is the very bytes a fresh read writes, so the joined outputs do
not depend on what was cached (a test checks it).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from pipeline.core.errors import ConfigError
from pipeline.core.files import write_json, write_table
from pipeline.core.rules import Rules
from pipeline.ingest import submissions as ingest, walk
from pipeline.ingest.root import PARTS, MergeReport, merge_parts, submitter_folders, validate_each, versions_frame
from pipeline.store import clock
from pipeline.store.manifests import misplaced_files

CACHE_FORMAT = "2"
CODE = Path(__file__).resolve().parent.parent
_FOLDER_PREFIX = re.compile(r"^([^/]+/[^/]+)/")


def run(rules: Rules, root: Path, cache: Path | None, rejected_out: Path, findings_out: Path,
        versions_out: Path) -> MergeReport:
    """The stage: ROOT ingested (through CACHE), its rejected rows, every recorded
    finding and the versions written; the table is the report's (the CLI writes it)."""
    report = ingest_root(rules, root, cache)
    write_table(report.rejected, rejected_out)
    write_json(report.recorded, findings_out)
    write_table(report.versions, versions_out)
    return report


def ingest_root(rules: Rules, root: Path, cache: Path | None = None) -> MergeReport:
    folders = submitter_folders(root)
    if not folders:
        raise ConfigError(f"{root}: no <round>/<submitter> folders")
    code = code_digest(rules)
    record = _record_lines(root)
    counts = {"submitters_read": 0, "submitters_cached": 0}
    with tempfile.TemporaryDirectory(prefix="mlrepro-ingest-") as work:
        entries, to_read = {}, []
        for folder in folders:
            name = f"{folder.parent.name}-{folder.name}"
            key = folder_key(folder, root, code, record.get(folder.relative_to(root).as_posix(), ""))
            entries[folder] = cache / f"{name}.{key[:24]}" if cache else None
            if entries[folder] is None or not all((entries[folder] / n).is_file() for n in PARTS):
                to_read.append((folder, Path(work) / name))
        ingest_submitters(rules, to_read, root, folders)
        parts = dict(to_read)
        for folder, part in to_read:
            if entries[folder] is not None:
                parts[folder] = _store(part, entries[folder])
        counts = {"submitters_read": len(to_read), "submitters_cached": len(folders) - len(to_read)}
        report = merge_parts(rules, [parts.get(folder) or entries[folder] for folder in folders])
    report.recorded[:0] = [f.to_dict() for f in misplaced_files(root)]
    if cache is not None:
        _prune(cache, list(entries.values()))
    report.cache = counts
    return report


def ingest_submitters(rules: Rules, todo: list[tuple[Path, Path]], root: Path, folders: list[Path]) -> None:
    """Each (submitter folder, out) of ``todo`` read into its four parts at
    ``out``: the bytes that :func:`write_part` of its ingest alone writes. The
    rows of all of them are checked against the table schema in one call (a
    call costs about the same for 10 rows as for 1,000)."""
    visible = clock.project_clock(rules, root) or (lambda version: None)
    scans: walk.Scans = {}   # the root's versions found once for all the folders, each folder read once
    collected = [ingest.read_unchecked(rules, [folder], root=root, visible=visible, scans=scans)
                 for folder, _ in todo]
    verdicts = validate_each(rules, [frame for _, frame in collected], root.as_posix())
    for (folder, out), (report, _), validated in zip(todo, collected, verdicts):
        write_part(ingest.settle(report, validated), root, [f for f in folders if f != folder], out)


def write_part(report, root: Path, others: list[Path], out: Path) -> None:
    """One submitter's four parts. Findings about other submitters' folders
    (the store lists the whole root) are left to their own parts."""
    foreign = {f.relative_to(root).as_posix() for f in others}
    # files outside every submitter folder are the root's: recorded once, by ingest_root
    findings = [f for f in report.findings if _owner(f.where.file) not in foreign and f.code != "misplaced-file"]
    out.mkdir(parents=True, exist_ok=True)
    write_table(report.table, out / "results.parquet")
    write_table(report.dispositions_frame(), out / "rejected.csv")
    write_json([f.to_dict() for f in findings], out / "findings.json")
    write_table(versions_frame(report.versions), out / "versions.csv")


def _owner(file: str) -> str | None:
    m = _FOLDER_PREFIX.match(str(file))
    return m.group(1) if m else None


def code_digest(rules: Rules) -> str:
    """The code and rules a part is computed from: every file of the pipeline
    package and of the schemas folder in use, and the interpreter's version."""
    digest = hashlib.sha256(f"{CACHE_FORMAT}\0{sys.version}\0".encode())
    for base in (CODE, rules.folder):
        _hash_tree(digest, base, skip=("__pycache__",))
    return digest.hexdigest()


def _record_lines(root: Path) -> dict[str, str]:
    """``<round>/<submitter>`` -> its versions' entries in the visibility record,
    as text: part of its cache key (when they became visible decides their status)."""
    out: dict[str, str] = {}
    for display, when in sorted((clock.project_record(root) or {}).items()):
        folder = display.rsplit("/", 1)[0]
        out[folder] = out.get(folder, "") + f"{display} {when.isoformat()}\n"
    return out


def folder_key(folder: Path, root: Path, code: str, visible: str = "") -> str:
    digest = hashlib.sha256(f"{code}\0{root.as_posix()}\0{folder.as_posix()}\0{visible}\0".encode())
    _hash_tree(digest, folder)
    return digest.hexdigest()


def _hash_tree(digest, base: Path, skip: tuple[str, ...] = ()) -> None:
    for path in sorted(p for p in base.rglob("*") if not set(p.relative_to(base).parts) & set(skip)):
        rel = path.relative_to(base).as_posix()
        if path.is_symlink():
            digest.update(f"L\0{rel}\0{os.readlink(path)}\0".encode())
        elif path.is_file():
            digest.update(f"F\0{rel}\0{path.stat().st_size}\0".encode())
            digest.update(path.read_bytes())
        elif path.is_dir():
            digest.update(f"D\0{rel}\0".encode())


def _store(part: Path, entry: Path) -> Path:
    """Copy ``part`` into the cache as ``entry``, whole or not at all."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=entry.parent))
    try:
        for name in PARTS:
            shutil.copyfile(part / name, tmp / name)
        if entry.exists():
            shutil.rmtree(entry)
        os.replace(tmp, entry)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return entry


def _prune(cache: Path, used: list[Path]) -> None:
    """Keep the entries this run used; drop the rest (older keys, gone submitters)."""
    keep = {p.name for p in used}
    for path in cache.iterdir():
        if path.name not in keep:
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
