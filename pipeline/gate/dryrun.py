"""``mlrepro submit``, with or without ``--dry-run``: the version sealed (or the
one a submit would seal), judged as the gate judges a new version named by
its folder: one judgement (:func:`pipeline.gate.results.check`) for the three,
so that they print the same verdict and reason for every row.

A dry run seals into a temporary copy of the context (the submitter's folder
and the reference submitter's, same round) and never writes the submissions
root. A finding on the submitted file names that file as the user gave it,
with where the version holds it beside it.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from pipeline.core.findings import Finding, Report
from pipeline.gate.judge import Judging, judged
from pipeline.core.rules import Rules
from pipeline.gate.policy import Policy, local
from pipeline.gate.results import check
from pipeline.gate.submit import SubmitResult, submit as seal
from pipeline.store import clock
from pipeline.store.versions import Version, root_name


def submit(rules: Rules, source: Path, submitter: str, round_: str, status: str, root: Path,
           submitted_at: datetime | None, fmt: str | None, notes: str | None,
           withdraws: list[dict] | None, params_path: Path | None, force: bool = False,
           dry_run: bool = False) -> Report:
    """Seal SOURCE as the next version under ROOT (:func:`pipeline.gate.submit.submit`; DRY_RUN: into a
    copy of its context), then judge it as the gate will; ``summary["created"]`` None when refused."""
    pol = local(rules, params_path) if dry_run else None   # a submit seals first, then reads the policy
    with tempfile.TemporaryDirectory(prefix="mlrepro-dry-run-") as scratch:
        where = Path(scratch) / "submissions" if dry_run else root
        if dry_run:
            for who in dict.fromkeys((submitter, pol.reference_submitter)):
                folder = root / round_ / who
                if folder.is_dir():
                    shutil.copytree(folder, where / round_ / who, symlinks=True,
                                    ignore=shutil.ignore_patterns(".*"))
            where.mkdir(parents=True, exist_ok=True)
        sealed = seal(rules, source, submitter, round_, status, root, submitted_at, fmt, notes, withdraws, force,
                      into=where)
        v = sealed.version
        head = ({"dry_run": True, "sealed": False} if dry_run
                else {"created": v and v.display, "path": v and v.path.as_posix()})
        return _judged(sealed, source, where, root, pol or local(rules, params_path),
                       {**head, "status": sealed.status})


def _judged(sealed: SubmitResult, source: Path, where: Path, root: Path, pol: Policy, head: dict) -> Report:
    """The gate's judgement of the version SEALED (under WHERE: ROOT or a copy of it)."""
    report = Judging()
    now = clock.now()
    report.findings.extend(sealed.findings)
    if sealed.version is not None:
        v = sealed.version
        report.versions = [Version.named(v.round, v.submitter, v.number)]
        check(report, where, root_name(root), pol, now)
        holds = f"{report.versions[0].display}/{source.name}"
        report.findings[:] = [_as_given(f, root_name(root), holds, source) for f in report.findings]
    return judged(report, pol, now, head)


def _as_given(f: Finding, shown: str | None, holds: str, source: Path) -> Finding:
    """A finding on the version's copy of SOURCE (HOLDS, relative to the root), at the file as the user
    gave it, with the version's path beside it; any other finding as it is."""
    prefix = f"{shown.rstrip('/')}/{holds}" if shown else holds
    file = f.where.path
    if file != prefix and not file.startswith(prefix + "/"):
        return f
    given = source.as_posix() + file[len(prefix):]
    return replace(f, where=replace(f.where, file=given, root=None), sealed=str(f.where))
