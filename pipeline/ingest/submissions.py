"""Ingest: submissions (or raw files) to the canonical table, with every input
row accounted for as accepted, rejected or excluded.

Which versions and files are read is :mod:`pipeline.ingest.walk` (shared with the
gate's small-table path, :mod:`pipeline.ingest.rows`); here a reader's output is
normalised in bulk (:mod:`pipeline.ingest.bulk`) and the table checked against its
pandera schema (:mod:`pipeline.ingest.table`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.ingest import bulk, table, walk
from pipeline.store import clock
from pipeline.core.findings import Finding, TableReport
from pipeline.readers.base import Disposition
from pipeline.ingest.rows import KEY, duplicates, schema_dispositions


@dataclass
class IngestReport(TableReport):
    """rows: the accepted results, labelled; the table (``frame()``) is the
    canonical table itself; every rejected or excluded row is a disposition."""

    table: pd.DataFrame
    dispositions: list[Disposition] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    versions: list[dict] = field(default_factory=list)

    @property
    def summary(self) -> dict:
        d = pd.Series([x.outcome for x in self.dispositions], dtype="str")
        return {
            "accepted": len(self.table),
            "rejected": int((d == "rejected").sum()),
            "excluded": int((d == "excluded").sum()),
            "verified": int((self.table["status"] == "verified").sum()),
            "post_deadline": int((self.table["status"] == "post-deadline").sum()),
            "versions_used": sum(1 for v in self.versions if v["used"]),
            "versions_superseded": sum(1 for v in self.versions if not v["used"]),
        }

    @staticmethod
    def normalise(result, ctx) -> tuple[pd.DataFrame, list[Finding], list[Disposition]]:
        """A reader's output as canonical rows, in bulk (see :mod:`pipeline.ingest.walk`)."""
        done = bulk.normalise_result(result, ctx)
        return done.frame, done.findings, done.dispositions

    def dispositions_frame(self) -> pd.DataFrame:
        return pd.DataFrame([d.to_dict() for d in self.dispositions],
                            columns=["source", "outcome", "codes", "reason"])


def ingest(paths: list[Path], fmt: str | None = None, round_: str | None = None,
           status: str | None = None, root: Path | None = None,
           visible: clock.Clock | None = None) -> IngestReport:
    """Read submissions roots, submitter folders, version folders or raw files.
    VISIBLE tells when a version became visible (default: the git clock)."""
    report, frame = read_unchecked(paths, fmt, round_, status, root, visible)
    return settle(report, table.validate(frame))


def read_unchecked(paths: list[Path], fmt: str | None = None, round_: str | None = None,
            status: str | None = None, root: Path | None = None,
            visible: clock.Clock | None = None) -> tuple[IngestReport, pd.DataFrame]:
    """All of :func:`ingest` but the table schema: the report so far and the
    rows still to be checked. :func:`settle` finishes it with what
    ``table.validate`` says of those rows (``ingest-all`` checks the rows of
    all the submitters it reads in one call: :func:`pipeline.ingest.root.validate_each`)."""
    report = IngestReport(table.to_frame([]))
    parts = walk.collect(paths, report, fmt, round_, status, root, visible)
    frame = table.coerce(pd.concat(parts, ignore_index=True)) if parts else table.to_frame([])
    return report, _reject_duplicates(frame, report)


def settle(report: IngestReport, validated: tuple[pd.DataFrame, pd.DataFrame, list[Finding]]) -> IngestReport:
    """The report with the schema's verdict on its rows: ``validated`` is
    ``table.validate``'s (accepted, rejected, findings) of those rows."""
    accepted, rejected, found = validated
    report.findings.extend(found)
    report.dispositions.extend(schema_dispositions(rejected["source"], found))
    report.table = accepted.reset_index(drop=True)
    return report


def _reject_duplicates(frame: pd.DataFrame, report: IngestReport) -> pd.DataFrame:
    """Rows that share a key are all rejected: nothing says which one is the result."""
    dup = frame.duplicated(subset=list(KEY), keep=False)
    if not dup.any():
        return frame
    groups = frame[dup].groupby(list(KEY), sort=False, dropna=False)["source"].agg(list)
    for sources in groups:
        duplicates(list(sources), report)
    return frame[~dup]
