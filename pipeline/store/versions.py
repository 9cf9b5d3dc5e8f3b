"""The layout of a submissions root, ``<root>/<round>/<submitter>/v<N>/``: its
version folders, and a finding for everything not where a version belongs.
Nothing here reads a manifest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pipeline.core.errors import UsageError
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source, version_number

LAYOUT = "<round>/<submitter>/v<N>/<file>"


@dataclass(unsafe_hash=True)
class Version:
    """A version ``<round>/<submitter>/v<N>``, and when read from disk its folder
    and manifest. Two versions are the same when their round, submitter and number are."""

    path: Path | None = field(compare=False)
    display: str = field(compare=False)   # relative to the submissions root
    round: str
    submitter: str
    number: int
    manifest: "Manifest | None" = field(default=None, compare=False)   # noqa: F821 (store.manifests.Manifest)
    findings: list[Finding] = field(default_factory=list, compare=False)
    tampered: dict[str, Finding] = field(default_factory=dict, compare=False)  # file -> why its rows are rejected
    root: Path | None = field(default=None, compare=False)   # the submissions root read (no link leaves it)

    @classmethod
    def named(cls, round_: str, submitter: str, number: int) -> Version:
        """A version by its name alone (no folder read)."""
        return cls(None, f"{round_}/{submitter}/v{number}", round_, submitter, number)

    @classmethod
    def parse(cls, rel: str) -> tuple[Version | None, str | None]:
        """The one parser of a root-relative ``<round>/<submitter>/v<N>[/<file>]``:
        (the version, the file inside it or ""); (None, the first three parts)
        when the third is not ``v<N>``; (None, None) for fewer than three parts."""
        parts = rel.split("/")
        if len(parts) < 3:
            return None, None
        number = version_number(parts[2])
        if number is None or not parts[0] or not parts[1]:
            return None, "/".join(parts[:3])
        return cls.named(parts[0], parts[1], number), "/".join(parts[3:])

    def holds(self, root_relative: str) -> bool:
        """Whether a path relative to the submissions root lies in this version."""
        name = f"{self.round}/{self.submitter}/v{self.number}"
        return root_relative.startswith(name + "/") or root_relative == name

    @property
    def root_name(self) -> str | None:
        """The submissions root as the user named it (None outside any root)."""
        if self.display.startswith("/") or self.display.count("/") != 2:
            return None
        return root_name(self.root)

    def where(self, inner: str = "", **place) -> Source:
        """A place in this version (``inner``: a path inside it), named under the root as the user named it."""
        return Source(f"{self.display}/{inner}" if inner else self.display, root=self.root_name, **place)


def root_name(root: Path | None) -> str | None:
    """The submissions root as a location names it (None for the current folder, or when unknown)."""
    if root is None:
        return None
    text = root.as_posix()
    return None if text == "." else text


def find_versions(root: Path) -> tuple[list[Version], list[Finding]]:
    """Every ``<round>/<submitter>/v<N>`` folder below a root, and a finding for every file outside them."""
    versions, found = [], misplaced_files(root)
    for round_dir in _folders(root):
        for sub_dir in _folders(round_dir):
            versions.extend(_versions_of(sub_dir, root, found))
    return versions, found


def submitter_versions(root: Path, round_: str, submitter: str) -> list[Version]:
    """The version folders of one submitter in one round, oldest first."""
    sub_dir = root / round_ / submitter
    return _versions_of(sub_dir, root, []) if sub_dir.is_dir() else []


def _folders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def misplaced_files(root: Path) -> list[Finding]:
    """A file beside the rounds or directly in a round folder is in no version:
    never read, so a finding says so (hidden files aside)."""
    return [misplaced_finding(path.relative_to(root).as_posix(), root_name(root)) for folder in [root, *_folders(root)]
            for path in sorted(p for p in folder.iterdir() if not p.name.startswith(".") and not p.is_dir())]


def misplaced_finding(rel: str, root: str | None = None) -> Finding:
    return located("misplaced-file", Source(rel, root=root), Source(LAYOUT, root=root).path, rel,
                   "a file outside every version folder is never read: seal it in a version (mlrepro submit)")


def bad_version_folder(rel: str, folder: str, name: str, root: str | None = None) -> Finding:
    return located("bad-version-folder", Source(rel, root=root), Source(f"{folder}/v<N>/", root=root).path,
                   name, "only version folders v1, v2, ... belong under a submitter")


def _versions_of(sub_dir: Path, root: Path, found: list[Finding]) -> list[Version]:
    out = []
    for vdir in sorted(p for p in sub_dir.iterdir() if not p.name.startswith(".")):
        rel = vdir.relative_to(root).as_posix()
        number = version_number(vdir.name)
        if not vdir.is_dir() or number is None:
            found.append(bad_version_folder(rel, sub_dir.relative_to(root).as_posix(), vdir.name, root_name(root)))
            continue
        real = resolved(vdir)
        if real is None or root.resolve() not in real.parents:
            # a link to a folder elsewhere: never read (ingest would skip it silently)
            found.append(located("path-escape", Source(rel, root=root_name(root)), "a folder inside the submissions root",
                                 real.as_posix() if real else "a link loop",
                                 "the version folder is a link that leaves the submissions root"))
            continue
        out.append(Version(vdir, rel, sub_dir.parent.name, sub_dir.name, number, root=root))
    return sorted(out, key=lambda v: v.number)


def version_at(path: Path, root: Path | None = None) -> Version:
    """A Version for one folder ``.../<round>/<submitter>/v<N>``."""
    number = version_number(path.name)
    if number is None:
        raise UsageError(f"{path}: not a version folder (expected a name like v2)")
    root = root or path.parent.parent.parent
    try:
        display = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        display = path.as_posix()
    return Version(path, display, path.parent.parent.name, path.parent.name, number, root=root)


def resolved(path: Path) -> Path | None:
    """The real path, or None for a symlink loop."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return None
