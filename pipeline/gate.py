"""The CI gate: check submission versions added or changed since a git base.

What it checks, for each gated version folder ``<root>/<round>/<submitter>/v<N>``:

* versioning, against the base commit: a version that exists at the base is
  immutable (no file changed, added or deleted: add the next version
  instead), and a new version is numbered next (no gap, no reused number);
* the files, through :mod:`pipeline.ingest`: manifest schema, sha256 seals,
  formats and every row;
* every result of a partner version against the reference submitter's
  current result (:mod:`pipeline.compare`, with the accepted table of the
  whole submissions root as context).

The base is ``--base`` when given; otherwise the merge base of HEAD with
``origin/$GITHUB_BASE_REF`` (when that variable is set), else ``origin/HEAD``,
else ``main``, else ``master``.

To start fast, the gate uses the store, ingest (readers, pandas, and pandera
for the table schema) and compare, and never great_expectations, matplotlib,
dvc or the report module (a test checks the imports). Nothing here prints.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import ConfigError, UsageError
from .findings import Finding, Report, finding
from .model import Source, plain
from .store import MANIFEST, VERSION_DIR

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


@dataclass
class GateReport(Report):
    """rows: one per result line; files: the repo-relative files checked."""

    versions: list[Gated] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def line_of(f: Finding) -> int | None:
    """The line a finding points at, when its place names one."""
    return f.line


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


def changes_since(top: Path, commit: str, under: str) -> dict[str, str]:
    """Repo path -> A, M or D for every file under ``under`` that differs
    between the base commit and the working tree (untracked files count as A)."""
    parts = _split_z(_git(["diff", "--name-status", "--no-renames", "-z", commit, "--", under], top))
    out = {path: ("M" if status[0] in "MTU" else status[0])
           for status, path in zip(parts[0::2], parts[1::2])}
    for path in _split_z(_git(["ls-files", "--others", "--exclude-standard", "-z", "--", under], top)):
        out[path] = "A"
    return out


def files_at(top: Path, commit: str, under: str) -> list[str]:
    return _split_z(_git(["ls-tree", "-r", "--name-only", "-z", commit, "--", under], top))


def first_changed_line(top: Path, commit: str, path: str) -> int | None:
    text = _git(["diff", "-U0", "--no-color", commit, "--", path], top)
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


def versioning(changes: dict[str, str], base_files: list[str], root: Path, prefix: str,
               top: Path, commit: str) -> tuple[list[Gated], list[Finding]]:
    """The versions to gate and the versioning findings, from the changed paths."""
    strip = len(prefix)
    at_base = _numbers(v for v, _ in (_parse(p[strip:]) for p in base_files) if v)
    gated: set[Gated] = set()
    found: list[Finding] = []
    for path, status in sorted(changes.items()):
        version, inner = _parse(path[strip:])
        if version is None:
            if inner:
                found.append(finding("bad-version-folder", path, "path", f"{prefix}<round>/<submitter>/v<N>/<file>",
                                     inner, "only version folders v1, v2, ... belong under a submitter"))
            continue
        key = (version.round, version.submitter)
        if version.number in at_base.get(key, set()):
            found.append(_immutable(path, status, version, at_base[key] | _on_disk(root, key), top, commit))
        elif (root / version.display).is_dir():
            gated.add(version)
    found.extend(_numbering(sorted(gated, key=lambda v: v.number), at_base, prefix))
    return sorted(gated, key=lambda v: (v.round, v.submitter, v.number)), found


def _immutable(path: str, status: str, version: Gated, numbers: set[int], top: Path, commit: str) -> Finding:
    nxt = max(numbers) + 1
    what = {"A": "added", "D": "deleted", "M": "changed"}[status]
    line = first_changed_line(top, commit, path) if status == "M" else None
    return finding("version-immutable", path, f"line {line}" if line else "whole file",
                   f"the file as sealed in v{version.number} at the base ({commit[:12]})",
                   f"{what} since the base",
                   f"versions are immutable: add v{nxt} (mlrepro submit) instead of editing "
                   f"{version.display}")


def _numbering(new: list[Gated], at_base: dict, prefix: str) -> list[Finding]:
    found, expected = [], {}
    for v in new:
        key = (v.round, v.submitter)
        want = expected.setdefault(key, max(at_base.get(key, set()), default=0) + 1)
        if v.number == want:
            expected[key] = want + 1
            continue
        why = "a reused number" if v.number < want else f"a gap (v{want} is missing)"
        found.append(finding("version-not-next", f"{prefix}{v.display}/{MANIFEST}", "folder",
                             f"v{want}", f"v{v.number}",
                             f"a new version must be numbered next, not {why}: add v{want}"))
    return found


# ---- the gate ----------------------------------------------------------------------------

def run(paths: list[Path], root: Path, base: str | None, tolerance_pct: float,
        reference_submitter: str, cwd: Path | None = None) -> GateReport:
    """Gate PATHS (version folders), or every version changed since the base."""
    cwd = cwd or Path.cwd()
    root = root if root.is_absolute() else cwd / root
    if not root.is_dir():
        raise UsageError(f"--root {root}: no such folder")
    top = repo_top(cwd)
    report = GateReport()
    if top is None:
        if not paths:
            raise ConfigError("not inside a git repository: give the version folders to gate")
        prefix, base_info = _relative(root, cwd), {"base": None, "versioning": "not checked (no git repository)"}
        gated, found = _named(paths, root, cwd), []
    else:
        prefix = _relative(root, top)
        gated, found, base_info = _from_git(paths, root, base, top, prefix, cwd)
    report.versions = gated
    report.findings.extend(found)
    if gated:
        check(report, root, prefix, tolerance_pct, reference_submitter)
    report.summary = {**base_info, "root": prefix.rstrip("/") or ".",
                      "versions": [v.display for v in gated], **_counts(report),
                      "tolerance_pct": tolerance_pct, "reference_submitter": reference_submitter,
                      "verdict": "pass" if report.ok else "fail"}
    return report


def _relative(path: Path, start: Path) -> str:
    try:
        rel = path.resolve().relative_to(start.resolve()).as_posix()
    except ValueError as exc:
        raise UsageError(f"--root {path} is outside {start}") from exc
    return "" if rel == "." else rel + "/"


def _named(paths: list[Path], root: Path, cwd: Path) -> list[Gated]:
    out = []
    for path in paths:
        path = path if path.is_absolute() else cwd / path
        if not path.is_dir():
            raise UsageError(f"{path}: no such version folder")
        try:
            rel = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            raise UsageError(f"{path}: not inside the submissions root {root}") from None
        version, _ = _parse(rel + "/" + MANIFEST)
        if version is None or version.display != rel:
            raise UsageError(f"{path}: not a version folder <round>/<submitter>/v<N>")
        out.append(version)
    return sorted(set(out), key=lambda v: (v.round, v.submitter, v.number))


def _from_git(paths: list[Path], root: Path, base: str | None, top: Path, prefix: str, cwd: Path):
    """(versions to gate, versioning findings, summary entries) in a git repository.
    Named PATHS are checked against the base only when --base is given."""
    if paths and not base:
        return _named(paths, root, cwd), [], {"base": None, "versioning": "not checked (give --base)"}
    ref, commit = resolve_base(top, base)
    under = prefix.rstrip("/") or "."
    changes = changes_since(top, commit, under)
    gated, found = versioning(changes, files_at(top, commit, under), root, prefix, top, commit)
    if paths:
        named = _named(paths, root, cwd)
        keep = {f"{prefix}{v.display}/" for v in named}
        found = [f for f in found if any(f.file.startswith(k) for k in keep)]
        gated = named
    return gated, found, {"base": ref, "merge_base": commit[:12], "versioning": "checked"}


def _counts(report: GateReport) -> dict:
    outcomes = [r.get("verdict") or r["outcome"] for r in report.rows]
    return {"results": len(report.rows),
            **{k.replace("-", "_"): outcomes.count(k)
               for k in ("agree", "deviates", "no-reference", "reference", "excluded", "rejected")}}


def relocate(f: Finding, prefix: str, root: Path) -> Finding:
    """A finding with a repo-relative file, and a line when it names a manifest key."""
    out = replace(f, file=prefix + f.file)
    if f.file.endswith(MANIFEST) and f.place.startswith("key ") and line_of(f) is None:
        line = _manifest_line(root / f.file, f.place[4:])
        if line:
            out = replace(out, place=f"line {line}, {f.place}")
    return out


def _manifest_line(path: Path, key: str) -> int | None:
    """The line of a dotted key (``files.0.sha256``) in a manifest, roughly:
    the n-th line that starts the last named key, n being the last list index."""
    parts = key.split(".")
    names = [p for p in parts if not p.isdigit()]
    index = next((int(p) for p in reversed(parts) if p.isdigit()), 0)
    if not names:
        return None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    pattern = re.compile(rf"^\s*(- )?{re.escape(names[-1])}\s*:")
    hits = [i + 1 for i, text in enumerate(lines) if pattern.match(text)]
    return hits[index] if index < len(hits) else (hits[0] if hits else None)


# ---- files, rows and the comparison ------------------------------------------------------

def check(report: GateReport, root: Path, prefix: str, tolerance_pct: float,
          reference_submitter: str) -> None:
    """Ingest the context (see :func:`context_paths`), then judge the gated
    versions' files and rows."""
    from . import compare as compare_mod, ingest as ingest_mod  # pandas: only when there is work

    gated = report.versions
    full = ingest_mod.ingest(context_paths(root, gated, reference_submitter), root=root)
    used = {v["path"] for v in full.versions if v["used"]}
    table, found, dispositions = full.table, list(full.findings), list(full.dispositions)
    for g in (g for g in gated if g.display not in used):   # superseded or unsealed: read it as named
        extra = ingest_mod.ingest([root / g.display], root=root)
        found = [f for f in found if not g.holds(f.file)] + extra.findings
        dispositions = [d for d in dispositions if not g.holds(d.source)] + extra.dispositions
        table = _swap(table, extra.table, g, gated)
    mine = lambda text: any(g.holds(text) for g in gated)  # noqa: E731
    report.findings.extend(relocate(f, prefix, root) for f in found if mine(f.file))
    compared = compare_mod.compare(table, tolerance_pct, reference_submitter).rows
    by_source = {r["source"]: r for r in compared}
    rows = [_result_row(r, by_source.get(r["source"]), prefix)
            for r in table.to_dict("records") if mine(r["source"])]
    rows += [_disposed_row(d, prefix) for d in dispositions if mine(d.source)]
    report.rows = sorted(rows, key=lambda r: (r["file"], r["line"] or 0))
    report.findings.extend(_deviations(compared, mine, prefix))
    report.findings.extend(_empty(gated, report, prefix, root))
    report.files = sorted(f"{prefix}{g.display}/{p.relative_to(root / g.display).as_posix()}"
                          for g in gated for p in (root / g.display).rglob("*") if p.is_file())


