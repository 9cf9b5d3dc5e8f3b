"""What a change is: a submission, or a maintenance change.

A submission pull request is exactly new version folders
``<root>/<round>/<submitter>/v<N>/`` of one partner, holding regular files.
That is decided by what is allowed, never by a list of forbidden paths: every
other changed path is a maintenance change (one finding per path), and so is a
version of the reference submitter (``reference-change``). A maintenance
change passes only with the maintainers' label, and never together with a
submission. What a version folder may hold is the store's one rule
(:mod:`pipeline.store.contents`); regular files under the submissions root
are left to the versioning rules (:mod:`pipeline.gate.versioning`).

The finer codes: ``policy-change`` for what the gate's policy reads,
``generated-file-edited`` for the outputs the base's ``dvc.yaml`` declares,
``maintenance-change`` for everything else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from pipeline.core.errors import ConfigError
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source, version_number
from pipeline.core.vocabulary import Severity
from pipeline.gate import gitstore, policy as policy_mod
from pipeline.store.manifests import MANIFEST
from pipeline.store.versions import Version

LABEL = "maintenance"          # the maintainers' pull-request label; the workflow passes --allow-maintenance
DVC_LOCK = "dvc.lock"          # written by every `dvc repro`, beside dvc.yaml
SUBMISSION = "new version folders <round>/<submitter>/v<N>/ of one partner, regular files only"
TOGETHER = ("together with a submission: a pull request is a submission (new version folders of one partner) "
            f"or a maintenance change (the maintainers', with the `{LABEL}` label), never both; move it to a "
            "pull request of its own")


@dataclass
class Scope:
    """A change set split by what it may be: ``root_changes`` (root-relative
    path -> A, M or D: regular files, for the versioning rules), ``outside``
    (every other path, with why it is no submission), ``submitters`` whose
    folders it touches, and ``loose``: it touches the root outside them."""

    root_changes: dict[str, str] = field(default_factory=dict)
    outside: list[tuple[gitstore.Change, str]] = field(default_factory=list)
    submitters: set[str] = field(default_factory=set)
    loose: bool = False

    def partner(self, reference_submitter: str) -> bool:
        """Whether the change holds anything of a partner's (a submission side)."""
        return self.loose or bool(self.submitters - {reference_submitter})


def classify(changes: list[gitstore.Change], root: str) -> Scope:
    """Split CHANGES by what a submission may hold; ROOT is the submissions
    root relative to the repository ("" for the repository itself)."""
    scope = Scope()
    prefix = f"{root}/" if root else ""
    for change in changes:
        if not change.path.startswith(prefix):
            scope.outside.append((change, f"outside {root or 'the submissions root'}/"))
            continue
        rel = change.path[len(prefix):]
        parts = rel.split("/")
        if change.status == "D" and (len(parts) < 4 or Version.parse(rel)[0] is None):
            scope.outside.append((change, "a deletion outside any version folder"))   # a maintainer's
            continue
        if len(parts) >= 3:
            scope.submitters.add(parts[1])
        else:
            scope.loose = True
        why = _not_a_submission_file(change, parts)
        if why:
            scope.outside.append((change, why))
        else:
            scope.root_changes[rel] = change.status
    return scope


NOT_REGULAR = {gitstore.SYMLINK: "a symbolic link (mode 120000)", gitstore.SUBMODULE: "a submodule (mode 160000)",
               gitstore.EXECUTABLE: "an executable file (mode 100755)"}


def _not_a_submission_file(change: gitstore.Change, parts: list[str]) -> str | None:
    mode = change.old_mode if change.status == "D" else change.new_mode
    if change.status == "M" and change.old_mode != change.new_mode:
        return f"its mode changed from {change.old_mode} to {change.new_mode}"
    if mode != gitstore.REGULAR:
        return f"{NOT_REGULAR.get(mode, f'mode {mode}')}, not a regular file"
    # inside a version folder, what a version may hold is the store's one rule (pipeline.store.contents)
    inside = len(parts) >= 4 and version_number(parts[2]) is not None
    hidden = next((p for p in (parts[:3] if inside else parts) if p.startswith(".")), None)
    if hidden:
        return f"a hidden name ({hidden}): git and other tools read such files"
    return None


