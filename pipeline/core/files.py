"""Writing outputs: every file goes to a temporary file and is renamed into
place, so a run that is killed leaves the previous output whole. Files get
the user's umask (0644 typically), as a plain ``open`` would.

:func:`check_paths` is the one place that refuses an output path equal to an
input, to another output, or to a tracked policy file (before anything is written)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.core.errors import UsageError
from pipeline.core.escape import csv_text
from pipeline.core.model import plain

if TYPE_CHECKING:   # pandas only where a table is written: the gate writes none
    import pandas as pd

# files whose content is policy, never an output (the gate's --output params.yaml destroyed it)
POLICY_FILES = ("params.yaml", "dvc.yaml", "dvc.lock", "claims.yaml", "pyproject.toml",
                ".pre-commit-config.yaml", ".pre-commit-hooks.yaml")


def umask() -> int:
    """The process's umask (reading it means setting it: set back at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_paths(inputs: dict[str, object], outputs: dict[str, object]) -> None:
    """Refuse (UsageError, exit 2) an output that is an input, another output,
    a tracked policy file, or under schemas/. ``inputs``/``outputs``: option
    name -> path (or list of paths); None and ``-`` (stdout) are skipped."""
    def flat(named: dict[str, object]):
        for name, value in named.items():
            for v in (value if isinstance(value, (list, tuple)) else [value]):
                if v is not None and str(v) != "-":
                    yield name, Path(v)

    seen: dict[Path, str] = {}
    for name, path in flat(inputs):
        seen.setdefault(path.resolve(), name)
    for name, path in flat(outputs):
        real = path.resolve()
        if real in seen:
            raise UsageError(f"{name} {path}: the same file as {seen[real]}; refusing to overwrite it")
        if path.name in POLICY_FILES or "schemas" in real.parts[-3:-1]:
            raise UsageError(f"{name} {path}: a policy file of the project, never an output")
        if path.is_dir():
            raise UsageError(f"{name} {path}: a folder, not a file")
        seen[real] = name


@contextmanager
def atomic_path(path: str | Path):
    """Yield a temporary path beside ``path``; rename it into place on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~umask())      # mkstemp makes it 0600; outputs are for others to read
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def atomic_dir(path: str | Path):
    """Yield a temporary folder beside ``path``; on success it replaces ``path``
    (the old one renamed aside, the new one into place, the old one removed): a
    run killed at any point leaves the old folder or the new one, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    tmp.chmod(0o777 & ~umask())          # mkdtemp makes it 0700; a site is for others to read
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


def write_table(frame: pd.DataFrame, path: str | Path) -> None:
    """CSV or Parquet by extension; a CSV's text cells neutralised for spreadsheets
    (:func:`pipeline.core.escape.csv_text`; ``read_frame`` of ingest restores them)."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if path.suffix == ".parquet":
            frame.to_parquet(tmp, index=False)
        else:
            tmp.write_text(csv_text(frame), encoding="utf-8", newline="")


def write_json(data: object, path: str | Path) -> None:
    write_text(json.dumps(plain(data), indent=2), path)


def write_text(text: str, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
