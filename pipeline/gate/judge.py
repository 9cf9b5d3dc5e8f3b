"""The CI gate: judge a change -- what the head commit changes since its merge
base with the base branch, merged into that branch's tip -- as git stores it.

It checks what the change is (:mod:`pipeline.gate.scope`; a maintenance change
needs the maintainers' label ``--allow-maintenance`` and lists every shipped
result it flips, :mod:`pipeline.gate.flips`), its versioning against the base
(:mod:`pipeline.gate.versioning`), and each gated version with the base's
policy (:mod:`pipeline.gate.results`), whose reference must verify.

Every byte judged comes from git's object store, never the working tree
(:mod:`pipeline.gate.gitstore` says why). ``--worktree`` judges what a commit of
the working tree would store, leaving out dvc.yaml's outs and metrics (which
a local ``make run`` rewrites).

The change is laid over the base's tip (:func:`gitstore.resolve_base`) and
judged there with the tip's policy: the verdict of the pull request merged
into the base as it is now, whether or not the branch is up to date. Named
version folders without ``--base`` (or outside git) are read from disk with
the installed tool's policy. The gate never imports great_expectations, dvc
or the report (a test checks the imports).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.core.errors import ConfigError, UsageError
from pipeline.core.findings import Finding, Report, located
from pipeline.core.rules import Rules
from pipeline.core.vocabulary import Severity, tally
from pipeline.core.model import AGREE, DEVIATES, EXCLUDED, NO_REFERENCE, REFERENCE, REJECTED, SET_ASIDE, Row, Source
from pipeline.gate import flips as flips_mod, gitstore, policy as policy_mod, scope as scope_mod
from pipeline.gate.results import check, context_folders, not_compared
from pipeline.gate.versioning import versioning
from pipeline.store import clock
from pipeline.store.manifests import MANIFEST
from pipeline.store.versions import Version, root_name

DVC_YAML = "dvc.yaml"          # the base's pipeline: what it generates


@dataclass
class Judging:
    """The gate's judgement as it is made (:func:`judged` makes it the report)."""

    versions: list[Version] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)      # the files checked, as the user names them
    flips: list[dict] = field(default_factory=list)          # --allow-maintenance: base -> head verdicts
    withdrawals: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class _Call:
    """What the gate was asked, resolved once."""

    paths: list[Path]
    root: Path               # the submissions root, absolute
    shown: str | None        # the root as the user named it
    params: Path             # absolute
    cwd: Path
    now: object
    scratch: Path
    rules: Rules             # the command line's: the policy of named folders without a base


# ---- the gate ----------------------------------------------------------------------------

def run(rules: Rules, paths: list[Path], root: Path, base: str | None, params_path: Path = Path("params.yaml"),
        cwd: Path | None = None, allow_maintenance: bool = False, worktree: bool = False) -> Report:
    """Gate the change (or the named version folders PATHS). ALLOW_MAINTENANCE: the maintainers'
    label is on the change. Locations name the submissions root as ROOT names it, from CWD."""
    cwd = cwd or Path.cwd()
    top = gitstore.repo_top(cwd)
    if worktree and (top is None or (paths and not base)):
        raise UsageError("--worktree judges a git change: run it inside a git repository, without PATHs "
                         "or with --base")
    report = Judging()
    with tempfile.TemporaryDirectory(prefix="mlrepro-gate-") as scratch:
        call = _Call(list(paths), cwd / root, root_name(root), cwd / params_path, cwd, clock.now(), Path(scratch),
                     rules)
        if top is None or (paths and not base):
            pol, info = _on_folders(report, call, top)
        else:
            pol, info = _on_commits(report, call, top, base, allow_maintenance, worktree)
    return judged(report, pol, call.now, {**info, "root": call.shown or "."}, {
        "policy_changes": [{"file": f.file, "place": f.place, "old": f.expected, "new": f.found}
                           for f in report.findings if f.code == "policy-change"],
        "allow_maintenance": allow_maintenance, "flips": report.flips})


