"""The canonical table of a whole submissions root, read one submitter at a
time, and the join of per-submitter ingest outputs.

:func:`ingest_root` is the DVC pipeline's ``ingest`` stage: every
``<round>/<submitter>/`` folder under the root is ingested on its own (the
newest sealed version of each status is used) into four parts,
``results.parquet``, ``rejected.csv``, ``findings.json`` and ``versions.csv``,
and the parts are joined by :func:`merge_parts`. With a cache folder, a
submitter's parts are kept under a key made of everything they are computed
from: the submitter folder's files (path and bytes), the code of the
``pipeline`` package, the rules under ``schemas/`` and the interpreter's
version. A new partner folder, or a new version of one partner, is read on
the next run; every unchanged submitter comes from the cache. A cached part
is the very bytes a fresh read writes, so the joined outputs do not depend on
what was cached (a test checks it).

:func:`merge` joins the parts found under a folder (``mlrepro merge``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import table
from .errors import ConfigError
from .findings import Finding, ReportShape

PARTS = ("results.parquet", "rejected.csv", "findings.json", "versions.csv")
VERSION_COLUMNS = ["round", "submitter", "version", "path", "used", "status_declared", "status",
                   "submitted_at", "supersedes", "withdraws"]
CACHE_FORMAT = "2"
CODE = Path(__file__).resolve().parent
_FOLDER_PREFIX = re.compile(r"^([^/]+/[^/]+)/")


@dataclass
class MergeReport(ReportShape):
    """findings: the joined table's own (schema); ``recorded``: every finding
    the ingest stages recorded, kept as data."""

    table: pd.DataFrame
    rejected: pd.DataFrame
    recorded: list[dict]
    versions: pd.DataFrame
    findings: list[Finding]
    cache: dict = field(default_factory=dict)   # submitters read / taken from the cache

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
        outcome = self.rejected["outcome"] if "outcome" in self.rejected else pd.Series(dtype=str)
        return {"accepted": len(self.table), "rejected": int((outcome == "rejected").sum()),
                "excluded": int((outcome == "excluded").sum()),
                "recorded_findings": len(self.recorded), **self.cache}


def merge(folder: Path) -> MergeReport:
    parts = sorted(p.parent for p in folder.rglob("results.parquet"))
    if not parts:
        raise ConfigError(f"{folder}: no ingest outputs (results.parquet) found")
    return merge_parts(parts, folder.as_posix())


def merge_parts(parts: list[Path], display: str = "<table>") -> MergeReport:
    """Join part folders, in the order given, into one validated table
    (``display`` names it in the schema's findings)."""
    tables, rejected, findings, versions = [], [], [], []
    for d in parts:
        missing = [n for n in PARTS if not (d / n).exists()]
        if missing:
            raise ConfigError(f"{d}: incomplete ingest output, missing {missing}")
        tables.append(table.read(d / "results.parquet"))
        rejected.append(table.read_frame(d / "rejected.csv", dtype=str, keep_default_na=False))
        findings.extend(json.loads((d / "findings.json").read_text(encoding="utf-8")))
        versions.append(table.read_frame(d / "versions.csv", dtype=str, keep_default_na=False))
    frame = pd.concat(tables, ignore_index=True)
    frame = frame.sort_values(["round", "submitter", "source"], kind="stable").reset_index(drop=True)
    accepted, bad, found = table.validate(frame, display)
    rej = pd.concat(rejected, ignore_index=True)
    if len(bad):
        rej = pd.concat([rej, pd.DataFrame({"source": bad["source"], "outcome": "rejected",
                                            "codes": "schema-violation",
                                            "reason": "the row fails the canonical table schema"})],
                        ignore_index=True)
    return MergeReport(accepted.reset_index(drop=True), rej, findings + [f.to_dict() for f in found],
                       pd.concat(versions, ignore_index=True), found)


# ---- a whole root, one submitter at a time, through a cache ----------------------------

def submitter_folders(root: Path) -> list[Path]:
    """Every ``<round>/<submitter>`` folder (hidden ones aside), sorted."""
    if not root.is_dir():
        raise ConfigError(f"{root}: no such submissions root")
    return sorted(s for r in root.iterdir() if r.is_dir() and not r.name.startswith(".")
                  for s in r.iterdir() if s.is_dir() and not s.name.startswith("."))


def ingest_root(root: Path, cache: Path | None = None) -> MergeReport:
    folders = submitter_folders(root)
    if not folders:
        raise ConfigError(f"{root}: no <round>/<submitter> folders")
    code = code_digest()
    used: list[Path] = []
    counts = {"submitters_read": 0, "submitters_cached": 0}
    with tempfile.TemporaryDirectory(prefix="mlrepro-ingest-") as work:
        parts = []
        for folder in folders:
            name = f"{folder.parent.name}-{folder.name}"
            entry = cache / f"{name}.{folder_key(folder, root, code)[:24]}" if cache else None
            if entry is not None and all((entry / n).is_file() for n in PARTS):
                counts["submitters_cached"] += 1
                parts.append(entry)
            else:
                part = Path(work) / name
                ingest_submitter(folder, root, [f for f in folders if f != folder], part)
                counts["submitters_read"] += 1
                parts.append(_store(part, entry) if entry is not None else part)
            if entry is not None:
                used.append(entry)
        report = merge_parts(parts)
    if cache is not None:
        _prune(cache, used)
    report.cache = counts
    return report


def ingest_submitter(folder: Path, root: Path, others: list[Path], out: Path) -> None:
    """One submitter folder's four parts. Findings about other submitters'
    folders (the store lists the whole root) are left to their own parts."""
    from . import ingest
    from .outputs import write_json, write_table

    report = ingest.ingest([folder], root=root)
    foreign = {f.relative_to(root).as_posix() for f in others}
    findings = [f for f in report.findings if _owner(f.file) not in foreign]
    out.mkdir(parents=True, exist_ok=True)
    write_table(report.table, out / "results.parquet")
    write_table(report.dispositions_frame(), out / "rejected.csv")
    write_json([f.to_dict() for f in findings], out / "findings.json")
    write_table(versions_frame(report.versions), out / "versions.csv")


def versions_frame(versions: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(versions, columns=VERSION_COLUMNS).astype({"supersedes": "Int64"})


def _owner(file: str) -> str | None:
    m = _FOLDER_PREFIX.match(str(file))
    return m.group(1) if m else None


def code_digest() -> str:
    """The code and rules a part is computed from: every file of the pipeline
    package and of the schemas folder in use, and the interpreter's version."""
    from .rules import schemas_dir

    digest = hashlib.sha256(f"{CACHE_FORMAT}\0{sys.version}\0".encode())
    for base in (CODE, schemas_dir()):
        _hash_tree(digest, base, skip=("__pycache__",))
    return digest.hexdigest()


def folder_key(folder: Path, root: Path, code: str) -> str:
    digest = hashlib.sha256(f"{code}\0{root.as_posix()}\0{folder.as_posix()}\0".encode())
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
