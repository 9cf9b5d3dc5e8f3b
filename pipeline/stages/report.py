"""The ``report`` stage (``mlrepro report-all``): everything reported from
the compared table, then the HTML report of it.

============ =============================================================== =====================
step         the same as                                                     writes
============ =============================================================== =====================
metrics      ``mlrepro metrics RESULTS --agreement A --rejected R``          ``metrics``, ``details``
claims       ``mlrepro claims LEDGER RESULTS``                               ``claims``
scaling      ``mlrepro scaling RESULTS``                                     ``scaling``
record       ``mlrepro record RESULTS`` (from the agreement table)           ``record``
crosscheck   ``mlrepro crosscheck RESULTS --published TABLE``, per table     its output
report       ``mlrepro report RESULTS ... --claims C --scaling S``           ``report``, ``plot_data``
             ``--validation V`` of the files just written
============ =============================================================== =====================

The table is read and checked once; its own findings (rows that fail the
schema) are listed once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pipeline.analyses import claims, crosscheck, ledger as claims_ledger, metrics, record, scaling
from pipeline.core.files import atomic_dir, write_json, write_table, write_text
from pipeline.core.findings import Finding, Report
from pipeline.core.model import DEFAULT_REFERENCE_SUBMITTER, DEFAULT_REFERENCE_VENDOR, DEFAULT_TOLERANCE_PCT
from pipeline.core.rules import Rules
from pipeline.core.vocabulary import Severity
from pipeline.ingest import table
from pipeline.output import report as html_report
from pipeline.output.report.load import read_csv
from pipeline.output.render import write_report


@dataclass
class Paths:
    """What the step reads and where it writes (the dvc.yaml ``report`` stage names each)."""

    results: Path
    agreement: Path
    rejected: Path
    versions: Path
    ledger: Path
    validation: Path | None
    claims: Path
    scaling: Path
    metrics: Path
    details: Path
    report: Path
    plot_data: Path
    crosscheck: list[tuple[Path, Path]] = field(default_factory=list)   # (published table, output)
    superseded: Path | None = None
    record: Path | None = None   # the partners' record across rounds

    def inputs(self) -> dict[str, object]:
        """Every input by the option that names it (for the CLI's path checks)."""
        return {"RESULTS": self.results, "--agreement": self.agreement, "--rejected": self.rejected,
                "--versions": self.versions, "--superseded": self.superseded, "--ledger": self.ledger, "--validation": self.validation,
                "--crosscheck": [published for published, _ in self.crosscheck]}

    def outputs(self) -> dict[str, object]:
        """Every output by the option that names it."""
        return {"--claims-out": self.claims, "--scaling-out": self.scaling, "--metrics-out": self.metrics,
                "--output": self.report, "--plot-data": self.plot_data, "--record-out": self.record,
                **{f"--crosscheck #{i + 1}": out for i, (_, out) in enumerate(self.crosscheck)}}


def report_all(rules: Rules, paths: Paths, reference_submitter: str = DEFAULT_REFERENCE_SUBMITTER,
               reference_vendor: str = DEFAULT_REFERENCE_VENDOR,
               tolerance_pct: float = DEFAULT_TOLERANCE_PCT) -> tuple[Report, list[str]]:
    """Every step of the module's table, in its order; each output file holds
    the bytes the step's own command writes (its report carries the table's
    findings first, as the command's does). The report has one row per step;
    beside it, the HTML report's warnings (an input it could not use)."""
    frame, found = table.load(rules, paths.results)
    steps, findings, written = [], list(found), []

    def add(step: str, wrote: list[Path], summary: dict, its_findings: list[Finding] = ()) -> None:
        steps.append({"step": step, "wrote": " ".join(p.as_posix() for p in wrote), "summary": ", ".join(
            f"{k}={v}" for k, v in summary.items() if not isinstance(v, (dict, list)))})
        findings.extend(its_findings)
        written.extend(wrote)

    def write(step: str, path: Path, report: Report) -> None:
        write_report(report.combine(before=found), path)
        add(step, [path], report.summary, report.findings)

    counts = metrics.compute(paths.results, paths.agreement, paths.rejected)
    write_metrics(counts, paths.metrics, paths.details)
    add("metrics", [paths.metrics, paths.details], counts.totals)

    write("claims", paths.claims, claims.check_claims(rules, claims_ledger.read_ledger(rules, paths.ledger), frame,
                                                      reference_submitter, reference_vendor))
    write("scaling", paths.scaling, scaling.scaling(rules, frame, reference_submitter))
    if paths.record is not None:   # from the judged table the report shows, verified rows only
        write("record", paths.record, record.record(read_csv(paths.agreement)))

    rows = crosscheck.records(frame) if paths.crosscheck else []   # the table's rows, built once for every table
    for published_path, path in paths.crosscheck:
        published, read_findings = crosscheck.load_published(rules, [published_path])
        # the published table's own warnings are not this check's; its errors are
        write(f"crosscheck {published_path.as_posix()}", path, crosscheck.check(rows, published).combine(
            after=[f for f in read_findings if f.severity == Severity.ERROR]))

    doc = html_report.build(rules, html_report.Inputs(paths.results, paths.agreement, paths.rejected, paths.versions,
                                               paths.scaling, paths.claims, None, paths.validation,
                                               reference_vendor, paths.superseded),
                            paths.report, tolerance_pct)
    write_text(doc.html, paths.report)
    write_table(doc.deviation, paths.plot_data)
    add("report", [paths.report, paths.plot_data], {"warnings": len(doc.notes)})
    return Report(steps, findings, {"steps": len(steps), "files_written": len(written)}), doc.notes


def write_metrics(counts: metrics.Metrics, out: Path | None, folder: Path | None) -> None:
    """metrics.json (``out``) and the metrics folder, replaced whole (no stale
    partner file); either may be None (not written)."""
    if folder is not None:
        with atomic_dir(folder) as tmp:
            for name, data in counts.files.items():
                write_json(data, tmp / name)
    if out is not None:
        write_json(counts.totals, out)
