"""The submissions store: ``<root>/<round>/<submitter>/v<N>/manifest.yaml``.

Versions are immutable: ``submit`` only ever creates the next folder, and
reading a version checks every file against the sha256 its manifest sealed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml

from pipeline.core.errors import UsageError
from pipeline.core import textcheck
from pipeline.core.findings import Finding, finding
from pipeline.core import rules
from pipeline.core.rules import schemas_dir

MANIFEST = "manifest.yaml"
MANIFEST_SCHEMA = "manifest.v1.schema.json"
VERSION_DIR = re.compile(r"^v([1-9][0-9]*)$")   # one rule everywhere: v1, v2, ... (never v01, v0)
MAX_MANIFEST_BYTES = 1024 * 1024


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


@dataclass
class Version:
    """A version folder as found on disk, with its manifest when it loads."""

    path: Path
    display: str                 # relative to the submissions root
    round: str
    submitter: str
    number: int
    manifest: Manifest | None = None
    findings: list[Finding] = field(default_factory=list)
    tampered: dict[str, Finding] = field(default_factory=dict)  # manifest path -> why its rows are rejected
    root: Path | None = None     # the submissions root, when known (links must not leave it)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@rules.cached()
def _schema() -> dict:
    with open(schemas_dir() / MANIFEST_SCHEMA, encoding="utf-8") as fh:
        return json.load(fh)


@rules.cached()
def _validator():
    import jsonschema

    return jsonschema.Draft202012Validator(_schema())


def _schema_errors(data: dict) -> list:
    """jsonschema's errors, sorted by path; a manifest that is surely valid
    (:mod:`pipeline.store.jsonvalid`) does not load jsonschema."""
    from pipeline.store.jsonvalid import valid

    if valid(data, _schema()):
        return []
    return sorted(_validator().iter_errors(data), key=lambda e: list(e.path))


def _manifest_text(mpath: Path, where: str) -> tuple[str | None, list[Finding]]:
    """The manifest's text, bounded in size, strict UTF-8, held to the hygiene
    of what partners type (no BOM, LF line ends, no mojibake)."""
    from pipeline.readers.base import read_text  # the readers package is heavy: load it when used

    return read_text(mpath, where, MAX_MANIFEST_BYTES, checks=textcheck.DOCUMENT)


def _manifest_data(text: str, where: str) -> tuple[object, list[Finding]]:
    """The manifest's YAML, or the findings that refuse it (each with its line)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    guard = textcheck.yaml_guard(text, where, "manifest-invalid", aliases=False)
    if guard:
        return None, guard
    try:
        data = yaml.load(text, Loader=loader)
        duplicates = textcheck.duplicate_keys(yaml.compose(text, Loader=loader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        place = f"line {mark.line + 1}" if mark else "whole file"
        return None, [finding("manifest-invalid", where, place, "valid YAML", str(exc).splitlines()[0],
                              "the manifest is not valid YAML")]
    return data, [finding("duplicate-key", where, f"line {line}, key {key}", f"{key!r} once",
                          f"{key!r} again", "a key stated twice (YAML would keep the last silently)")
                  for key, line in duplicates]


def _escapes(version: Version, mpath: Path) -> Finding | None:
    """A version folder (or its manifest) that is a link leaving the root (or the folder)."""
    here = version.path.resolve()
    if version.root is not None:
        root = version.root.resolve()
        if root != here and root not in here.parents:
            return finding("path-escape", version.display, "folder", "a folder inside the submissions root",
                           here.as_posix(), "the version folder is a link that leaves the submissions root")
    if mpath.is_symlink() and mpath.resolve().parent != here:
        return finding("path-escape", f"{version.display}/{MANIFEST}", "whole file",
                       "a manifest inside its version folder", mpath.resolve().as_posix(),
                       "the manifest is a link that leaves its version folder")
    return None


def load_manifest(version: Version) -> None:
    """Load, schema-check and cross-check a version's manifest, in place."""
    mpath = version.path / MANIFEST
    where = f"{version.display}/{MANIFEST}"
    add = version.findings.append
    if not mpath.is_file():
        add(finding("manifest-missing", version.display, "folder", MANIFEST, "no manifest",
                    "a version folder needs a manifest.yaml (use `mlrepro submit`)"))
        return
    escape = _escapes(version, mpath)
    if escape is not None:
        add(escape)
        return
    text, found = _manifest_text(mpath, where)
    version.findings.extend(found)
    if text is None:
        return
    data, found = _manifest_data(text, where)
    version.findings.extend(found)
    if found:
        return
    errors = _schema_errors(data) if isinstance(data, dict) else None
    if errors is None:
        add(finding("manifest-invalid", where, "top level", "a mapping", type(data).__name__,
                    "the manifest must be a mapping"))
        return
    for err in errors:
        key = ".".join(str(p) for p in err.path) or "top level"
        add(finding("manifest-invalid", where, f"key {key}", err.schema.get("description", _expect(err)),
                    repr(err.instance)[:80], err.message[:200]))
    if errors:
        return
    try:
        submitted_at = datetime.fromisoformat(data["submitted_at"].replace("Z", "+00:00"))
    except ValueError as exc:   # the schema's pattern passes 2026-13-45T25:61
        add(finding("manifest-invalid", where, "key submitted_at", "an ISO-8601 time with a zone",
                    data["submitted_at"], f"not a valid time: {exc}"))
        return
    m = Manifest(data["submitter"], data["round"], data["version"], submitted_at, data["status"],
                 [FileEntry(**f) for f in data["files"]], data.get("supersedes"), data.get("notes"),
                 [dict(w) for w in data.get("withdraws") or []])
    mismatches = [finding("manifest-mismatch", where, f"key {key}", f"{folder_value!r} (from the folder name)",
                          repr(value), f"the manifest's {key} disagrees with its folder: its rows are rejected")
                  for key, folder_value, value in (("round", version.round, m.round),
                                                   ("submitter", version.submitter, m.submitter),
                                                   ("version", version.number, m.version))
                  if folder_value != value]
    version.findings.extend(mismatches)
    version.manifest = m
    _check_files(version, where)
    for entry in m.files if mismatches else ():
        # which round, submitter or version its rows belong to is unknown: reject them all
        version.tampered.setdefault(entry.path, mismatches[0])


def _expect(err) -> str:
    return f"{err.validator} {err.validator_value!r}"[:120]


def _check_files(version: Version, where: str) -> None:
    from pipeline.readers.base import max_file_bytes

    base = version.path.resolve()
    listed = set()
    for i, entry in enumerate(version.manifest.files):
        place = f"key files.{i}.path"
        target = (version.path / entry.path)
        if Path(entry.path).is_absolute() or ".." in Path(entry.path).parts:
            _taint(version, entry.path, finding("path-escape", where, place, "a path inside the version folder",
                                                entry.path, "the path leaves its version folder"))
            continue
        resolved = _resolve(target)
        if resolved is None or base not in resolved.parents:
            why = "leaves its version folder" if resolved else "loops (a link to a link to itself)"
            _taint(version, entry.path, finding("path-escape", where, place, "a file inside the version folder",
                                                entry.path, f"the file is a link that {why}"))
            continue
        listed.update((resolved, target))
        if target.is_dir():
            _check_tree(version, i, entry, target)
            continue
        if not target.is_file():
            _taint(version, entry.path, finding("file-unreadable", f"{version.display}/{entry.path}", "whole file",
                                                "the file the manifest lists", "no such file",
                                                "a file listed in the manifest is missing"))
            continue
        size, limit = target.stat().st_size, max_file_bytes()
        if size > limit:   # not even hashed
            _taint(version, entry.path, finding("file-too-large", f"{version.display}/{entry.path}", "whole file",
                                                f"at most {limit} bytes", f"{size} bytes",
                                                "file over the size limit (MLREPRO_MAX_FILE_BYTES)"))
            continue
        digest = sha256_file(target)
        if digest != entry.sha256:
            _taint(version, entry.path, finding(
                "hash-mismatch", f"{version.display}/{entry.path}", f"{MANIFEST} key files.{i}.sha256",
                entry.sha256, digest, "changed after it was sealed: its rows are rejected"))
    for path in sorted(version.path.rglob("*")):
        if path.name == MANIFEST and path.parent == version.path:
            continue
        if path.is_dir() and not path.is_symlink():
            continue
        if path in listed or any(parent in listed for parent in path.parents):
            continue     # the listed entry itself (even a link), or a file of a listed tree
        rel = path.relative_to(version.path).as_posix()
        kind = "a symbolic link" if path.is_symlink() else "a file"
        version.findings.append(finding("unlisted-file", f"{version.display}/{rel}", "whole file",
                                        "only the files listed in the manifest", f"{kind} not listed",
                                        "a sealed version is exactly its listed files: remove it or "
                                        "seal a new version with `mlrepro submit`"))


def _check_tree(version: Version, i: int, entry: FileEntry, folder: Path) -> None:
    """A folder entry (a submission tree) is sealed by one hash over its files."""
    display = f"{version.display}/{entry.path}"
    digest, link = sha256_tree(folder)
    if link is not None:
        _taint(version, entry.path, finding("path-escape", f"{display}/{link}", "whole file",
                                            "regular files only", "a symbolic link",
                                            "a sealed tree may not hold links"))
    elif digest != entry.sha256:
        _taint(version, entry.path, finding(
            "hash-mismatch", display, f"{MANIFEST} key files.{i}.sha256", entry.sha256, digest,
            "the tree changed after it was sealed: its results are rejected"))


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
        for name in sorted(files):
            path = Path(here) / name
            lines.append(f"{path.relative_to(folder).as_posix()}\0{sha256_file(path)}\n")
    return hashlib.sha256("".join(sorted(lines)).encode("utf-8")).hexdigest(), None


def _resolve(path: Path) -> Path | None:
    """The real path, or None for a symlink loop."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return None


def _taint(version: Version, path: str, why: Finding) -> None:
    version.findings.append(why)
    version.tampered[path] = why


def find_versions(root: Path) -> tuple[list[Version], list[Finding]]:
    """Every ``<round>/<submitter>/v<N>`` folder below a submissions root (and
    a finding for every file outside them: see :func:`misplaced_files`)."""
    versions, found = [], misplaced_files(root)
    for round_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for sub_dir in sorted(p for p in round_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
            versions.extend(_versions_of(sub_dir, root, found))
    return versions, found


def misplaced_files(root: Path) -> list[Finding]:
    """A file beside the rounds (``ROOT/notes.txt``) or directly in a round
    folder (``ROOT/<round>/notes.txt``) is in no version: never read, so a
    finding says so (hidden files such as ``.gitkeep`` aside). A file directly
    in a submitter folder is ``bad-version-folder`` (:func:`_versions_of`)."""
    rounds = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    found = []
    for folder in [root, *rounds]:
        for path in sorted(p for p in folder.iterdir() if not p.name.startswith(".") and not p.is_dir()):
            found.append(misplaced_finding(path.relative_to(root).as_posix()))
    return found


def misplaced_finding(rel: str, prefix: str = "") -> Finding:
    """The ``misplaced-file`` finding of a root-relative path (``prefix``: the
    root from the repository's top, as the gate writes files)."""
    return finding("misplaced-file", prefix + rel, "path", f"{prefix}<round>/<submitter>/v<N>/<file>", rel,
                   "a file outside every version folder is never read: seal it in a version (mlrepro submit)")


def _versions_of(sub_dir: Path, root: Path, found: list[Finding]) -> list[Version]:
    out = []
    for vdir in sorted(p for p in sub_dir.iterdir() if not p.name.startswith(".")):
        rel = vdir.relative_to(root).as_posix()
        m = VERSION_DIR.match(vdir.name)
        if not vdir.is_dir() or not m:
            found.append(finding("bad-version-folder", rel, "path", f"{sub_dir.relative_to(root).as_posix()}/v<N>/",
                                 vdir.name, "only version folders v1, v2, ... belong under a submitter"))
            continue
        real = _resolve(vdir)
        if real is None or root.resolve() not in real.parents:
            # a link to a folder elsewhere: never read (ingest would skip it silently)
            found.append(finding("path-escape", rel, "folder", "a folder inside the submissions root",
                                 real.as_posix() if real else "a link loop",
                                 "the version folder is a link that leaves the submissions root"))
            continue
        out.append(Version(vdir, rel, sub_dir.parent.name, sub_dir.name, int(m.group(1)), root=root))
    return sorted(out, key=lambda v: v.number)


def version_at(path: Path, root: Path | None = None) -> Version:
    """A Version for one folder ``.../<round>/<submitter>/v<N>``."""
    m = VERSION_DIR.match(path.name)
    if not m:
        raise UsageError(f"{path}: not a version folder (expected a name like v2)")
    root = root or path.parent.parent.parent
    try:
        display = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        display = path.as_posix()
    return Version(path, display, path.parent.parent.name, path.parent.name, int(m.group(1)), root=root)


def _declared_status(version_dir: Path) -> str | None:
    text, _ = _manifest_text(version_dir / MANIFEST, MANIFEST)
    data, found = _manifest_data(text, MANIFEST) if text is not None else (None, [])
    return data.get("status") if isinstance(data, dict) and not found else None


# ---- submit -------------------------------------------------------------------------

@dataclass
class SubmitResult:
    version: Version | None
    findings: list[Finding]


def submit(source: Path, submitter: str, round_: str, status: str, root: Path,
           submitted_at: datetime | None = None, fmt: str | None = None,
           notes: str | None = None, withdraws: list[dict] | None = None) -> SubmitResult:
    """Seal SOURCE as the next version of ``root/round/submitter``.

    Refuses (returns findings, writes nothing) a file that does not parse in
    its format. Does not judge status or tolerance: those are decided when the
    submission is read, so the sealed version records what was declared.
    """
    from pipeline import readers
    from pipeline.ingest.normalise import Context, normalise

    if status not in ("verified", "post-deadline"):
        raise UsageError(f"--status must be verified or post-deadline, not {status!r}")
    if not re.match(r"^v\d+\.\d+$", round_):
        raise UsageError(f"--round must look like v6.0, not {round_!r}")
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", submitter):
        raise UsageError(f"--submitter {submitter!r}: letters, digits, _ . - only")
    if not (source.is_file() or source.is_dir()):
        raise UsageError(f"{source}: not a file or folder")
    submitted_at = submitted_at or datetime.now(timezone.utc).replace(microsecond=0)
    if submitted_at.tzinfo is None:
        raise UsageError("--submitted-at needs a time zone (e.g. 2026-02-20T10:00:00+00:00)")
    _plausible(round_, submitted_at)

    fmt = fmt or readers.detect(source)
    if fmt is None or fmt not in readers.READERS:
        return SubmitResult(None, readers.read(source, source.name, fmt if fmt in readers.READERS else None).findings)
    if source.is_dir():
        digest, link = sha256_tree(source)
        if link is not None:
            return SubmitResult(None, [finding("path-escape", f"{source.name}/{link}", "whole file",
                                               "regular files only", "a symbolic link",
                                               "a submitted tree may not hold links")])
    else:
        digest = sha256_file(source)
    result = readers.read(source, source.name, fmt, round_=round_)
    done = normalise(result, Context(status=status, round=round_, submitter=submitter))
    problems = [f for f in done.findings if f.severity == "error"]
    if problems or not (len(done.frame) or done.dispositions):
        if not problems:
            problems.append(finding("format-mismatch", source.name, "whole file", "at least one result",
                                    "no rows", "the file holds no results"))
        return SubmitResult(None, problems)

    warnings = _late_warning(round_, submitter, status, submitted_at)
    sub_dir = root / round_ / submitter
    sub_dir.mkdir(parents=True, exist_ok=True)
    with _locked(sub_dir):   # concurrent submits for one submitter each take the next number
        existing = sorted(int(m.group(1)) for p in sub_dir.iterdir() if (m := VERSION_DIR.match(p.name)))
        number = max(existing, default=0) + 1
        previous = [n for n in existing if _declared_status(sub_dir / f"v{n}") == status]
        target = sub_dir / f"v{number}"
        manifest = {
            "submitter": submitter,
            "round": round_,
            "version": number,
            "submitted_at": submitted_at.isoformat(),
            "status": status,
            "files": [{"path": source.name, "format": fmt, "sha256": digest}],
        }
        if previous:
            manifest["supersedes"] = previous[-1]
        if notes:
            manifest["notes"] = notes
        if withdraws:
            manifest["withdraws"] = [dict(w) for w in withdraws]
        tmp = Path(tempfile.mkdtemp(prefix=f".v{number}.", dir=sub_dir))
        try:
            if source.is_dir():
                shutil.copytree(source, tmp / source.name)
            else:
                shutil.copyfile(source, tmp / source.name)
            (tmp / MANIFEST).write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8",
                                        newline="\n")
            if target.exists():
                return SubmitResult(None, [finding("version-exists", target.as_posix(), "folder",
                                                   "a new version folder", "it exists",
                                                   "versions are immutable")])
            os.rename(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
    version = version_at(target, root)
    load_manifest(version)
    return SubmitResult(version, warnings)


@contextmanager
def _locked(folder: Path):
    """An exclusive fcntl lock on the submitter folder itself (no lock file to
    leave behind or to mistake for a version)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)      # closing the descriptor releases the lock


def _plausible(round_: str, submitted_at: datetime) -> None:
    """Refuse a submitted_at that the gate would refuse (see pipeline/clock.py)."""
    from pipeline.store import clock

    info = rules.rounds().get(round_)
    if info is not None and info.opens is not None and submitted_at < info.opens:
        raise UsageError(f"--submitted-at {submitted_at.isoformat()} is before {round_} opens "
                         f"({info.opens.isoformat()})")
    if submitted_at > clock.now() + clock.FUTURE_SLACK:
        raise UsageError(f"--submitted-at {submitted_at.isoformat()} is more than a day in the future")


def _late_warning(round_: str, submitter: str, status: str, submitted_at: datetime) -> list[Finding]:
    """Before sealing: a version declared verified that would already be past the
    round's deadline when it becomes visible (now, at the earliest)."""
    from pipeline.store import clock

    info = rules.rounds().get(round_)
    when = max(submitted_at, clock.now())
    if status != "verified" or info is None or when <= info.submission_deadline:
        return []
    return [finding("verified-after-deadline", f"{round_}/{submitter}/v<next>/{MANIFEST}", "key submitted_at",
                    f"at or before {info.submission_deadline.isoformat()} (the {round_} deadline)",
                    f"{when.isoformat()} (the earliest it can become visible)",
                    "declared verified, but it will count as post-deadline: the gate's clock and the "
                    "commit time decide, not submitted_at", severity="warning")]