def generated(dvc_yaml: bytes | None) -> tuple[str, ...]:
    """The paths ``dvc repro`` writes, from a dvc.yaml's text: every stage's
    ``outs``, ``metrics`` and ``plots``, and dvc.lock."""
    if dvc_yaml is None:
        return (DVC_LOCK,)
    try:
        doc = yaml.safe_load(dvc_yaml.decode("utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"dvc.yaml at the base does not load: {exc}") from exc
    paths = [DVC_LOCK]
    for stage in (doc.get("stages") or {}).values() if isinstance(doc, dict) else ():
        for kind in ("outs", "metrics", "plots"):
            for entry in (stage or {}).get(kind) or () if isinstance(stage, dict) else ():
                paths += [str(k) for k in entry] if isinstance(entry, dict) else [str(entry)]
    return tuple(dict.fromkeys(p.strip("/") for p in paths))


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in prefixes)


@dataclass(frozen=True)
class Judged:
    """The change's kind (``none``, ``submission``, ``maintenance``, ``mixed``) and its findings."""

    kind: str
    findings: list[Finding]


def judge(scope: Scope, gated: list[Version], top: Path, base: str, head: str, pol, params_path: str,
          outputs: tuple[str, ...], shown: str | None, allow: bool) -> Judged:
    """The change findings: every path outside what a submission may hold, every
    reference version, and versions of more than one partner. Warnings when
    ALLOW (the maintainers' label) and the change holds no submission."""
    reference = pol.reference_submitter
    partner = scope.partner(reference)
    references = [g for g in gated if g.submitter == reference]
    maintenance = bool(scope.outside or references)
    kind = ("mixed" if partner and maintenance else "submission" if partner
            else "maintenance" if maintenance else "none")
    severity = Severity.WARNING if allow and not partner else Severity.ERROR
    together = f" ({TOGETHER})" if partner else ""
    found = []
    for change, why in scope.outside:
        found += _path_findings(change, why, top, base, head, params_path, outputs, severity, together)
    for g in references:
        found.append(located(
            "reference-change", Source(f"{g.display}/{MANIFEST}", root=shown),
            f"no new version of the reference submitter {reference} (reference data: the maintainers')",
            f"new version {g.display}",
            f"a reference change: only the maintainers add {reference}'s versions, with the "
            f"`{LABEL}` label" if not partner else f"a reference change {TOGETHER}", severity))
    partners = sorted({g.submitter for g in gated if g.submitter != reference})
    if len(partners) > 1:
        for g in (g for g in gated if g.submitter != reference):
            found.append(located(
                "more-than-one-submitter", Source(f"{g.display}/{MANIFEST}", root=shown),
                "the versions of one submitter per pull request", f"versions of {', '.join(partners)}",
                "a submission pull request holds one partner's versions: open one per submitter"))
    return Judged(kind, found)


def _path_findings(change: gitstore.Change, why: str, top: Path, base: str, head: str, params_path: str,
                   outputs: tuple[str, ...], severity: str, together: str) -> list[Finding]:
    what = gitstore.WHAT[change.status]
    regular = why.startswith("outside ")
    if regular and policy_mod.is_source(change.path, params_path):
        found = policy_mod.policy_findings(top, base, head, change.path, change.status, params_path, severity,
                                           together)
        if found:
            return found
    if regular and _under(change.path, outputs):
        if together:   # a partner's pull request: the partner drops it, nothing to split
            undo = (f"git rm --cached {change.path}" if change.status == "A"
                    else f"git checkout {base} -- {change.path}")
            fix = (f"an output of dvc.yaml is {what} in a submission: drop it from your branch (`{undo}`, "
                   f"then commit); the regenerate workflow writes it on main after the merge")
        else:
            fix = f"an output of dvc.yaml is {what}: outputs are regenerated on main, never submitted"
        return [located("generated-file-edited", Source(change.path),
                        "the pipeline's outputs as the base has them (the regenerate workflow updates them "
                        "on main)", what, fix, severity)]
    message = f"a change {TOGETHER}" if together else f"a maintenance change: it needs the maintainers' `{LABEL}` label"
    return [located("maintenance-change", Source(change.path), SUBMISSION, f"{what}: {why}", message, severity)]
