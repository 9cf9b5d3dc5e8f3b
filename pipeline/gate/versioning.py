"""Versioning against the git base: which version folders a change adds or
touches, and the rules that hold between them and the base (immutable
versions, numbering, one version-folder name rule), on the paths of the base
and head trees (:mod:`pipeline.gate.gitstore`). Nothing here prints.
"""

from __future__ import annotations

from typing import Callable

from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.gate.gitstore import WHAT
from pipeline.store.manifests import MANIFEST
from pipeline.store.versions import Version, bad_version_folder, misplaced_finding


# ---- versioning rules ------------------------------------------------------------------

def _numbers(paths: list[str]) -> dict[tuple[str, str], set[int]]:
    """(round, submitter) -> the numbers of the versions PATHS lie in."""
    out: dict[tuple[str, str], set[int]] = {}
    for v, _ in map(Version.parse, paths):
        if v:
            out.setdefault((v.round, v.submitter), set()).add(v.number)
    return out


def versioning(changes: dict[str, str], base_files: list[str], head_files: list[str], shown: str | None,
               base: str, changed_line: Callable[[str], int | None]) -> tuple[list[Version], list[Finding]]:
    """The versions to gate and the versioning findings, from the changed paths and every
    file of the base and the head (relative to the submissions root, named SHOWN).
    CHANGED_LINE: the first changed line of a modified file; BASE: the base commit."""
    at_base, at_head = _numbers(base_files), _numbers(head_files)
    gated: set[Version] = set()
    found: list[Finding] = []
    for path, status in sorted(changes.items()):
        version, inner = Version.parse(path)
        if version is None:
            if path.count("/") < 2 and status != "D":   # beside the rounds or in a round folder
                found.append(misplaced_finding(path, shown))
            elif inner:
                folder, name = inner.rsplit("/", 1)
                found.append(bad_version_folder(path, folder, name, shown))
            continue
        key = (version.round, version.submitter)
        if version.number in at_base.get(key, set()):
            line = changed_line(path) if status == "M" else None
            found.append(_immutable(path, status, version, at_base[key] | at_head.get(key, set()), line,
                                    shown, base))
        elif version.number in at_head.get(key, set()):
            gated.add(version)
    found.extend(_numbering(sorted(gated, key=lambda v: v.number), at_base, shown))
    return sorted(gated, key=lambda v: (v.round, v.submitter, v.number)), found


def _immutable(path: str, status: str, version: Version, numbers: set[int], line: int | None,
               shown: str | None, base: str) -> Finding:
    nxt = max(numbers) + 1
    return located("version-immutable", Source(path, line=line, root=shown),
                   f"the file as sealed in v{version.number} at the base ({base[:12]})",
                   f"{WHAT[status]} since the base",
                   f"versions are immutable: add v{nxt} (mlrepro submit) instead of editing "
                   f"{version.display}")


def _numbering(new: list[Version], at_base: dict, shown: str | None) -> list[Finding]:
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
