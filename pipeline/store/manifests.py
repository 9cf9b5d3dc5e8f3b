"""A version's manifest: ``<root>/<round>/<submitter>/v<N>/manifest.yaml``.

Versions are immutable: reading one checks its manifest against
``schemas/manifest.v1.schema.json`` and every file against the sha256 the
manifest sealed. The line of every key is kept, so that a finding names it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import yaml

from pipeline.core import limits, textcheck
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.core.rules import Rules
from pipeline.readers.base import read_text
from pipeline.store import contents
from pipeline.store.hashes import sha256_file, sha256_tree
# ingest reads versions through this module: the layout's names are its too
from pipeline.store.versions import (Version, find_versions, misplaced_files,  # noqa: F401
                                     resolved, version_at)

MANIFEST = "manifest.yaml"
MANIFEST_SCHEMA = "manifest.v1.schema.json"
MAX_MANIFEST_BYTES = 1024 * 1024
# A reason a reader can see: this many characters that print something.
MIN_VISIBLE_REASON = 3
# Characters that print nothing: spaces, controls and format characters (zero
# widths, bidirectional controls), combining marks on their own, unassigned or
# private code points, and the letters and symbols fonts draw blank.
_BLANK_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn", "Mn", "Me"})
_BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


@dataclass
class FileEntry:
    path: str
    format: str
    sha256: str


@dataclass
class Manifest:
    submitter: str
    round: str
    version: int
    submitted_at: datetime
    status: str
    files: list[FileEntry]
    supersedes: int | None = None
    notes: str | None = None
    withdraws: list[dict] = field(default_factory=list)   # {system, model, scenario, division?, reason}
    lines: dict[str, int] = field(default_factory=dict)   # dotted key -> its line (textcheck.key_lines)

    def where(self, version: Version, key: str) -> Source:
        return version.where(MANIFEST, key=key, line=self.lines.get(key))


def _text(path: Path, where: Source) -> tuple[str | None, list[Finding]]:
    return read_text(path, where, MAX_MANIFEST_BYTES, checks=textcheck.DOCUMENT)


def parse(text: str, where: Source) -> tuple[object, dict[str, int], list[Finding]]:
    """(the manifest's YAML, the line of each key, the findings that refuse it)."""
    guard = textcheck.yaml_guard(text, where, "manifest-invalid", aliases=False)
    if guard:
        return None, {}, guard
    try:
        node, data = textcheck.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return None, {}, [located("manifest-invalid", where.at(line=mark.line + 1 if mark else None),
                                  "valid YAML", str(exc).splitlines()[0], "the manifest is not valid YAML")]
    duplicates = [located("duplicate-key", where.at(line=line, key=key), f"{key!r} once", f"{key!r} again",
                          "a key stated twice (YAML would keep the last silently)")
                  for key, line in textcheck.duplicate_keys(node)]
    return data, textcheck.key_lines(node), duplicates


def _escapes(version: Version, mpath: Path) -> Finding | None:
    here = version.path.resolve()
    if version.root is not None:
        root = version.root.resolve()
        if root != here and root not in here.parents:
            return located("path-escape", version.where(), "a folder inside the submissions root",
                           here.as_posix(), "the version folder is a link that leaves the submissions root")
    if mpath.is_symlink() and mpath.resolve().parent != here:
        return located("path-escape", version.where(MANIFEST), "a manifest inside its version folder",
                       mpath.resolve().as_posix(), "the manifest is a link that leaves its version folder")
    return None


def load_manifest(rules: Rules, version: Version) -> None:
    """Load, schema-check and cross-check a version's manifest in place, and its folder's contents."""
    _load(rules, version)
    if not any(f.code == "path-escape" and f.where.file == version.display for f in version.findings):
        _check_contents(rules, version)


def _check_contents(rules: Rules, version: Version) -> None:
    """A finding per path outside the allow-list (instead of unlisted-file); the
    listed files it concerns tainted, so that none of their rows is read."""
    m = version.manifest
    listed = {e.path: e.format for e in m.files} if m is not None else None
    found, refused = contents.check_folder(rules, version.path, listed, version.where)
    found = contents.check_names(rules, [version.round, version.submitter], version.where()) + found
    if not found:
        return
    named = {f.where.file for f in found}
    version.findings[:] = [f for f in version.findings if not (f.code == "unlisted-file" and f.where.file in named)]
    version.findings.extend(found)
    whole = bool(refused & {""}) or any(f.where.file == version.display for f in found)
    for entry in m.files if m is not None else ():
        if whole or entry.path.split("/")[0] in refused:
            hit = next((f for f in found if f.where.file in (version.display, version.where(entry.path).file)
                        or f.where.file.startswith(version.where(entry.path).file + "/")), found[0])
            version.tampered.setdefault(entry.path, hit)


def _load(rules: Rules, version: Version) -> None:
    mpath = version.path / MANIFEST
    where = version.where(MANIFEST)
    add = version.findings.append
    if not mpath.is_file():
        add(located("manifest-missing", version.where(), MANIFEST, "no manifest",
                    "a version folder needs a manifest.yaml (use `mlrepro submit`)"))
        return
    escape = _escapes(version, mpath)
    if escape is not None:
        add(escape)
        return
    text, found = _text(mpath, where)
    version.findings.extend(found)
    if text is None:
        return
    data, lines, found = parse(text, where)
    version.findings.extend(found)
    if found:
        return
    if not isinstance(data, dict):
        add(located("manifest-invalid", where, "a mapping", type(data).__name__, "the manifest must be a mapping"))
        return
    errors = sorted(rules.validator(MANIFEST_SCHEMA).iter_errors(data), key=lambda e: list(e.path))
    for err in errors:
        key = ".".join(str(p) for p in err.path) or None
        add(located("manifest-invalid", where.at(key=key, line=lines.get(key) if key else None),
                    err.schema.get("description", f"{err.validator} {err.validator_value!r}"[:120]),
                    repr(err.instance)[:80], err.message[:200]))
    if errors:
        return
    blank = _blank_reasons(data, lines, where) + _long_texts(rules, data, lines, where)
    version.findings.extend(blank)
    if blank:
        return
    try:
        submitted_at = datetime.fromisoformat(data["submitted_at"].replace("Z", "+00:00"))
    except ValueError as exc:   # the schema's pattern passes 2026-13-45T25:61
        add(located("manifest-invalid", where.at(key="submitted_at", line=lines.get("submitted_at")),
                    "an ISO-8601 time with a zone", data["submitted_at"], f"not a valid time: {exc}"))
        return
    m = Manifest(data["submitter"], data["round"], data["version"], submitted_at, data["status"],
                 [FileEntry(**f) for f in data["files"]], data.get("supersedes"), data.get("notes"),
                 [dict(w) for w in data.get("withdraws") or []], lines)
    mismatches = [located("manifest-mismatch", m.where(version, key), f"{folder_value!r} (from the folder name)",
                          repr(value), f"the manifest's {key} disagrees with its folder: its rows are rejected")
                  for key, folder_value, value in (("round", version.round, m.round),
                                                   ("submitter", version.submitter, m.submitter),
                                                   ("version", version.number, m.version))
                  if folder_value != value]
    version.findings.extend(mismatches)
    version.manifest = m
    _check_files(rules, version)
    for entry in m.files if mismatches else ():
        # which round, submitter or version its rows belong to is unknown: reject them all
        version.tampered.setdefault(entry.path, mismatches[0])


def withdrawal_for(rules: Rules, withdraws: list[dict], row: dict) -> dict | None:
    """The entry of a manifest's ``withdraws`` that names the canonical ROW."""
    for entry in withdraws:
        model = rules.canonical_model(str(entry.get("model", ""))) or entry.get("model")
        if (str(entry.get("system")) == str(row["system"]) and model == row["model"]
                and str(entry.get("scenario", "")).lower() == str(row["scenario"]).lower()
                and (not entry.get("division") or entry["division"] == row["division"])):
            return entry
    return None


def visible_characters(text: str) -> int:
    return sum(1 for ch in text if ch not in _BLANK_CHARACTERS and unicodedata.category(ch) not in _BLANK_CATEGORIES)


def _blank_reasons(data: dict, lines: dict[str, int], where: Source) -> list[Finding]:
    """A withdrawal whose reason a reader cannot see: refused at its key."""
    reasons = [(f"withdraws.{i}.reason", w["reason"]) for i, w in enumerate(data.get("withdraws") or [])]
    return [located("manifest-invalid", where.at(key=key, line=lines.get(key)),
                    f"a reason of at least {MIN_VISIBLE_REASON} visible characters", ascii(reason)[:80],
                    "the withdrawal's reason says nothing a reader can see")
            for key, reason in reasons if visible_characters(reason) < MIN_VISIBLE_REASON]


def _long_texts(rules: Rules, data: dict, lines: dict[str, int], where: Source) -> list[Finding]:
    """A manifest text over its cap (free text ``text_length``, a name
    ``field_length``): refused at its key, never quoted at length."""
    texts = [("notes", data.get("notes"), "text_length")]
    for i, withdrawal in enumerate(data.get("withdraws") or []):
        texts += [(f"withdraws.{i}.{k}", withdrawal.get(k), "text_length" if k == "reason" else "field_length")
                  for k in ("reason", "system", "model", "scenario", "division")]
    return [located("over-cap", where.at(key=key, line=lines.get(key)),
                    f"at most {limits.cap(rules, cap)} characters", f"{len(text)} characters",
                    f"the manifest's {key} is longer than the caps allow (schemas/version_folder.yaml)")
            for key, text, cap in texts if isinstance(text, str) and len(text) > limits.cap(rules, cap)]


def _check_files(rules: Rules, version: Version) -> None:
    m = version.manifest
    base = version.path.resolve()
    listed = set()
    for i, entry in enumerate(m.files):
        at_path = m.where(version, f"files.{i}.path")
        target = version.path / entry.path
        if Path(entry.path).is_absolute() or ".." in Path(entry.path).parts:
            _taint(version, entry.path, located("path-escape", at_path, "a path inside the version folder",
                                                entry.path, "the path leaves its version folder"))
            continue
        real = resolved(target)
        if real is None or base not in real.parents:
            why = "leaves its version folder" if real else "loops (a link to a link to itself)"
            _taint(version, entry.path, located("path-escape", at_path, "a file inside the version folder",
                                                entry.path, f"the file is a link that {why}"))
            continue
        listed.update((real, target))
        if target.is_dir():
            _check_tree(version, entry, target)
            continue
        file = version.where(entry.path)
        if not target.is_file():
            _taint(version, entry.path, located("file-unreadable", file, "the file the manifest lists",
                                                "no such file", "a file listed in the manifest is missing"))
            continue
        size, limit = target.stat().st_size, limits.file_bytes(rules)
        if size > limit:   # not even hashed
            _taint(version, entry.path, located("file-too-large", file, f"at most {limit} bytes", f"{size} bytes",
                                                "file over the size limit (caps.file_bytes of schemas/version_folder.yaml)"))
            continue
        digest = sha256_file(target)
        if digest != entry.sha256:
            _taint(version, entry.path, located("hash-mismatch", file, entry.sha256, digest,
                                                "changed after it was sealed: its rows are rejected"))
    for path in sorted(version.path.rglob("*")):
        if path.name == MANIFEST and path.parent == version.path:
            continue
        if path.is_dir() and not path.is_symlink():
            continue
        if path in listed or any(parent in listed for parent in path.parents):
            continue     # the listed entry itself (even a link), or a file of a listed tree
        rel = path.relative_to(version.path).as_posix()
        kind = "a symbolic link" if path.is_symlink() else "a file"
        version.findings.append(located("unlisted-file", version.where(rel),
                                        "only the files listed in the manifest", f"{kind} not listed",
                                        "a sealed version is exactly its listed files: remove it or "
                                        "seal a new version with `mlrepro submit`"))


def _check_tree(version: Version, entry: FileEntry, folder: Path) -> None:
    digest, link = sha256_tree(folder)
    if link is not None:
        _taint(version, entry.path, located("path-escape", version.where(f"{entry.path}/{link}"),
                                            "regular files only", "a symbolic link",
                                            "a sealed tree may not hold links"))
    elif digest != entry.sha256:
        _taint(version, entry.path, located("hash-mismatch", version.where(entry.path), entry.sha256, digest,
                                            "the tree changed after it was sealed: its results are rejected"))


def _taint(version: Version, path: str, why: Finding) -> None:
    version.findings.append(why)
    version.tampered[path] = why


def read_declared(version_dir: Path) -> tuple[dict, dict[str, int]]:
    """(a version's manifest as its YAML declares it, {} unless it reads clean; the line of each key)."""
    where = Source((version_dir / MANIFEST).as_posix())
    text, _ = _text(version_dir / MANIFEST, where)
    data, lines, found = parse(text, where) if text is not None else (None, {}, [])
    return (data if isinstance(data, dict) and not found else {}), lines


def declared_submitted_at(version_dir: Path) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(read_declared(version_dir)[0]["submitted_at"]).replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return None
    return when if when.tzinfo is not None else None
