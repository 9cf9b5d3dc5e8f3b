"""The CI gate: check submission versions added or changed since a git base.

What it checks, for each gated version folder ``<root>/<round>/<submitter>/v<N>``:

* policy (:mod:`pipeline.gate.policy`): read from the merge base through git; a
  change to it is ``policy-change``; generated files edited together with
  submissions are ``generated-file-edited``;
* versioning, against the base commit (:mod:`pipeline.gate.versioning`): a version
  that exists at the base is immutable, and a new version is numbered next;
* the clock (:mod:`pipeline.store.clock`): a gated version became visible now;
* withdrawals (:mod:`pipeline.gate.withdrawals`): nothing dropped silently;
* the files, through :mod:`pipeline.ingest.submissions`: manifest schema, sha256 seals,
  formats and every row;
* every result of a partner version against the reference submitter's
  current result (:mod:`pipeline.analyses.compare`; the context read is the
  round's folders of that submitter and of the reference submitter).

The base is ``--base`` when given; otherwise the merge base of HEAD with
``origin/$GITHUB_BASE_REF`` (when that variable is set), else ``origin/HEAD``,
else ``main``, else ``master``.

The gate reads and compares with the pipeline's own ingest and compare; it
never imports great_expectations, dvc or the report (a test checks the
imports). Nothing here prints.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from pipeline.core import params as params_mod, rules
from pipeline.core.errors import ConfigError, UsageError
from pipeline.core.findings import Finding, Report, located
from pipeline.core.model import AGREE, DEVIATES, EXCLUDED, NO_REFERENCE, REFERENCE, REJECTED, Source
from pipeline.gate import flips as flips_mod, policy as policy_mod
from pipeline.gate.results import check
from pipeline.gate.versioning import Gated, _parse, changes_since, files_at, repo_top, resolve_base, versioning
from pipeline.store import clock
from pipeline.store.manifests import MANIFEST
from pipeline.store.versions import root_name


@dataclass
class GateReport(Report):
    """rows: one per result line; files: the files checked, as the user names them."""

    versions: list[Gated] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    flips: list[dict] = field(default_factory=list)          # --allow-policy-change: base -> head verdicts
    withdrawals: list[dict] = field(default_factory=list)    # per gated version that supersedes another


# ---- the gate ----------------------------------------------------------------------------

def run(paths: list[Path], root: Path, base: str | None, params_path: Path = Path("params.yaml"),
        cwd: Path | None = None, allow_policy_change: bool = False) -> GateReport:
    """Gate PATHS (version folders), or every version changed since the base,
    with the policy of the merge base (see :mod:`pipeline.gate.policy`).
    Locations name the submissions root as ROOT names it, from CWD."""
    cwd = cwd or Path.cwd()
    shown = root_name(root)
    folder = root if root.is_absolute() else cwd / root
    if not folder.is_dir():
        raise UsageError(f"--root {root}: no such folder")
    top = repo_top(cwd)
    report = GateReport()
    now = clock.now()                  # the gate's own clock: nothing moves it back
    with tempfile.TemporaryDirectory(prefix="mlrepro-gate-") as scratch:
        touched = False
        if top is None:
            if not paths:
                raise ConfigError("not inside a git repository: give the version folders to gate")
            info = {"base": None, "versioning": "not checked (no git repository)"}
            gated, found, commit = _named(paths, folder, cwd), [], None
        else:
            if not folder.resolve().is_relative_to(top.resolve()):
                raise UsageError(f"--root {root} is outside the repository {top}")
            gated, found, info, commit, touched = _from_git(paths, folder, shown, base, top, cwd)
        pol = _policy(top, commit, params_path, cwd, Path(scratch))
        report.versions = gated
        report.findings.extend(found)
        changed_policy = []
        if commit is not None:
            changed_policy = _policy_and_generated(report, top, commit, touched, allow_policy_change)
        if gated:
            with policy_mod.active(pol):
                check(report, folder, shown, pol, now)
        if changed_policy and allow_policy_change:
            try:
                rows, found = flips_mod.flips(folder, pol, policy_mod.head_policy(
                    top, _rel(params_path, cwd, top)), shown)
            except ConfigError as exc:      # the new policy itself does not load: it cannot pass
                rows, found = [], [located("policy-change", Source("schemas/"), "a policy that loads",
                                           str(exc), "the changed policy does not load")]
            report.flips = rows
            report.findings.extend(found)
    report.summary = {**info, "root": shown or ".", "policy": pol.source,
                      "clock": now.isoformat(), "versions": [v.display for v in gated], **counts(report),
                      "tolerance_pct": pol.tolerance_pct, "reference_submitter": pol.reference_submitter,
                      "reference_vendor": pol.reference_vendor,
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
    return policy_mod.Policy.of(rules.schemas_dir(), compare, "local (no base: the installed tool's or "
                                "$MLREPRO_SCHEMAS schemas, --params)")


def _policy_and_generated(report: GateReport, top: Path, commit: str, submissions: bool,
                          allow: bool) -> list[Finding]:
    """policy-change and generated-file-edited findings from every change since
    the base (SUBMISSIONS: whether the change touches the submissions root)."""
    changes = changes_since(top, commit)
    found = policy_mod.policy_findings(top, commit, changes, "warning" if allow and not submissions else "error")
    if found and submissions:
        found = [replace(f, severity="error", message=f.message + " (together with submissions: a pull "
                         "request changes policy or submissions, never both)") for f in found]
    report.findings.extend(found)
    if submissions:
        report.findings.extend(policy_mod.generated_findings(changes))
    return found


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


def _from_git(paths: list[Path], root: Path, shown: str | None, base: str | None, top: Path, cwd: Path):
    """(versions to gate, versioning findings, summary entries, merge base,
    whether the submissions root changed) in a git repository. Named PATHS
    are checked against the base only when --base is given."""
    if paths and not base:
        return _named(paths, root, cwd), [], {"base": None, "versioning": "not checked (give --base)"}, None, False
    ref, commit = resolve_base(top, base)
    changes = changes_since(root, commit)
    gated, found = versioning(changes, files_at(root, commit), root, shown, commit)
    if paths:
        named = _named(paths, root, cwd)
        found = [f for f in found if any(v.holds(f.where.file) for v in named)]
        gated = named
    return gated, found, {"base": ref, "merge_base": commit[:12], "versioning": "checked"}, commit, bool(changes)


def counts(report: GateReport) -> dict:
    outcomes = [r.get("verdict") or r["outcome"] for r in report.rows]
    return {"results": len(report.rows),
            **{k.replace("-", "_"): outcomes.count(k)
               for k in (AGREE, DEVIATES, NO_REFERENCE, REFERENCE, EXCLUDED, REJECTED)}}
