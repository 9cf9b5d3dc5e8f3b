"""Versioning against the git base: which version folders a change adds or
touches, and the rules that hold between them and the base (immutable
versions, numbering, one version-folder name rule). Git is run with argument
lists only; nothing here prints.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pipeline.core.errors import ConfigError, UsageError
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.store.manifests import MANIFEST
from pipeline.store.versions import VERSION_DIR, bad_version_folder, misplaced_finding

DEFAULT_BASES = ("origin/HEAD", "main", "master")


@dataclass(frozen=True)
class Gated:
    """A version folder under the gate; ``display`` is relative to the root."""

    round: str
    submitter: str
    number: int

    @property
    def display(self) -> str:
        return f"{self.round}/{self.submitter}/v{self.number}"

    def holds(self, root_relative: str) -> bool:
        return root_relative.startswith(self.display + "/") or root_relative == self.display


# ---- git -------------------------------------------------------------------------------

def _git(args: list[str], cwd: Path) -> str:
    try:
        done = subprocess.run(["git", "-c", "core.quotePath=false", *args], cwd=cwd,
                              capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise ConfigError("git is not installed") from exc
    if done.returncode:
        raise _GitFailed(done.stderr.strip() or f"git {' '.join(args)} failed")
    return done.stdout


class _GitFailed(Exception):
    pass


def repo_top(cwd: Path) -> Path | None:
    try:
        return Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    except _GitFailed:
        return None


def resolve_base(top: Path, base: str | None, env: dict | None = None) -> tuple[str, str]:
    """(ref, merge-base commit). An unknown --base is a usage error; no
    default base at all is a configuration problem (e.g. a shallow clone)."""
    env = os.environ if env is None else env
    if base:
        candidates = [base]
    elif env.get("GITHUB_BASE_REF"):
        candidates = [f"origin/{env['GITHUB_BASE_REF']}"]
    else:
        candidates = list(DEFAULT_BASES)
    for ref in candidates:
        try:
            _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], top)
            return ref, _git(["merge-base", ref, "HEAD"], top).strip()
        except _GitFailed:
            continue
    if base:
        raise UsageError(f"--base {base}: no such commit or ref, or no merge base with HEAD")
    raise ConfigError(f"no base ref found (tried {', '.join(candidates)}); give --base "
                      "(in CI, fetch with fetch-depth: 0)")


def _split_z(text: str) -> list[str]:
    return [p for p in text.split("\0") if p]


def changes_since(folder: Path, commit: str) -> dict[str, str]:
    """Path relative to FOLDER -> A, M or D for every file under FOLDER that
    differs between the base commit and the working tree (untracked files
    count as A)."""
    parts = _split_z(_git(["diff", "--relative", "--name-status", "--no-renames", "-z", commit, "--", "."],
                          folder))
    out = {path: ("M" if status[0] in "MTU" else status[0])
           for status, path in zip(parts[0::2], parts[1::2])}
    for path in _split_z(_git(["ls-files", "--others", "--exclude-standard", "-z", "--", "."], folder)):
        out[path] = "A"
    return out


def files_at(folder: Path, commit: str) -> list[str]:
    """Every file under FOLDER at COMMIT, relative to FOLDER."""
    return _split_z(_git(["ls-tree", "-r", "--name-only", "-z", commit, "--", "."], folder))


def first_changed_line(folder: Path, commit: str, path: str) -> int | None:
    text = _git(["diff", "-U0", "--no-color", commit, "--", path], folder)
    m = re.search(r"^@@ -\d+(?:,\d+)? \+(\d+)", text, re.MULTILINE)
    return max(int(m.group(1)), 1) if m else None


# ---- versioning rules ------------------------------------------------------------------

def _parse(rel: str) -> tuple[Gated | None, str | None]:
    """(version, file inside it) for a root-relative path; (None, why) otherwise."""
    parts = rel.split("/")
    if len(parts) < 3:
        return None, None                           # a file beside the rounds: not a version
    m = VERSION_DIR.match(parts[2])
    if len(parts) == 3 or not m:
        return None, "/".join(parts[:3])
    return Gated(parts[0], parts[1], int(m.group(1))), "/".join(parts[3:])


def _numbers(versions) -> dict[tuple[str, str], set[int]]:
    out: dict[tuple[str, str], set[int]] = {}
    for v in versions:
        out.setdefault((v.round, v.submitter), set()).add(v.number)
    return out


def _on_disk(root: Path, key: tuple[str, str]) -> set[int]:
    folder = root / key[0] / key[1]
    if not folder.is_dir():
        return set()
    return {int(m.group(1)) for p in folder.iterdir() if p.is_dir() and (m := VERSION_DIR.match(p.name))}


def versioning(changes: dict[str, str], base_files: list[str], root: Path, shown: str | None,
               commit: str) -> tuple[list[Gated], list[Finding]]:
    """The versions to gate and the versioning findings, from the changed paths
    (relative to the submissions root ROOT, named SHOWN in locations)."""
    at_base = _numbers(v for v, _ in (_parse(p) for p in base_files) if v)
    gated: set[Gated] = set()
    found: list[Finding] = []
    for path, status in sorted(changes.items()):
        version, inner = _parse(path)
        if version is None:
            if path.count("/") < 2 and status != "D":   # beside the rounds or in a round folder
                found.append(misplaced_finding(path, shown))
            elif inner:
                folder, name = inner.rsplit("/", 1)
                found.append(bad_version_folder(path, folder, name, shown))
            continue
        key = (version.round, version.submitter)
        if version.number in at_base.get(key, set()):
            found.append(_immutable(path, status, version, at_base[key] | _on_disk(root, key), root, shown,
                                    commit))
        elif (root / version.display).is_dir():
            gated.add(version)
    found.extend(_numbering(sorted(gated, key=lambda v: v.number), at_base, shown))
    return sorted(gated, key=lambda v: (v.round, v.submitter, v.number)), found


def _immutable(path: str, status: str, version: Gated, numbers: set[int], root: Path, shown: str | None,
               commit: str) -> Finding:
    nxt = max(numbers) + 1
    what = {"A": "added", "D": "deleted", "M": "changed"}[status]
    line = first_changed_line(root, commit, path) if status == "M" else None
    return located("version-immutable", Source(path, line=line, root=shown),
                   f"the file as sealed in v{version.number} at the base ({commit[:12]})",
                   f"{what} since the base",
                   f"versions are immutable: add v{nxt} (mlrepro submit) instead of editing "
                   f"{version.display}")


def _numbering(new: list[Gated], at_base: dict, shown: str | None) -> list[Finding]:
    found, expected = [], {}
    for v in new:
        key = (v.round, v.submitter)
        want = expected.setdefault(key, max(at_base.get(key, set()), default=0) + 1)
        if v.number == want:
            expected[key] = want + 1
            continue
        why = "a reused number" if v.number < want else f"a gap (v{want} is missing)"
        found.append(located("version-not-next", Source(f"{v.display}/{MANIFEST}", root=shown),
                             f"v{want}", f"v{v.number}",
                             f"a new version must be numbered next, not {why}: add v{want}"))
    return found
