"""What git stores, read without a checkout: the base and the head of a
change, trees, the changes between them, and files written out byte for byte.

The gate reads these bytes, never a working tree's: a checkout passes blobs
through ``.gitattributes`` and ``core.autocrlf``, which a pull request or a
runner can set, so the same commit could be judged on different bytes.
``git cat-file`` hands over blobs as stored; ``git archive`` would not.
Git runs with argument lists only, never a shell.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pipeline.core.errors import ConfigError, UsageError

REGULAR, EXECUTABLE, SYMLINK, SUBMODULE = "100644", "100755", "120000", "160000"
DEFAULT_BASES = ("origin/HEAD", "main", "master")
WHAT = {"A": "added", "D": "deleted", "M": "changed"}   # a change's status, as a finding says it


class GitFailed(Exception):
    """A git command failed (an unknown ref, not a repository...)."""


def git(top: Path, *args: str, data: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
    try:
        done = subprocess.run(["git", "-c", "core.quotePath=false", *args], cwd=top, input=data,
                              capture_output=True, check=False,
                              env=None if env is None else {**os.environ, **env})
    except FileNotFoundError as exc:
        raise ConfigError("git is not installed") from exc
    if done.returncode:
        raise GitFailed(done.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
    return done.stdout


def text(top: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return git(top, *args, env=env).decode("utf-8", "surrogateescape").strip()


# ---- the base and the head -------------------------------------------------------------

def repo_top(cwd: Path) -> Path | None:
    """The top of the work tree holding CWD (None outside git)."""
    try:
        return Path(text(cwd, "rev-parse", "--show-toplevel"))
    except GitFailed:
        return None


def resolve_base(top: Path, base: str | None, env: dict | None = None) -> tuple[str, str, str]:
    """(ref, its tip commit, the merge base of the tip with HEAD): BASE, else
    origin/$GITHUB_BASE_REF, else the first of DEFAULT_BASES that exists."""
    github = (os.environ if env is None else env).get("GITHUB_BASE_REF")
    candidates = [base] if base else [f"origin/{github}"] if github else list(DEFAULT_BASES)
    for ref in candidates:
        try:
            tip = text(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
            return ref, tip, text(top, "merge-base", ref, "HEAD")
        except GitFailed:
            continue
    if base:
        raise UsageError(f"--base {base}: no such commit or ref, or no merge base with HEAD")
    raise ConfigError(f"no base ref found (tried {', '.join(candidates)}); give --base "
                      "(in CI, fetch with fetch-depth: 0)")


def merged(top: Path, tip: str, merge_base: str, head: str, scratch: Path) -> str:
    """The tree of the change MERGE_BASE..HEAD laid over the base's TIP (the
    change's side of a path both sides changed: it is judged as it would
    land), built in a scratch index; HEAD itself when the change starts at the tip."""
    if tip == merge_base:
        return head
    env = {"GIT_INDEX_FILE": str(scratch / "merged.index")}
    git(top, "read-tree", tip, env=env)
    info = b"".join(f"{'0' if c.status == 'D' else c.new_mode} {c.new_oid}\t".encode("ascii")
                    + c.path.encode("utf-8", "surrogateescape") + b"\0"
                    for c in changes(top, merge_base, head))
    try:
        git(top, "update-index", "-z", "--index-info", data=info, env=env)
    except GitFailed as exc:
        raise UsageError(f"the change does not apply to the base's tip {tip[:12]} ({exc}): "
                         "merge the base into the branch") from exc
    return text(top, "write-tree", env=env)


def head_commit(top: Path) -> str:
    try:
        return text(top, "rev-parse", "--verify", "HEAD^{commit}")
    except GitFailed as exc:
        raise ConfigError(f"no commit at HEAD in {top}: {exc}") from exc


def worktree(top: Path, scratch: Path, leave_out: tuple[str, ...] = ()) -> str:
    """The tree a commit of everything in the working tree would store (untracked
    files not ignored too), built in a scratch index; uncommitted changes under
    LEAVE_OUT stay as HEAD has them."""
    index = scratch / "worktree.index"
    real = top / text(top, "rev-parse", "--git-path", "index")
    env = {"GIT_INDEX_FILE": str(index)}
    if real.is_file():
        shutil.copyfile(real, index)      # its stat cache spares hashing unchanged files again
    else:
        git(top, "read-tree", "HEAD", env=env)
    git(top, "add", "--all", "--", ":(top)", env=env)
    if leave_out:                         # (an exclude pathspec naming an ignored file makes `add` fail)
        git(top, "reset", "--quiet", "HEAD", "--", *(f":(top,literal){p}" for p in leave_out), env=env)
    return text(top, "write-tree", env=env)


# ---- trees and changes -------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """A path of a commit's tree, its mode and its object id."""

    path: str
    mode: str
    oid: str