def context_paths(root: Path, gated: list[Gated], reference_submitter: str) -> list[Path]:
    """What a gated version is judged against: its own submitter folder and the
    reference submitter's in the same round; for a new reference version, the
    whole round (every partner it may move out of tolerance). Other rounds and
    partners cannot change a verdict, so they are not read."""
    rounds = {g.round for g in gated if g.submitter == reference_submitter}
    folders = {(g.round, s) for g in gated if g.round not in rounds
               for s in (g.submitter, reference_submitter)}
    paths = [root / r for r in sorted(rounds) if (root / r).is_dir()]
    paths += [root / r / s for r, s in sorted(folders) if (root / r / s).is_dir()]
    return paths or [root]


def _empty(gated: list[Gated], report: GateReport, prefix: str, root: Path) -> list[Finding]:
    """An error for a gated version that holds no result at all (a sealed file
    with a header and no row) and fails nothing else: it must not pass."""
    out = []
    for g in gated:
        own = f"{prefix}{g.display}/"
        if any(r["file"].startswith(own) for r in report.rows) or any(
                f.severity == "error" and f.file.startswith(own) for f in report.findings):
            continue
        out.append(relocate(finding("format-mismatch", f"{g.display}/{MANIFEST}", "key files",
                                    "at least one result row in the version's files", "no result",
                                    "the version holds no result"), prefix, root))
    return out