def _judge_versions(report: Judging, root: Path, call: _Call, pol: policy_mod.Policy,
                    committed: clock.Clock | None = None) -> None:
    if not report.versions:
        return
    broken = policy_mod.verify(pol, sorted({v.round for v in report.versions}))
    if broken:
        report.findings.extend(broken)
        return
    try:
        check(report, root, call.shown, pol, call.now, committed)
    except ConfigError as exc:       # a rules file the verification does not name
        report.findings.append(policy_mod.unverifiable(Source("schemas/"), "the rules load",
                                                       policy_mod.scrub(str(exc), pol)))


# ---- named folders, read from disk ---------------------------------------------------------

def _on_folders(report: Judging, call: _Call, top: Path | None) -> tuple[policy_mod.Policy, dict]:
    if not call.paths:
        raise ConfigError("not inside a git repository: give the version folders to gate")
    if not call.root.is_dir():
        raise UsageError(f"--root {call.root}: no such folder")
    for path in call.paths:
        if not (call.cwd / path).is_dir():
            raise UsageError(f"{path}: no such version folder")
    report.versions = _named(call.paths, call.root, call.cwd)
    pol = policy_mod.local(call.rules, call.params, "--params; no base")
    _judge_versions(report, call.root, call, pol)
    why = "no git repository" if top is None else "give --base"
    return pol, {"base": None, "versioning": f"not checked ({why})"}


def _named(paths: list[Path], root: Path, cwd: Path) -> list[Version]:
    out = []
    for path in paths:
        path = cwd / path
        rel = _relative(path, root, f"{path}: not inside the submissions root {root}")
        version, _ = Version.parse(rel + "/" + MANIFEST)
        if version is None or version.display != rel:
            raise UsageError(f"{path}: not a version folder <round>/<submitter>/v<N>")
        out.append(version)
    return sorted(set(out), key=lambda v: (v.round, v.submitter, v.number))


# ---- a change, as git stores it ------------------------------------------------------------

def _relative(path: Path, top: Path, outside: str) -> str:
    """PATH relative to TOP, resolved; a usage error OUTSIDE when it is not under TOP."""
    try:
        return path.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        raise UsageError(outside) from None


def _in_repository(path: Path, top: Path, what: str) -> str:
    rel = _relative(path, top, f"{what} {path} is outside the repository {top}")
    return "" if rel == "." else rel


def _on_commits(report: Judging, call: _Call, top: Path, base: str | None, allow: bool,
                worktree: bool) -> tuple[policy_mod.Policy, dict]:
    root = _in_repository(call.root, top, "--root")
    params = _in_repository(call.params, top, "--params")
    # judged as the change merged into the base's tip, never at the merge base: where the branch starts
    # (before main tightened a rule or gained a reference) chooses nothing
    ref, base_commit, merge_base = gitstore.resolve_base(top, base)
    at_base = call.scratch / "base-policy"
    pol = policy_mod.policy_at(top, base_commit, params, at_base, f"base {base_commit[:12]}", beside=(DVC_YAML,))
    outputs = scope_mod.generated((at_base / DVC_YAML).read_bytes() if (at_base / DVC_YAML).is_file() else None)
    if worktree:
        own, shown_head = gitstore.worktree(top, call.scratch, outputs), "working tree"
    else:
        own = gitstore.head_commit(top)
        shown_head = f"HEAD {own[:12]}"
    head = gitstore.merged(top, base_commit, merge_base, own, call.scratch)
    scope = scope_mod.classify(gitstore.changes(top, base_commit, head), root)
    gated, found = _versions(top, base_commit, head, scope, root, call, shown_head)
    judged = scope_mod.judge(scope, gated, top, base_commit, head, pol, params, outputs, call.shown, allow)
    report.versions = gated
    report.findings.extend(found + judged.findings)
    gitstore.materialise(top, head, [_join(root, f) for f in context_folders(gated, pol.reference_submitter)],
                         call.scratch / "head")
    # the versions already on the base are dated by the base's visibility record, never by a commit (its
    # dates are the submitter's to choose); anything else is new, seen now by the gate's clock
    committed = _record_clock(pol.rules, top, base_commit, call.now)
    _judge_versions(report, call.scratch / "head" / root, call, pol, committed)
    flips_checked = allow and judged.kind == "maintenance" and (
        bool(scope.submitters or scope.loose) or any(f.code == "policy-change" for f in judged.findings))
    if flips_checked:
        _flips(report, top, base_commit, pol, head, root, params, call)
    return pol, {"base": ref, "base_commit": base_commit[:12], "merge_base": merge_base[:12], "head": shown_head, "versioning": "checked",
                 "change": judged.kind, "flips_checked": flips_checked}