def tree(top: Path, rev: str, *under: str) -> list[Entry]:
    """Every file, link and submodule of REV under the folders UNDER (all when none)."""
    out = git(top, "ls-tree", "-r", "-z", "--full-tree", rev, "--", *(under or (".",)))
    entries = []
    for meta, _, path in (record.partition(b"\t") for record in out.split(b"\0") if record):
        mode, _kind, oid = meta.decode("ascii").split(" ")
        entries.append(Entry(path.decode("utf-8", "surrogateescape"), mode, oid))
    return entries


@dataclass(frozen=True)
class Change:
    """One path that differs between two trees: A, M (the mode too) or D, with the modes on each side."""

    path: str
    status: str
    old_mode: str
    new_mode: str
    new_oid: str = ""            # the object at HEAD (zeros for a deletion)


def changes(top: Path, base: str, head: str) -> list[Change]:
    """What differs from BASE to HEAD, path by path, on the stored bytes (no renames, no external diff)."""
    out = git(top, "diff", "--raw", "--no-abbrev", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
              "--ignore-submodules=none", base, head, "--")
    parts = out.split(b"\0")   # ":<modes> <oids> <status>", path, ... (one path each: no renames)
    found: list[Change] = []
    for meta, path in zip(parts[0::2], parts[1::2]):
        old_mode, new_mode, _old, new, status = meta.decode("ascii")[1:].split(" ")
        found.append(Change(path.decode("utf-8", "surrogateescape"), "M" if status[0] in "MT" else status[0],
                            old_mode, new_mode, new))
    return sorted(found, key=lambda c: c.path)


def first_changed_line(top: Path, base: str, head: str, path: str) -> int | None:
    """The first line of PATH's first hunk at HEAD (None for no textual hunk)."""
    out = git(top, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", base, head, "--",
              f":(top,literal){path}").decode("utf-8", "replace")
    for line in out.splitlines():
        if line.startswith("@@ -"):
            added = line.split(" ")[2]                 # +start[,count]
            return max(int(added[1:].split(",")[0]), 1)
    return None


def read(top: Path, rev: str, path: str) -> bytes | None:
    """One file's bytes at REV as git stores them (``cat-file blob`` applies no
    filter); None when REV has no regular file there."""
    entries = [e for e in tree(top, rev, path) if e.path == path and e.mode in (REGULAR, EXECUTABLE)]
    return git(top, "cat-file", "blob", entries[0].oid) if entries else None


def _safe(path: str) -> bool:
    """A tree path that stays inside the folder it is written into."""
    parts = path.split("/")
    return not path.startswith("/") and all(p not in ("", ".", "..") for p in parts) and \
        parts[0].lower() != ".git"


def materialise(top: Path, rev: str, under: list[str], scratch: Path) -> list[Entry]:
    """Write REV's files under the folders UNDER into SCRATCH as git stores
    them (blobs streamed byte for byte, links as links); return the submodules
    and the paths that would leave SCRATCH, left out for the caller to refuse."""
    entries = tree(top, rev, *under) if under else []
    scratch.mkdir(parents=True, exist_ok=True)
    skipped = [e for e in entries if e.mode not in (REGULAR, EXECUTABLE, SYMLINK) or not _safe(e.path)]
    wanted = [e for e in entries if e not in skipped]
    if not wanted:
        return skipped
    with subprocess.Popen(["git", "cat-file", "--batch"], cwd=top, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as batch:
        for entry in wanted:
            batch.stdin.write(f"{entry.oid}\n".encode("ascii"))
            batch.stdin.flush()
            header = batch.stdout.readline().decode("ascii").split(" ")
            if len(header) != 3 or header[1] != "blob":
                raise GitFailed(f"{entry.oid} ({entry.path}): not a blob ({' '.join(header[1:]).strip()})")
            size = int(header[2])
            target = scratch / entry.path
            target.parent.mkdir(parents=True, exist_ok=True)
            if entry.mode == SYMLINK:
                os.symlink(batch.stdout.read(size).decode("utf-8", "surrogateescape"), target)
            else:
                with open(target, "wb") as out:
                    _copy(batch.stdout, out, size)
            batch.stdout.read(1)                      # the newline after each object
        batch.stdin.close()
    return skipped


def _copy(source, out, size: int, chunk: int = 1 << 20) -> None:
    while size > 0:
        block = source.read(min(chunk, size))
        if not block:
            raise GitFailed("git cat-file ended early")
        out.write(block)
        size -= len(block)
