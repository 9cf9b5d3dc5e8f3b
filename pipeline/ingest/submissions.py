"""Ingest: submissions (or raw files) to the canonical table, with every input
row accounted for as accepted, rejected or excluded.

Which versions and files are read is :mod:`pipeline.ingest.walk`; each file's
records become rows in :mod:`pipeline.ingest.normalise`; here the rows become
one table, a result stated twice is rejected, and the table is checked
against its pandera schema (:mod:`pipeline.ingest.table`), once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.core import limits
from pipeline.core.findings import Finding, TableReport, located
from pipeline.core.model import POST_DEADLINE, REJECTED, RESULT_KEY, SET_ASIDE, VERIFIED, Source, result_key
from pipeline.core.rules import Rules
from pipeline.ingest import table, walk
from pipeline.ingest.normalise import Accepted, Normaliser
from pipeline.readers.base import Disposition
from pipeline.store import clock

# One result per key: a verified and a post-deadline result of the same system may coexist;
# the result id and the model used (when the source gives them) tell apart distinct
# published results of one system (v5.1 AMD 5.1-0100 "finetuned" and 5.1-0101 "pruned").
KEY = ("round", "submitter", "system", "model", "scenario", "division", "status", "result_id",
       "used_model")


@dataclass
class Ingested:
    """What ingest read (``table``: the accepted rows; ``dispositions``: every
    other row); :meth:`report` is what the commands print."""

    table: pd.DataFrame
    dispositions: list[Disposition] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    versions: list[dict] = field(default_factory=list)
    root: str | None = None    # the submissions root the rows were read under, when there is one

    def report(self) -> TableReport:
        """The canonical table's rows, labelled (``ResultRow``), with every finding."""
        d = pd.Series([x.outcome for x in self.dispositions], dtype="str")
        return TableReport(self.table, "ResultRow", {
            "accepted": len(self.table),
            "rejected": int((d == REJECTED).sum()),
            "set_aside": int((d == SET_ASIDE).sum()),
            "verified": int((self.table["status"] == VERIFIED).sum()),
            "post_deadline": int((self.table["status"] == POST_DEADLINE).sum()),
            "versions_used": sum(1 for v in self.versions if v["used"]),
            "versions_superseded": sum(1 for v in self.versions if not v["used"]),
        }, self.findings, labelled=True)

    def dispositions_frame(self) -> pd.DataFrame:
        return pd.DataFrame([d.to_dict() for d in self.dispositions],
                            columns=["source", "outcome", "codes", "reason"])


def ingest(rules: Rules, paths: list[Path], fmt: str | None = None, round_: str | None = None,
           status: str | None = None, root: Path | None = None,
           visible: clock.Clock | None = None, published: bool = False) -> Ingested:
    """Read submissions roots, submitter folders, version folders or raw files.
    VISIBLE tells when a version became visible (default: the git clock).
    PUBLISHED: the raw files given are tables MLCommons published, wherever
    they lie (else only those in a ``published/`` folder are)."""
    report, frame = read_unchecked(rules, paths, fmt, round_, status, root, visible, published)
    return settle(report, table.validate(rules, frame, root=report.root))


def read_unchecked(rules: Rules, paths: list[Path], fmt: str | None = None, round_: str | None = None,
                   status: str | None = None, root: Path | None = None,
                   visible: clock.Clock | None = None, published: bool = False,
                   scans: walk.Scans | None = None) -> tuple[Ingested, pd.DataFrame]:
    """All of :func:`ingest` but the table schema: the report so far and the
    rows still to be checked. :func:`settle` finishes it with what
    ``table.validate`` says of those rows (``ingest-all`` checks the rows of
    all the submitters it reads in one call: :func:`pipeline.ingest.root.validate_each`)."""
    report = Ingested(table.to_frame([]))
    accepted = Accepted()
    roots = walk.collect(paths, report, Normaliser(rules, accepted), fmt, round_, status, root, visible, published,
                         scans)
    report.root = roots.pop() if len(roots) == 1 else None
    return report, _reject_duplicates(rules, accepted.frame(), report)


def settle(report: Ingested, validated: tuple[pd.DataFrame, pd.DataFrame, list[Finding]]) -> Ingested:
    """The report with the schema's verdict on its rows: ``validated`` is
    ``table.validate``'s (accepted, rejected, findings) of those rows."""
    accepted, rejected, found = validated
    report.findings.extend(found)
    report.dispositions.extend(schema_dispositions(rejected, found))
    report.table = accepted.reset_index(drop=True)
    return report


def schema_dispositions(rejected: pd.DataFrame, found: list[Finding]) -> list[Disposition]:
    """One rejection per row the schema refused (``rejected``: those rows), naming the places that failed."""
    places: dict[tuple, set[str]] = {}
    for f in found:
        places.setdefault((f.where.file, f.line), set()).add(f.place)
    return [Disposition(Source.of_row(row), REJECTED, "schema-violation",
                        "; ".join(sorted(places.get(result_key(row), ()))))
            for row in rejected[list(RESULT_KEY)].to_dict("records")]


def _reject_duplicates(rules: Rules, frame: pd.DataFrame, report: Ingested) -> pd.DataFrame:
    """Rows that share a key are all rejected: nothing says which one is the result."""
    dup = frame.duplicated(subset=list(KEY), keep=False)
    if not dup.any():
        return frame
    shared = frame[dup]
    places = [Source.of_row(r, report.root) for r in shared[list(RESULT_KEY)].to_dict("records")]
    # the rows sharing each key, in the order the keys first appear (sort=False numbers them so)
    group = shared.groupby(list(KEY), sort=False, dropna=False).ngroup().to_numpy()
    keep = limits.cap(rules, "examples_per_finding")
    for rows in pd.Series(range(len(shared))).groupby(group).agg(list):
        head = [places[i].cell for i in rows[:keep + 1]]
        for i in rows:
            # a few of the others and how many more: 20,000 identical rows must not make 20,000 lists of 20,000
            shown = [o for o in head if o != places[i].cell][:keep]
            more = len(rows) - 1 - len(shown)
            others = ", ".join(shown) + (f" and {more} more" if more else "")
            f = located("duplicate-row", places[i], "one row per system, model, scenario and status",
                        f"the same result also at {others}",
                        "duplicate result: none of the rows sharing it is taken")
            report.findings.append(f)
            report.dispositions.append(Disposition(places[i].at(root=None), REJECTED, f.code, f.message))
    return frame[~dup].reset_index(drop=True)
