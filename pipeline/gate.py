"""The CI gate: check submission versions added or changed since a git base.

What it checks, for each gated version folder ``<root>/<round>/<submitter>/v<N>``:

* policy (:mod:`pipeline.policy`): read from the merge base through git; a
  change to it is ``policy-change``; generated files edited together with
  submissions are ``generated-file-edited``;
* versioning, against the base commit (:mod:`pipeline.versioning`): a version
  that exists at the base is immutable, and a new version is numbered next;
* the clock (:mod:`pipeline.clock`): a gated version became visible now;
* withdrawals (:mod:`pipeline.withdrawals`): nothing dropped silently;
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

import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import clock, params as params_mod, policy as policy_mod, rules, withdrawals
from .errors import ConfigError, UsageError
from .findings import Finding, Report, finding
from .model import Source, plain, typed_rows
from .store import MANIFEST
from .versioning import Gated, _parse, changes_since, files_at, repo_top, resolve_base, versioning


@dataclass
class GateReport(Report):
    """rows: one per result line; files: the repo-relative files checked."""

    versions: list[Gated] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    flips: list[dict] = field(default_factory=list)          # --allow-policy-change: base -> head verdicts
    withdrawals: list[dict] = field(default_factory=list)    # per gated version that supersedes another


def line_of(f: Finding) -> int | None:
    """The line a finding points at, when its place names one."""
    return f.line


# ---- the gate ----------------------------------------------------------------------------

def run(paths: list[Path], root: Path, base: str | None, params_path: Path = Path("params.yaml"),
        cwd: Path | None = None, allow_policy_change: bool = False) -> GateReport:
    """Gate PATHS (version folders), or every version changed since the base,
    with the policy of the merge base (see :mod:`pipeline.policy`)."""
    cwd = cwd or Path.cwd()
    root = root if root.is_absolute() else cwd / root
    if not root.is_dir():
        raise UsageError(f"--root {root}: no such folder")
    top = repo_top(cwd)
    report = GateReport()
    now = clock.now()                  # the gate's own clock: nothing moves it back
    with tempfile.TemporaryDirectory(prefix="mlrepro-gate-") as scratch:
        if top is None:
            if not paths:
                raise ConfigError("not inside a git repository: give the version folders to gate")
            prefix, info = _relative(root, cwd), {"base": None, "versioning": "not checked (no git repository)"}
            gated, found, commit = _named(paths, root, cwd), [], None
        else:
            prefix = _relative(root, top)
            gated, found, info, commit = _from_git(paths, root, base, top, prefix, cwd)
        pol = _policy(top, commit, params_path, cwd, Path(scratch))
        report.versions = gated
        report.findings.extend(found)
        changed_policy = []
        if commit is not None:
            changed_policy = _policy_and_generated(report, top, commit, prefix, allow_policy_change)
        if gated:
            with policy_mod.active(pol):
                check(report, root, prefix, pol, now)
        if changed_policy and allow_policy_change:
            try:
                rows, found = policy_mod.flips(root, pol, policy_mod.head_policy(
                    top, _rel(params_path, cwd, top)), prefix)
            except ConfigError as exc:      # the new policy itself does not load: it cannot pass
                rows, found = [], [finding("policy-change", "schemas/", "whole file", "a policy that loads",
                                           str(exc), "the changed policy does not load")]
            report.flips = rows
            report.findings.extend(found)
    report.summary = {**info, "root": prefix.rstrip("/") or ".", "policy": pol.source,
                      "clock": now.isoformat(), "versions": [v.display for v in gated], **counts(report),
                      "tolerance_pct": pol.tolerance_pct, "reference_submitter": pol.reference_submitter,
                      "policy_changes": [{"file": f.file, "place": f.place, "old": f.expected, "new": f.found}
                                         for f in report.findings if f.code == "policy-change"],
                      "allow_policy_change": allow_policy_change,
                      "flips": report.flips, "withdrawals": report.withdrawals,
                      "verdict": "pass" if report.ok else "fail"}
    return report


def _rel(path: Path, cwd: Path, top: Path) -> str:
    full = path if path.is_absolute() else cwd / path
    try:
        return full.resolve().relative_to(top.resolve()).as_posix()
    except ValueError as exc:
        raise UsageError(f"--params {path} is outside the repository {top}") from exc


def _policy(top: Path | None, commit: str | None, params_path: Path, cwd: Path,
            scratch: Path) -> policy_mod.Policy:
    """The base's policy; outside git (or for named folders without --base), the
    installed tool's schemas and the given params file."""
    if top is not None and commit is not None:
        return policy_mod.base_policy(top, commit, _rel(params_path, cwd, top), scratch)
    full = params_path if params_path.is_absolute() else cwd / params_path
    compare = params_mod.load(full if full.is_file() else None)["compare"]
    return policy_mod.Policy(rules.schemas_dir(), compare["tolerance_pct"],
                             compare["reference_submitter"], "local (no base: the installed tool's or "
                             "$MLREPRO_SCHEMAS schemas, --params)")


