"""The ``audit`` stage (``mlrepro audit``): the Great Expectations suites over
the verified and post-deadline sets (:mod:`pipeline.analyses.audit`), their
report written as ``validation.json`` and, when asked for, the Data Docs
site, built beside the old one and swapped in whole (a killed run leaves the
old one)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from pipeline.analyses.audit import AuditReport, audit
from pipeline.core.files import atomic_dir
from pipeline.core.rules import Rules
from pipeline.output.render import write_report

VALIDATION = "validation.json"


def run(rules: Rules, verified: Path, post_deadline: Path, out_dir: Path, suites: Path | None = None,
        docs: Path | None = None, versions: Path | None = None) -> AuditReport:
    """The suites run on the two sets; OUT_DIR/validation.json and the Data Docs (DOCS) written."""
    with atomic_dir(docs) if docs is not None else nullcontext() as building:
        report = audit(rules, verified, post_deadline, building, suites, versions)
    write_report(report, out_dir / VALIDATION)
    return report
