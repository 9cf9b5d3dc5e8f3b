"""The ``compare`` stage (``mlrepro compare --verified-dir --post-deadline-dir``):
the agreement table of the canonical table, and the verified and
post-deadline sets of both, each set in its own folder (results.csv and
agreement.csv), never together in one file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.analyses.compare import compare
from pipeline.analyses.partition import partition
from pipeline.core.findings import TableReport
from pipeline.core.files import write_table
from pipeline.core.params import Compare
from pipeline.core.rules import Rules


def run(rules: Rules, results: pd.DataFrame, params: Compare, verified_dir: Path, post_deadline_dir: Path,
        display: str = "<table>", agreement_display: str = "<agreement>"
        ) -> tuple[TableReport, TableReport, str]:
    """RESULTS compared and split, the two sets of the results and of the agreement written
    (results.csv and agreement.csv in each folder): the agreement, the stage's report (the
    agreement with the split's findings and counts) and what was written, in a line."""
    agreement = compare(rules, results, params.tolerance_pct, params.reference_submitter, params.reference_vendor)
    split, agreements = partition(results, display), partition(agreement.frame(), agreement_display)
    report = agreement.combine(after=split.findings + agreements.findings, summary={
        "verified_results": len(split.verified), "post_deadline_results": len(split.post_deadline)})
    for name, sets in (("results", split), ("agreement", agreements)):
        write_table(sets.verified, verified_dir / f"{name}.csv")
        write_table(sets.post_deadline, post_deadline_dir / f"{name}.csv")
    return agreement, report, (f"wrote {verified_dir.as_posix()}/ ({len(split.verified)} verified) and "
                               f"{post_deadline_dir.as_posix()}/ ({len(split.post_deadline)} post-deadline)")
