"""The canonical table of a whole submissions root, one submitter at a time:
each ``<round>/<submitter>/`` folder is ingested on its own into its
:class:`Part`; the rows of every submitter read are checked against the table
schema in one call, and the parts are joined (:func:`merge_parts`). The ingest stage
(:mod:`pipeline.stages.ingest`) keeps parts in its cache and writes the outputs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.ingest import table
from pipeline.core.errors import ConfigError
from pipeline.core.findings import Finding
from pipeline.core.model import RESULT_KEY, result_key
from pipeline.core.rules import Rules

PARTS = ("results.parquet", "rejected.csv", "findings.json", "versions.csv")
VERSION_COLUMNS = ["round", "submitter", "version", "path", "used", "status_declared", "status",
                   "submitted_at", "supersedes", "withdraws"]
_FOLDER_PREFIX = re.compile(r"^([^/]+/[^/]+)/")


@dataclass
class Part:
    """One submitter's share of the ingest stage (its accepted rows checked
    against the table schema), cached by the stage as the four files of PARTS."""

    table: pd.DataFrame
    rejected: pd.DataFrame
    findings: list[dict]
    versions: pd.DataFrame


def merge_parts(parts: list[Part]) -> Part:
    """Join the submitters' parts, in the order given, into one part. Their
    rows were checked against the table schema when each part was read (a
    cached part was checked by the same code and rules): not again here."""
    frame = table.coerce(pd.concat([p.table for p in parts], ignore_index=True))
    # by file, then line as its digits read (10 before 2): the order every output of the
    # pipeline has had since the place was one text column; a numeric order would reorder them
    frame = frame.sort_values(["round", "submitter", *RESULT_KEY], kind="stable",
                              key=lambda c: c.astype("str") if c.name == "line" else c).reset_index(drop=True)
    return Part(frame, pd.concat([p.rejected for p in parts], ignore_index=True), [f for p in parts for f in p.findings],
                pd.concat([p.versions for p in parts], ignore_index=True))


# ---- a whole root, one submitter at a time, through a cache ----------------------------

def submitter_folders(root: Path) -> list[Path]:
    """Every ``<round>/<submitter>`` folder (hidden ones aside), sorted."""
    if not root.is_dir():
        raise ConfigError(f"{root}: no such submissions root")
    return sorted(s for r in root.iterdir() if r.is_dir() and not r.name.startswith(".")
                  for s in r.iterdir() if s.is_dir() and not s.name.startswith("."))


def ingest_submitters(rules: Rules, todo: list[Path], root: Path, folders: list[Path]) -> list[Part]:
    """Each submitter folder of ``todo`` read into its part: what reading it
    alone gives. The rows of all of them are checked against the table schema
    in one call (a call costs about the same for 10 rows as for 1,000)."""
    from pipeline.store import clock
    from pipeline.ingest import submissions as ingest, walk

    visible = clock.project_clock(rules, root) or (lambda version: None)
    scans: walk.Scans = {}   # the root's versions found once for all the folders, each folder read once
    collected = [ingest.read_unchecked(rules, [folder], root=root, visible=visible, scans=scans)
                 for folder in todo]
    verdicts = validate_each(rules, [frame for _, frame in collected], root.as_posix())
    return [part_of(ingest.settle(report, validated), root, [f for f in folders if f != folder])
            for folder, (report, _), validated in zip(todo, collected, verdicts)]


def validate_each(rules: Rules, frames: list[pd.DataFrame], root: str | None = None
                  ) -> list[tuple[pd.DataFrame, pd.DataFrame, list[Finding]]]:
    """``table.validate`` of each frame, by one call on their rows stacked (the
    schema's checks are row by row): each frame gets its own accepted and
    rejected rows, in its order, and the findings located at its rejected
    rows (``root``: the submissions root the rows were read under)."""
    sizes = [len(f) for f in frames]
    if sum(sizes) == 0:
        return [table.validate(rules, f, root=root) for f in frames]
    whole = table.coerce(pd.concat([f for f in frames if len(f)], ignore_index=True))
    accepted, rejected, found = table.validate(rules, whole, root=root)
    owner = pd.Series([i for i, n in enumerate(sizes) for _ in range(n)], index=whole.index)
    out = []
    for i, frame in enumerate(frames):
        if not len(frame):   # no row to check: what validating it alone gives
            out.append(table.validate(rules, frame, root=root))
            continue
        acc, rej = accepted[owner[accepted.index] == i], rejected[owner[rejected.index] == i]
        places = {result_key(r) for r in rej[list(RESULT_KEY)].to_dict("records")}
        out.append((acc, rej, [f for f in found if (f.where.file, f.line) in places]))
    return out


def part_of(report, root: Path, others: list[Path]) -> Part:
    """One submitter's ingest as its part. Findings about other submitters'
    folders (the store lists the whole root) are left to their own parts."""
    foreign = {f.relative_to(root).as_posix() for f in others}
    # files outside every submitter folder are the root's: recorded once, by ingest_root
    findings = [f for f in report.findings if _owner(f.where.file) not in foreign and f.code != "misplaced-file"]
    return Part(report.table, report.dispositions_frame(), [f.to_dict() for f in findings],
                versions_frame(report.versions))


def versions_frame(versions: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(versions, columns=VERSION_COLUMNS).astype({"supersedes": "Int64"})


def _owner(file: str) -> str | None:
    m = _FOLDER_PREFIX.match(str(file))
    return m.group(1) if m else None
