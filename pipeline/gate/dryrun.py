"""``mlrepro submit --dry-run``: every gate check on the version a submit would
seal, sealing nothing.

The would-be version is sealed in a temporary copy of its context (the
submitter's folder and the reference submitter's, same round), then judged as
the gate judges a new version: files, rows, the reference comparison, the
clock (now), submitted_at, and withdrawals against the version it supersedes.
The submissions root itself is never written; locations name it as the user
gave it.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import datetime
from pathlib import Path

from pipeline.gate.judge import GateReport, counts
from pipeline.core.rules import Rules
from pipeline.gate.policy import local
from pipeline.gate.results import check
from pipeline.gate.submit import seal
from pipeline.store import clock
from pipeline.store.versions import Version, root_name


def dry_run(rules: Rules, source: Path, submitter: str, round_: str, status: str, root: Path,
            submitted_at: datetime | None, fmt: str | None, notes: str | None,
            withdraws: list[dict] | None, params_path: Path | None, force: bool = False) -> GateReport:
    """The gate's report on the version ``submit`` would seal (a refusal's findings when it would refuse)."""
    pol = local(rules, params_path)
    report = GateReport()
    now = clock.now()
    with tempfile.TemporaryDirectory(prefix="mlrepro-dry-run-") as scratch:
        copy = Path(scratch) / "submissions"
        for who in dict.fromkeys((submitter, pol.reference_submitter)):
            folder = root / round_ / who
            if folder.is_dir():
                shutil.copytree(folder, copy / round_ / who, symlinks=True,
                                ignore=shutil.ignore_patterns(".*"))
        copy.mkdir(parents=True, exist_ok=True)
        sealed = seal(rules, source, submitter, round_, status, copy, root_name(root), submitted_at, fmt, notes,
                      withdraws, force)
        report.findings.extend(sealed.findings)
        if sealed.version is not None:
            report.versions = [Version.named(round_, submitter, sealed.version.number)]
            check(report, copy, root_name(root), pol, now)
    report.summary = {"dry_run": True, "sealed": False, "status": sealed.status, "policy": pol.source,
                      "clock": now.isoformat(),
                      "versions": [v.display for v in report.versions], **counts(report),
                      "tolerance_pct": pol.tolerance_pct, "reference_submitter": pol.reference_submitter,
                      "reference_vendor": pol.reference_vendor, "withdrawals": report.withdrawals,
                      "verdict": "pass" if report.ok else "fail"}
    return report
