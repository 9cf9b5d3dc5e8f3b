"""``mlrepro submit --dry-run``: every gate check on the version a submit would
seal, sealing nothing.

The would-be version is sealed in a temporary copy of its context (the
submitter's folder and the reference submitter's, same round), then judged as
the gate judges a new version: files, rows, the reference comparison, the
clock (now), submitted_at, and withdrawals against the version it supersedes.
The submissions root itself is never written.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import datetime
from pathlib import Path

from pipeline.store import clock, manifests as store
from pipeline.core import params as params_mod, rules
from pipeline.gate.judge import Gated, GateReport, check, counts
from pipeline.gate.policy import Policy, active


def dry_run(source: Path, submitter: str, round_: str, status: str, root: Path,
            submitted_at: datetime | None, fmt: str | None, notes: str | None,
            withdraws: list[dict] | None, params_path: Path | None, display_root: str) -> GateReport:
    compare = params_mod.load(params_path if params_path and params_path.is_file() else None)["compare"]
    pol = Policy.of(rules.schemas_dir(), compare, "local (the installed tool's or $MLREPRO_SCHEMAS schemas, "
                    "--params)")
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
        sealed = store.submit(source, submitter, round_, status, copy, submitted_at, fmt, notes, withdraws)
        report.findings.extend(sealed.findings)
        if sealed.version is not None:
            report.versions = [Gated(round_, submitter, sealed.version.number)]
            with active(pol):
                check(report, copy, display_root, pol, now)
    report.summary = {"dry_run": True, "sealed": False, "policy": pol.source, "clock": now.isoformat(),
                      "versions": [v.display for v in report.versions], **counts(report),
                      "tolerance_pct": pol.tolerance_pct, "reference_submitter": pol.reference_submitter,
                      "reference_vendor": pol.reference_vendor, "withdrawals": report.withdrawals, "verdict": "pass" if report.ok else "fail"}
    return report