def _policy_and_generated(report: GateReport, top: Path, commit: str, prefix: str, allow: bool) -> list[Finding]:
    """policy-change and generated-file-edited findings from every change since the base."""
    changes = changes_since(top, commit, ".")
    submissions = any(p.startswith(prefix) for p in changes) if prefix else bool(changes)
    found = policy_mod.policy_findings(top, commit, changes, "warning" if allow and not submissions else "error")
    if found and submissions:
        found = [replace(f, severity="error", message=f.message + " (together with submissions: a pull "
                         "request changes policy or submissions, never both)") for f in found]
    report.findings.extend(found)
    if submissions:
        report.findings.extend(policy_mod.generated_findings(changes))
    return found


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
        return _named(paths, root, cwd), [], {"base": None, "versioning": "not checked (give --base)"}, None
    ref, commit = resolve_base(top, base)
    under = prefix.rstrip("/") or "."
    changes = changes_since(top, commit, under)
    gated, found = versioning(changes, files_at(top, commit, under), root, prefix, top, commit)
    if paths:
        named = _named(paths, root, cwd)
        keep = {f"{prefix}{v.display}/" for v in named}
        found = [f for f in found if any(f.file.startswith(k) for k in keep)]
        gated = named
    return gated, found, {"base": ref, "merge_base": commit[:12], "versioning": "checked"}, commit


def counts(report: GateReport) -> dict:
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

def check(report: GateReport, root: Path, prefix: str, pol: policy_mod.Policy, now) -> None:
    """Ingest the context (see :func:`context_paths`), then judge the gated
    versions' files and rows, under the active policy. A gated version became
    visible now (the gate's clock); the context, when it was committed."""
    from . import compare as compare_mod, ingest as ingest_mod  # pandas: only when there is work

    gated = report.versions
    names = {g.display for g in gated}
    committed = clock.git_clock(root) or (lambda version: None)
    visible = lambda v: clock.Visible(now, "the gate's clock") if v.display in names else committed(v)  # noqa: E731
    ref = pol.reference_submitter
    full = ingest_mod.ingest(context_paths(root, gated, ref), root=root, visible=visible)
    used = {v["path"] for v in full.versions if v["used"]}
    table, found, dispositions = full.table, list(full.findings), list(full.dispositions)
    for g in (g for g in gated if g.display not in used):   # superseded or unsealed: read it as named
        extra = ingest_mod.ingest([root / g.display], root=root, visible=visible)
        found = [f for f in found if not g.holds(f.file)] + extra.findings
        dispositions = [d for d in dispositions if not g.holds(d.source)] + extra.dispositions
        table = _swap(table, extra.table, g, gated)
    mine = lambda text: any(g.holds(text) for g in gated)  # noqa: E731
    report.findings.extend(relocate(f, prefix, root) for f in _dedupe(found) if mine(f.file))
    compared = compare_mod.compare(table, pol.tolerance_pct, ref).rows
    by_source = {r["source"]: r for r in compared}
    rows = [_result_row(r, by_source.get(r["source"]), prefix)
            for r in table.to_dict("records") if mine(r["source"])]
    rows += [_disposed_row(d, prefix) for d in dispositions if mine(d.source)]
    report.rows = typed_rows("GateRow", sorted(rows, key=lambda r: (r["file"], r["line"] or 0)))
    report.findings.extend(_deviations(compared, mine, prefix))
    report.findings.extend(_crosscheck(table, mine, gated, pol, prefix, root))
    report.findings.extend(_empty(gated, report, prefix, root))
    _withdrawals(report, root, prefix, table, pol, visible)
    report.files = sorted(f"{prefix}{g.display}/{p.relative_to(root / g.display).as_posix()}"
                          for g in gated for p in (root / g.display).rglob("*") if p.is_file())


def _crosscheck(table, mine, gated: list[Gated], pol: policy_mod.Policy, prefix: str,
                root: Path) -> list[Finding]:
    """A gated result declared verified must be the one MLCommons published for
    its round, in the base's published/ tables (published-value-differs,
    not-published); a round with no published table is not checked."""
    if pol.published is None:
        return []
    from . import crosscheck

    published = {}
    for round_ in sorted({g.round for g in gated}):
        folder = pol.published / round_        # published/<round>/: that round's tables
        paths = sorted(p for p in folder.glob("*") if p.is_file() and p.suffix in (".csv", ".json"))
        if paths:
            published.update(crosscheck.load_published(paths, round_)[0])
    if not published:
        return []
    checked = crosscheck.check(table[table["source"].map(mine)], published)
    return [relocate(f, prefix, root) for f in checked.findings]


def _dedupe(found: list[Finding]) -> list[Finding]:
    return list(dict.fromkeys(found))


def _withdrawals(report: GateReport, root: Path, prefix: str, table, pol: policy_mod.Policy, visible) -> None:
    """result-dropped findings and the withdrawal summary of each gated version."""
    import pandas as pd

    from . import compare as compare_mod, ingest as ingest_mod

    unread = {r["version"] for r in report.rows if r["outcome"] != "accepted"} | {
        g.display for g in report.versions for f in report.errors
        if f.file.startswith(f"{prefix}{g.display}/") and f.code != "deviates-from-reference"}
    for g in report.versions:
        if g.display in unread:         # what it drops is unknown until its rows read: fix those first
            continue
        pair = withdrawals.predecessor(root, g)
        if pair is None:
            continue
        prev, mine = pair
        old = ingest_mod.ingest([prev.path], root=root, visible=visible).table
        refs = table[table["submitter"] == pol.reference_submitter]
        both = old if g.submitter == pol.reference_submitter else pd.concat([refs, old], ignore_index=True)
        verdicts = {r["source"]: r for r in compare_mod.compare(both, pol.tolerance_pct,
                                                                 pol.reference_submitter).rows}
        new = [r for r in table.to_dict("records") if g.holds(r["source"])]
        found, summary = withdrawals.check(g, new, old.to_dict("records"), verdicts,
                                           mine.manifest.withdraws, prefix, prev.number)
        report.findings.extend(found)
        report.withdrawals.append(summary)


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
