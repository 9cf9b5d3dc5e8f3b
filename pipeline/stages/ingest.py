"""The ``ingest`` stage (``mlrepro ingest-all``): a whole submissions root,
one submitter at a time (:mod:`pipeline.ingest.root`), into the canonical
table, its rejected rows, every finding and the versions table.

With a cache folder, a submitter's part is kept as four files (PARTS) under a
key made of everything it is computed from: the submitter folder's files
(path and bytes), the code of the ``pipeline`` package, the rules under
``schemas/`` and the interpreter's version. A new partner folder, or a new
version of one partner, is read on the next run; every unchanged submitter
comes from the cache. The joined outputs do not depend on what was cached
(a test checks it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from pipeline.core.errors import ConfigError
from pipeline.core.files import atomic_dir, write_json, write_table
from pipeline.core.findings import TableReport
from pipeline.core.model import REJECTED, SET_ASIDE
from pipeline.core.rules import Rules
from pipeline.core.vocabulary import tally
from pipeline.ingest import table
from pipeline.ingest.root import (PARTS, Part, ingest_submitters, merge_parts, part_of,  # noqa: F401
                                  submitter_folders, validate_each)
from pipeline.store import clock
from pipeline.store.manifests import misplaced_files

CACHE_FORMAT = "2"
CODE = Path(__file__).resolve().parent.parent


def run(rules: Rules, root: Path, cache: Path | None, rejected_out: Path, findings_out: Path,
        versions_out: Path) -> TableReport:
    """The stage: ROOT ingested (through CACHE), its rejected rows, every recorded
    finding and the versions written; the table is the report's (the CLI writes it).
    The report holds no finding: each is recorded as data (FINDINGS_OUT)."""
    merged, read = ingest_root(rules, root, cache)
    write_table(merged.rejected, rejected_out)
    write_json(merged.findings, findings_out)
    write_table(merged.versions, versions_out)
    got = tally(merged.rejected.get("outcome", []), (REJECTED, SET_ASIDE))
    return TableReport(merged.table, "ResultRow", {
        "accepted": len(merged.table), "rejected": got[REJECTED], "set_aside": got[SET_ASIDE],
        "recorded_findings": len(merged.findings), **read}, labelled=True)


def ingest_root(rules: Rules, root: Path, cache: Path | None = None) -> tuple[Part, dict]:
    """ROOT's submitters joined (each read, or taken from CACHE), with the
    findings of files outside every submitter folder first; and how many were
    read and taken from the cache."""
    folders = submitter_folders(root)
    if not folders:
        raise ConfigError(f"{root}: no <round>/<submitter> folders")
    code = code_digest(rules)
    record = _record_lines(root)
    entries = {}
    for folder in folders:
        key = folder_key(folder, root, code, record.get(folder.relative_to(root).as_posix(), ""))
        entries[folder] = cache / f"{folder.parent.name}-{folder.name}.{key[:24]}" if cache else None
    to_read = [f for f in folders if entries[f] is None or not all((entries[f] / n).is_file() for n in PARTS)]
    parts = dict(zip(to_read, ingest_submitters(rules, to_read, root, folders)))
    for folder in folders:
        if folder not in parts:
            parts[folder] = read_part(entries[folder])
        elif entries[folder] is not None:
            with atomic_dir(entries[folder]) as tmp:   # into the cache whole or not at all
                write_part(parts[folder], tmp)
    merged = merge_parts([parts[folder] for folder in folders])
    merged = replace(merged, findings=[f.to_dict() for f in misplaced_files(root)] + merged.findings)
    if cache is not None:
        _prune(cache, list(entries.values()))
    return merged, {"submitters_read": len(to_read), "submitters_cached": len(folders) - len(to_read)}


def write_part(part: Part, out: Path) -> None:
    """A part as the four files of PARTS in the folder ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    write_table(part.table, out / "results.parquet")
    write_table(part.rejected, out / "rejected.csv")
    write_json(part.findings, out / "findings.json")
    write_table(part.versions, out / "versions.csv")


def read_part(folder: Path) -> Part:
    """A part :func:`write_part` wrote."""
    return Part(table.read_frame(folder / "results.parquet"),
                table.read_frame(folder / "rejected.csv", dtype=str, keep_default_na=False),
                json.loads((folder / "findings.json").read_text(encoding="utf-8")),
                table.read_frame(folder / "versions.csv", dtype=str, keep_default_na=False))


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


def _prune(cache: Path, used: list[Path]) -> None:
    """Keep the entries this run used; drop the rest (older keys, gone submitters)."""
    keep = {p.name for p in used}
    for path in cache.iterdir():
        if path.name not in keep:
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
