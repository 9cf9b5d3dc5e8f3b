"""The ``superseded`` stage (``mlrepro superseded``): each superseded version
of the submissions root judged against today's references, apart from the
current verdicts (:mod:`pipeline.analyses.superseded`); the CLI writes the
table (``-o data/superseded.csv``)."""

from __future__ import annotations

from pathlib import Path

from pipeline.analyses.superseded import judge_superseded
from pipeline.core.findings import TableReport
from pipeline.core.params import Compare
from pipeline.core.rules import Rules
from pipeline.ingest import table


def run(rules: Rules, root: Path, results: Path, versions: Path, params: Compare) -> TableReport:
    """The superseded versions of ROOT (VERSIONS: used false) judged against the references of RESULTS."""
    return judge_superseded(rules, root, table.read(results),
                            table.read_frame(versions, dtype=str, keep_default_na=False),
                            params.tolerance_pct, params.reference_submitter, params.reference_vendor)
