"""The seals of the store: the sha256 of a file, and one sha256 over a folder
(a submission tree) made of its files' relative paths and sha256s."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def sha256_file(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def sha256_tree(folder: Path) -> tuple[str | None, str | None]:
    """One sha256 over a folder: every file's relative path and sha256, in order.
    Returns (digest, None), or (None, the first symbolic link found)."""
    lines = []
    for here, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(dirs + files):
            path = Path(here) / name
            if path.is_symlink():
                return None, path.relative_to(folder).as_posix()
            if name in files:
                lines.append(f"{path.relative_to(folder).as_posix()}\0{sha256_file(path)}\n")
    return hashlib.sha256("".join(sorted(lines)).encode("utf-8")).hexdigest(), None
