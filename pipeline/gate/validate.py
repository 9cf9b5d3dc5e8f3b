"""``mlrepro validate``: every check ingest makes on submissions or raw files
(manifests, hashes, formats, rows), writing nothing; a run that finds no
result at all says so.

Every file is named as the user named it: a raw file as given, a file under
a submissions root under the root as given.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.core.findings import TableReport, located
from pipeline.core.model import Source
from pipeline.core.rules import Rules
from pipeline.core.vocabulary import Severity
from pipeline.ingest.submissions import ingest


def validate(rules: Rules, paths: list[Path], fmt: str | None = None, round_: str | None = None, status: str | None = None,
             root: Path | None = None) -> TableReport:
    read = ingest(rules, paths, fmt, round_, status, root)
    if read.table.empty and not read.dispositions and all(f.severity != Severity.ERROR for f in read.findings):
        read.findings.append(located("no-results", Source(" ".join(p.as_posix() for p in paths)),
                                     "a submission version or a results file", "nothing to read",
                                     "no results found"))
    return read.report()