def _versions(top: Path, base: str, head: str, scope: scope_mod.Scope, root: str, call: _Call,
              shown_head: str) -> tuple[list[Version], list]:
    """The versions to gate (the named ones, when PATHs are given) and their versioning findings."""
    under = [root] if root else []
    files = {rev: [e.path[len(root) + 1:] if root else e.path for e in gitstore.tree(top, rev, *under)]
             for rev in (base, head)}
    gated, found = versioning(scope.root_changes, files[base], files[head], call.shown, base,
                              lambda p: gitstore.first_changed_line(top, base, head, _join(root, p)))
    if not call.paths:
        return gated, found
    named = _named(call.paths, call.root, call.cwd)
    missing = [v.display for v in named if not any(v.holds(p) for p in files[head])]
    if missing:
        raise UsageError(f"{', '.join(missing)}: no such version in the {shown_head.split(' ')[0]} tree "
                         "(commit it, or give --worktree)")
    return named, [f for f in found if any(v.holds(f.where.file) for v in named)]


def _join(root: str, rel: str) -> str:
    return f"{root}/{rel}" if root else rel


def _flips(report: Judging, top: Path, base_commit: str, base_pol: policy_mod.Policy, head: str, root: str,
           params: str, call: _Call) -> None:
    """Every shipped result whose verdict or status differs between the base and the head (each
    with its own submissions and policy)."""
    under = [root] if root else []
    side = {}
    for name, rev in (("base", base_commit), ("head", head)):
        folder = call.scratch / f"flips-{name}"
        gitstore.materialise(top, rev, under, folder)
        try:
            pol = base_pol if name == "base" else policy_mod.policy_at(
                top, rev, params, call.scratch / "head-policy", f"head {rev[:12]}")
            side[name] = flips_mod.outcomes(folder / root, pol, _record_clock(pol.rules, top, rev, call.now))
        except ConfigError as exc:
            if name == "base":
                report.findings.append(policy_mod.unverifiable(Source("schemas/"), "the base's rules load",
                                                               policy_mod.scrub(str(exc), base_pol)))
            else:                    # the new policy itself does not load: it cannot pass
                report.findings.append(located("policy-change", Source("schemas/"), "a policy that loads",
                                               policy_mod.scrub(str(exc), call.scratch / "head-policy"),
                                               "the changed policy does not load"))
            return
    report.flips, found = flips_mod.flips(side["base"], side["head"], call.shown)
    report.findings.extend(found)


def _record_clock(rules: Rules, top: Path, rev: str, now) -> clock.Clock:
    return clock.record_clock(rules, clock.read_record(gitstore.read(top, rev, clock.RECORD)), now)


def judged(report: Judging, pol: policy_mod.Policy, now, head: dict, tail: dict = {}) -> Report:  # noqa: B006
    """The judgement as its report: the gate's, and submit's (sealed or a dry run), the summary's
    keys the same around what each adds (HEAD first, TAIL before the withdrawals)."""
    ok = not any(f.severity == Severity.ERROR for f in report.findings)
    counted = tally([r.get("verdict") or r["outcome"] for r in report.rows],
                    (AGREE, DEVIATES, NO_REFERENCE, REFERENCE, EXCLUDED, REJECTED, SET_ASIDE))
    return Report(report.rows, report.findings, {
        **head, "policy": pol.source, "clock": now.isoformat(), "versions": [v.display for v in report.versions],
        "results": len(report.rows), **{k.replace("-", "_"): n for k, n in counted.items()},
        "tolerance_pct": pol.tolerance_pct, "reference_submitter": pol.reference_submitter,
        "reference_vendor": pol.reference_vendor, **tail, "withdrawals": report.withdrawals,
        "not_compared": not_compared(report.rows, pol.reference_submitter),
        "verdict": "pass" if ok else "fail"}, files=report.files)
