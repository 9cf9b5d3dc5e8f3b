"""Writing outputs: every file goes to a temporary file and is renamed into
place, so a run that is killed leaves the previous output whole."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

UNVERIFIED_LABEL = "unverified"
UNVERIFIED_FOOTNOTE = "Result not verified by MLCommons Association."
COMPARISON_DISCLAIMER = (
    "Unverified results have not been through an MLPerf review and may use measurement "
    "methodologies and/or workload implementations that are inconsistent with the MLPerf "
    "specification for verified results."
)


@contextmanager
def atomic_path(path: str | Path):
    """Yield a temporary path beside ``path``; rename it into place on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())      # mkstemp makes it 0600; outputs are for others to read
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def atomic_dir(path: str | Path):
    """Yield a temporary folder beside ``path``; on success it replaces
    ``path`` (a site of many files, e.g. the GX Data Docs). The old folder is
    renamed aside, the new one renamed into place, the old one removed: a run
    killed at any point leaves at ``path`` the old folder or the new one,
    never a partial one (between the two renames, the whole old folder is
    still there under ``.<name>.old-*``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    tmp.chmod(0o777 & ~_umask())          # mkdtemp makes it 0700; a site is for others to read
    try:
        yield tmp
        old = None
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
            os.replace(path, old / path.name)
        os.replace(tmp, path)
        if old is not None:
            shutil.rmtree(old)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_table(frame: pd.DataFrame, path: str | Path) -> None:
    """CSV or Parquet by extension."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if path.suffix == ".parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False, lineterminator="\n")


def write_json(data: object, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n",
                       encoding="utf-8")


def label_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the MLCommons label and footnote to a table carrying a status column."""
    frame = frame.copy()
    unverified = frame["status"] != "verified"
    frame["label"] = ["unverified" if u else "verified" for u in unverified]
    frame["footnote"] = [UNVERIFIED_FOOTNOTE if u else "" for u in unverified]
    return frame
