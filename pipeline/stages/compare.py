"""The ``compare`` stage (``mlrepro compare --verified-dir --post-deadline-dir``):
the agreement table of the canonical table, and the verified and
post-deadline sets of both, each set in its own folder (results.csv and
agreement.csv), never together in one file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.analyses.partition import SetsReport, compare_and_partition
from pipeline.core.files import write_table
from pipeline.core.params import Compare
from pipeline.core.rules import Rules


def run(rules: Rules, results: pd.DataFrame, params: Compare, verified_dir: Path, post_deadline_dir: Path,
        display: str = "<table>", agreement_display: str = "<agreement>") -> tuple[SetsReport, str]:
    """RESULTS compared and split, the two sets written; the report and what was written, in a line."""
    report = compare_and_partition(rules, results, params.tolerance_pct, params.reference_submitter,
                                   params.reference_vendor, display, agreement_display)
    return report, write_sets(report, verified_dir, post_deadline_dir)


def write_sets(report: SetsReport, verified_dir: Path, post_deadline_dir: Path) -> str:
    """The two sets of the results and of the agreement table (results.csv and
    agreement.csv in each folder); what was written, in a line."""
    for name, split in (("results", report.results), ("agreement", report.agreements)):
        write_table(split.verified, verified_dir / f"{name}.csv")
        write_table(split.post_deadline, post_deadline_dir / f"{name}.csv")
    return (f"wrote {verified_dir.as_posix()}/ ({len(report.results.verified)} verified) and "
            f"{post_deadline_dir.as_posix()}/ ({len(report.results.post_deadline)} post-deadline)")
