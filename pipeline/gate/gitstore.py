"""What git stores, read without a checkout: the tree of a commit, the changes
between two commits, and the files of a commit written out byte for byte.

The gate hashes and reads these bytes, never a working tree's: a checkout
passes blobs through ``.gitattributes`` (``eol``, ``text``, smudge filters)
and ``core.autocrlf``, which a pull request or a runner can set, so the same
commit could be judged on different bytes. ``git cat-file --batch`` hands
over blobs as stored, whatever the attributes say; ``git archive`` would not
(it applies them). Git runs with argument lists only, never a shell.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pipeline.core.errors import ConfigError

REGULAR, EXECUTABLE, SYMLINK, SUBMODULE = "100644", "100755", "120000", "160000"
ZERO = "0" * 40


class GitFailed(Exception):
    """A git command failed (an unknown ref, not a repository...)."""


def git(top: Path, *args: str, data: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", "-c", "core.quotePath=false", *args], cwd=top, input=data,
                              capture_output=True, check=False)
    except FileNotFoundError as exc:
        raise ConfigError("git is not installed") from exc
    if done.returncode:
        raise GitFailed(done.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
    return done.stdout


@dataclass(frozen=True)
class Entry:
    """A path of a commit's tree: its mode (100644, 100755, 120000 link,
    160000 submodule) and its object id."""

    path: str
    mode: str
    oid: str


def tree(top: Path, commit: str, under: str = ".") -> list[Entry]:
    """Every file, link and submodule of COMMIT under UNDER (repository-relative)."""
    out = git(top, "ls-tree", "-r", "-z", "--full-tree", commit, "--", under)
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, _kind, oid = meta.decode("ascii").split(" ")
        entries.append(Entry(path.decode("utf-8", "surrogateescape"), mode, oid))
    return entries


@dataclass(frozen=True)
class Change:
    """One path that differs between two trees: A (added), M (modified, its
    mode included), D (deleted), with the modes on each side."""

    path: str
    status: str
    old_mode: str
    new_mode: str


def changes(top: Path, base: str, head: str | None) -> list[Change]:
    """What differs from BASE to HEAD (a commit), or to the working tree and the
    index when HEAD is None (untracked files count as added)."""
    args = ["diff", "--raw", "-z", "--no-renames", "--no-ext-diff", "--ignore-submodules=none", base]
    out = git(top, *(args + ([head] if head else [])), "--")
    parts = out.split(b"\0")
    found: list[Change] = []
    i = 0
    while i < len(parts) - 1:
        meta = parts[i].decode("ascii")
        if not meta.startswith(":"):
            i += 1
            continue
        old_mode, new_mode, _old, _new, status = meta[1:].split(" ")
        path = parts[i + 1].decode("utf-8", "surrogateescape")
        found.append(Change(path, "M" if status[0] in "MT" else status[0], old_mode, new_mode))
        i += 2
    if head is None:
        others = git(top, "ls-files", "--others", "--exclude-standard", "-z")
        for raw in others.split(b"\0"):
            if raw:
                path = raw.decode("utf-8", "surrogateescape")
                full = top / path
                mode = SYMLINK if full.is_symlink() else (EXECUTABLE if os.access(full, os.X_OK) else REGULAR)
                found.append(Change(path, "A", "000000", mode))
    return sorted(found, key=lambda c: c.path)


def blobs(top: Path, oids: list[str]) -> dict[str, bytes]:
    """The bytes git stores for each blob id (no attribute, filter or eol conversion)."""
    wanted = sorted(set(oids))
    if not wanted:
        return {}
    out = git(top, "cat-file", "--batch", data="".join(f"{oid}\n" for oid in wanted).encode("ascii"))
    found: dict[str, bytes] = {}
    pos = 0
    for oid in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode("ascii").split(" ")
        if len(header) != 3 or header[1] != "blob":
            raise GitFailed(f"{oid}: not a blob ({' '.join(header[1:])})")
        size = int(header[2])
        found[oid] = out[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
    return found


def materialise(top: Path, commit: str, under: str, scratch: Path) -> list[Entry]:
    """Write COMMIT's files under UNDER into the scratch folder SCRATCH (same
    relative paths; it must not exist) as git stores them: blobs byte for
    byte, links as links, submodules left out (returned, so that a caller can
    refuse them)."""
    entries = tree(top, commit, under)
    contents = blobs(top, [e.oid for e in entries if e.mode in (REGULAR, EXECUTABLE, SYMLINK)])
    scratch.mkdir(parents=True)
    skipped = []
    for entry in entries:
        target = scratch / entry.path
        target.parent.mkdir(parents=True, exist_ok=True)
        if entry.mode == SYMLINK:
            os.symlink(contents[entry.oid].decode("utf-8", "surrogateescape"), target)
        elif entry.mode in (REGULAR, EXECUTABLE):
            target.write_bytes(contents[entry.oid])
        else:
            skipped.append(entry)
    return skipped
