"""Partition: the verified set and the post-deadline set, kept strictly apart.

Invariants (checked on every run, reported as findings if ever broken):
every accepted row is in exactly one set; no post-deadline row is in the
verified set. Rows without a valid status go to neither, with a finding.
The compare stage (:mod:`pipeline.stages.compare`) splits the results and
the agreement table, and writes the sets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.core.errors import ConfigError
from pipeline.core.findings import Finding, TableReport, located
from pipeline.core.model import POST_DEADLINE, VERIFIED, Source, label_frame
from pipeline.ingest import table


@dataclass
class Sets:
    """The two sets of a table (labelled), and the rows that went to neither as findings."""

    verified: pd.DataFrame
    post_deadline: pd.DataFrame
    findings: list[Finding] = field(default_factory=list)

    def report(self) -> TableReport:
        """The verified set's rows, then the post-deadline set's (``PartitionRow``)."""
        return TableReport(pd.concat([self.verified, self.post_deadline], ignore_index=True), "PartitionRow",
                           {"verified": len(self.verified), "post_deadline": len(self.post_deadline),
                            "rejected": sum(1 for f in self.findings if f.code == "invalid-choice")},
                           self.findings)


def partition(frame: pd.DataFrame, display: str = "<table>") -> Sets:
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
    return Sets(verified.reset_index(drop=True), post.reset_index(drop=True), found)


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