def _swap(table, extra, g: Gated, gated: list[Gated]):
    """The context table with a named version's rows in place of its submitter's
    other rows of the same round and status (rows of gated versions stay)."""
    import pandas as pd

    if extra.empty:
        return table
    same = ((table["round"] == g.round) & (table["submitter"] == g.submitter)
            & table["status"].isin(set(extra["status"]))
            & ~table["source"].map(lambda s: any(v.holds(s) for v in gated)))
    return pd.concat([table[~same], extra], ignore_index=True)


def _split(source: str) -> tuple[str, int | None]:
    where = Source.parse(source)
    return where.file, where.line


_plain = plain


RESULT_KEYS = ("submitter", "system", "model", "scenario", "value", "units", "status")
VERDICT_KEYS = ("verdict", "deviation_pct", "tolerance_pct", "reference_value", "reference_system",
                "reference_source", "label", "reason")


def _result_row(row: dict, compared: dict | None, prefix: str) -> dict:
    file, line = _split(row["source"])
    out = {"version": "/".join(file.split("/")[:3]), "file": prefix + file, "line": line,
           "outcome": "accepted", "codes": ""}
    out.update({k: _plain(row.get(k)) for k in RESULT_KEYS})
    if compared is None:
        out.update({k: None for k in VERDICT_KEYS}, verdict="reference",
                   label="verified" if row["status"] == "verified" else "unverified",
                   reason="a result of the reference submitter")
    else:
        out.update({k: _plain(compared.get(k)) for k in VERDICT_KEYS})
        if out["reference_source"]:
            out["reference_source"] = prefix + out["reference_source"]
    return out


def _disposed_row(d, prefix: str) -> dict:
    file, line = _split(d.source)
    out = {"version": "/".join(file.split("/")[:3]), "file": prefix + file, "line": line,
           "outcome": d.outcome, "codes": d.codes}
    out.update({k: None for k in RESULT_KEYS + VERDICT_KEYS}, reason=d.reason)
    return out


def _deviations(compared: list[dict], mine, prefix: str) -> list[Finding]:
    """Errors for gated partner results out of tolerance; warnings for other
    partners' results that a gated reference version moves out of tolerance."""
    from .compare import deviation_finding

    out = []
    for r in compared:
        if r["verdict"] != "deviates":
            continue
        own = mine(r["source"])
        if not own and not mine(r["reference_source"] or ""):
            continue
        out.append(deviation_finding(r, prefix, own))
    return out
