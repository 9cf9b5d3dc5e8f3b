"""Analyse: everything the DVC pipeline computes from the canonical table, in
one process (the ``analyse`` stage, ``mlrepro analyse``).

Eight stages did this before, each a process paying its own start-up
(pandas, pyarrow, pandera: about a second) to read ``data/results.parquet``
once more. This module reads the table once and runs, in this order, what
each of these commands does, writing the very bytes each writes
(``tests/test_analyse.py`` runs both ways and compares every file):

=========== ========================================================================
step        the same as
=========== ========================================================================
compare     ``mlrepro compare RESULTS -o AGREEMENT --summary-out SUMMARY``
partition   ``mlrepro partition RESULTS --verified-out V/results.csv
            --post-deadline-out P/results.csv``, then the same of AGREEMENT
            (``V/agreement.csv``, ``P/agreement.csv``): the two sets stay apart
metrics     ``mlrepro metrics RESULTS --agreement AGREEMENT --rejected REJECTED
            -o METRICS --details-out DETAILS``
claims      ``mlrepro claims LEDGER RESULTS -o CLAIMS_OUT``
scaling     ``mlrepro scaling RESULTS -o SCALING_OUT``
crosscheck  ``mlrepro crosscheck RESULTS --published TABLE -o OUT``, once per
            (TABLE, OUT) pair
audit       ``mlrepro audit V/results.csv P/results.csv -o DIR --no-data-docs``
            (the GX suites over the two sets just written): ``DIR/validation.json``
            is ``--validation-out``
report      ``mlrepro report RESULTS --agreement AGREEMENT --rejected REJECTED
            --versions VERSIONS --claims CLAIMS_OUT --scaling SCALING_OUT
            --validation VALIDATION_OUT --plot-data PLOT -o REPORT`` (the files
            just written)
=========== ========================================================================

The audit was a stage of its own, a process paying pandas' start-up once
more; it reads the two set files this module writes, as ``mlrepro audit``
does, so its validation.json is the same bytes. The report was a stage of
its own too; it reads the files the steps before it wrote, as ``mlrepro
report`` does. Neither bought an incremental rebuild: whatever changes their
inputs reruns this stage anyway.

The audit runs in a worker process started first (pipeline/audit_worker.py):
GX's import (about 2 s) overlaps the steps before it on another core; it is
sent the set files once partition wrote them. A worker that cannot start or
dies leaves the audit to this process: the same bytes, the same findings.
The worker is the longer of the two: while it audits, this process reads the
report's inputs and builds the report's parts that do not show the
validation (``report.prepare``); the rest is built once validation.json is
written (``report.finish``: the bytes of ``mlrepro report``).

Each step's findings are those of its command; the table's own (rows that
fail the schema) are listed once. Nothing is printed here: the CLI prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pipeline.core.findings import Finding, ReportShape
from pipeline.core.model import (DEFAULT_REFERENCE_SUBMITTER, DEFAULT_REFERENCE_VENDOR, DEFAULT_TOLERANCE_PCT)

SET_FILES = ("results.csv", "agreement.csv")


@dataclass
class Outputs:
    """Where each step writes (the dvc.yaml ``analyse`` stage names each)."""

    agreement: Path
    summary: Path
    verified_dir: Path
    post_deadline_dir: Path
    metrics: Path
    details: Path
    claims: Path
    scaling: Path
    crosscheck: list[tuple[Path, Path]] = field(default_factory=list)   # (published table, output)
    validation: Path | None = None   # the audit's validation.json (no audit when None)
    suites: Path | None = None       # the audit's suites folder (default schemas/expectations)
    report: Path | None = None       # the HTML report (no report when None) ...
    plot_data: Path | None = None    # ... and its deviation data (default deviation.csv beside it)
    versions: Path | None = None     # the report's input data/versions.csv

    def files(self) -> dict[str, Path]:
        """Every output file by the option that names it (for the CLI's path checks)."""
        named = {"--agreement-out": self.agreement, "--summary-out": self.summary,
                 "--metrics-out": self.metrics, "--claims-out": self.claims, "--scaling-out": self.scaling}
        for name in SET_FILES:
            named[f"--verified-dir {name}"] = self.verified_dir / name
            named[f"--post-deadline-dir {name}"] = self.post_deadline_dir / name
        for i, (_, out) in enumerate(self.crosscheck):
            named[f"--crosscheck #{i + 1}"] = out
        if self.validation is not None:
            named["--validation-out"] = self.validation
        if self.report is not None:
            named["--report-out"] = self.report
            named["--plot-data"] = self.plot_path()
        return named

    def plot_path(self) -> Path:
        return self.plot_data or self.report.parent / "deviation.csv"


@dataclass
class AnalyseReport(ReportShape):
    """One row per step: what it wrote and its summary line; every step's findings."""

    rows: list[dict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # the report's warnings (an input it could not use)

    @property
    def summary(self) -> dict:
        return {"steps": len(self.rows), "files_written": len(self.written)}

    def add(self, step: str, report, wrote: list[Path], seen: list[Finding]) -> None:
        self.rows.append({"step": step, "wrote": " ".join(p.as_posix() for p in wrote),
                          "summary": ", ".join(f"{k}={v}" for k, v in report.summary.items()
                                               if not isinstance(v, (dict, list)))})
        self.findings.extend(f for f in report.findings if f not in seen)
        self.written.extend(wrote)


def analyse(results: Path, rejected: Path, ledger: Path, out: Outputs,
            tolerance_pct: float = DEFAULT_TOLERANCE_PCT,
            reference_submitter: str = DEFAULT_REFERENCE_SUBMITTER,
            reference_vendor: str = DEFAULT_REFERENCE_VENDOR, prefix=None) -> AnalyseReport:
    """Run every step; ``prefix(frame)``: what goes before a row's source in
    compare's findings (the submissions root from the repository root)."""
    from pipeline.analyses import audit_worker

    # the audit's worker imports GX on the other core meanwhile (pipeline/audit_worker.py)
    worker = audit_worker.Worker.start() if out.validation is not None else None
    try:
        return _steps(results, rejected, ledger, out, tolerance_pct, reference_submitter, reference_vendor,
                      prefix, worker)
    finally:
        if worker is not None:
            worker.close()


def _steps(results, rejected, ledger, out: Outputs, tolerance_pct, reference_submitter, reference_vendor,
           prefix, worker) -> AnalyseReport:
    from pipeline.analyses import claims, compare, crosscheck, metrics, scaling
    from pipeline.ingest import table
    from pipeline.core.files import write_json
    from pipeline.output.render import write_report
    frame, found = table.load(results)
    report = AnalyseReport(findings=list(found))

    agreement = compare.compare(frame, tolerance_pct, reference_submitter, reference_vendor)
    agreement.read_findings = found
    agreement.prefix = prefix(frame) if prefix else ""
    write_json(agreement.summary, out.summary)
    write_report(agreement, out.agreement)
    report.add("compare", agreement, [out.agreement, out.summary], found)

    for source, name in ((results, "results.csv"), (out.agreement, "agreement.csv")):
        sets = _partition(_read_any(source), source, out.verified_dir / name, out.post_deadline_dir / name)
        report.add(f"partition {name}", sets, [out.verified_dir / name, out.post_deadline_dir / name], found)
    if worker is not None:
        worker.submit(out.verified_dir / "results.csv", out.post_deadline_dir / "results.csv", out.suites)

    counts = metrics.compute(results, out.agreement, rejected)
    metrics.write(counts, out.metrics, out.details)
    report.rows.append({"step": "metrics", "wrote": f"{out.metrics.as_posix()} {out.details.as_posix()}/",
                        "summary": ", ".join(f"{k}={v}" for k, v in counts.totals.items())})
    report.written.append(out.metrics)

    ledger_report = claims.check_claims(claims.read_ledger(ledger), frame, reference_submitter,
                                        reference_vendor, agreement=agreement)
    ledger_report.findings[:0] = found
    write_report(ledger_report, out.claims)
    report.add("claims", ledger_report, [out.claims], found)

    efficiency = scaling.scaling(frame, reference_submitter)
    efficiency.findings[:0] = found
    write_report(efficiency, out.scaling)
    report.add("scaling", efficiency, [out.scaling], found)

    records = crosscheck.records(frame) if out.crosscheck else []
    for published_path, path in out.crosscheck:
        published, read_findings = crosscheck.published_rows([published_path])
        looked_up = crosscheck.check_rows(records, published, 0.0)
        # the published table's own warnings are not this check's; its errors are
        looked_up.findings[:0] = found
        looked_up.findings.extend(f for f in read_findings if f.severity == "error")
        write_report(looked_up, path)
        report.add(f"crosscheck {published_path.as_posix()}", looked_up, [path], found)

    # the report's parts that do not show the validation, built while the worker audits
    prepared = _prepare_report(results, rejected, out) if out.report is not None else None
    if out.validation is not None:
        from pipeline.analyses import audit

        suites = worker.result() if worker is not None else None
        if suites is None:   # no worker, or it died: the same audit here
            suites = audit.audit(out.verified_dir / "results.csv", out.post_deadline_dir / "results.csv",
                                 None, out.suites)
        write_report(suites, out.validation)
        report.add("audit", suites, [out.validation], found)

    if prepared is not None:
        _report(prepared, out, report)
    return report


def _prepare_report(results: Path, rejected: Path, out: Outputs):
    from pipeline.output import report as report_mod

    return report_mod.prepare(report_mod.Inputs(results, out.agreement, rejected, out.versions, out.scaling,
                                                out.claims, None, out.validation))


def _report(prepared, out: Outputs, report: AnalyseReport) -> None:
    """The report of the files just written (``mlrepro report``'s bytes): what
    does not show the validation was prepared before the audit ended."""
    from pipeline.output import report as report_mod
    from pipeline.core.files import write_table, write_text
    doc = report_mod.finish(prepared, out.report)
    write_text(doc.html, out.report)
    write_table(doc.deviation, out.plot_path())
    report.rows.append({"step": "report", "wrote": f"{out.report.as_posix()} {out.plot_path().as_posix()}",
                        "summary": f"warnings={len(doc.notes)}"})
    report.written += [out.report, out.plot_path()]
    report.notes += [f"warning: {note}" for note in doc.notes]


def _read_any(path: Path):
    """What ``mlrepro partition`` reads: a canonical table, or any table with a
    status column (the agreement table)."""
    from pipeline.ingest import table
    from pipeline.core.errors import ConfigError

    try:
        return table.read(path)
    except ConfigError:
        frame = table.read_frame(path)
    if "status" not in frame.columns:
        raise table.TableUnreadable(path, "a table with a status column", "no status column") from None
    return frame


def _partition(frame, source: Path, verified: Path, post_deadline: Path):
    from pipeline.analyses import partition
    from pipeline.core.files import write_table
    sets = partition.partition(frame, source.as_posix())
    write_table(sets.verified, verified)
    write_table(sets.post_deadline, post_deadline)
    return sets
