"""Partition: the verified set and the post-deadline set, kept strictly apart.

Invariants (checked on every run, reported as findings if ever broken):
every accepted row is in exactly one set; no post-deadline row is in the
verified set. Rows without a valid status go to neither, with a finding.

:func:`compare_and_partition` is the pipeline's step after the table: the
agreement table, and the verified and post-deadline sets of the results and
of the agreement table (the compare stage, :mod:`pipeline.stages.compare`,
writes them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.analyses.compare import CompareReport, compare
from pipeline.core.errors import ConfigError
from pipeline.core.findings import Finding, ReportShape, located
from pipeline.core.model import LABEL_UNVERIFIED, POST_DEADLINE, VERIFIED, Row, Source, typed_rows
from pipeline.core.model import label_frame
from pipeline.core.rules import Rules
from pipeline.core.vocabulary import Severity
from pipeline.ingest import table


@dataclass
class PartitionReport(ReportShape):
    verified: pd.DataFrame
    post_deadline: pd.DataFrame
    findings: list[Finding] = field(default_factory=list)

    @property
    def rows(self) -> list[Row]:
        """The verified set's rows, then the post-deadline set's, typed
        (``PartitionRow``: the columns of the table partitioned, labelled)."""
        return self.rows_head(None)

    def row_count(self) -> int:
        return len(self.verified) + len(self.post_deadline)

    def rows_head(self, limit: int | None) -> list[Row]:
        """The first ``limit`` rows (verified first), built only for those."""
        head = self.verified if limit is None else self.verified.head(limit)
        rest = self.post_deadline if limit is None else self.post_deadline.head(limit - len(head))
        return typed_rows("PartitionRow", head.to_dict("records") + rest.to_dict("records"))

    def any_unverified(self) -> bool:
        return any((f["label"] == LABEL_UNVERIFIED).any() for f in (self.verified, self.post_deadline))

    def frame(self) -> pd.DataFrame:
        return pd.concat([self.verified, self.post_deadline], ignore_index=True)

    @property
    def summary(self) -> dict:
        return {"verified": len(self.verified), "post_deadline": len(self.post_deadline),
                "rejected": sum(1 for f in self.findings if f.code == "invalid-choice")}


def partition(frame: pd.DataFrame, display: str = "<table>") -> PartitionReport:
    status = frame["status"].astype("str")
    is_verified = status == VERIFIED
    is_post = status == POST_DEADLINE
    found = []
    for idx in frame.index[~(is_verified | is_post)]:
        where = (Source(display, idx + 2, column="status") if display.endswith(".csv")
                 else Source(display, row=idx + 1, column="status"))
        source = Source.of_row(frame.loc[idx]).cell if "file" in frame.columns else None
        found.append(located("invalid-choice", where, "verified or post-deadline", frame.at[idx, "status"],
                             "a row without a valid status goes to neither set"
                             + (f" (the result at {source})" if source else "")))
    verified, post = label_frame(frame[is_verified]), label_frame(frame[is_post])
    if (verified["status"] != VERIFIED).any() or len(verified) + len(post) + len(found) != len(frame):
        found.append(located("invariant-broken", Source(display),
                             "each row in exactly one set", "a row in both or neither",
                             "partition invariant broken"))
    return PartitionReport(verified.reset_index(drop=True), post.reset_index(drop=True), found)


def read_with_status(path: Path) -> pd.DataFrame:
    """What partition takes: a canonical table (read as one, unchecked), or
    any table with a status column (an agreement table)."""
    try:
        return table.read(path)
    except ConfigError:   # not a canonical table
        frame = table.read_frame(path)
    if "status" not in frame.columns:
        raise table.TableUnreadable(path, "a table with a status column", "no status column")
    # a line is a whole number or none: a CSV column with a gap reads as floats, written back as 3.0
    return frame.astype({c: "Int64" for c in ("line", "reference_line") if c in frame.columns})


def compare_and_partition(rules: Rules, results: pd.DataFrame, tolerance_pct: float, reference_submitter: str,
                          reference_vendor: str, display: str = "<table>",
                          agreement_display: str = "<agreement>"
                          ) -> tuple[CompareReport, PartitionReport, PartitionReport]:
    """Compare every partner row of ``results`` with the reference
    (:func:`pipeline.analyses.compare.compare`), then split ``results`` and the
    agreement table each into the verified and the post-deadline sets: the
    agreement report and the two splits."""
    agreement = compare(rules, results, tolerance_pct, reference_submitter, reference_vendor)
    return agreement, partition(results, display), partition(agreement.frame(), agreement_display)
