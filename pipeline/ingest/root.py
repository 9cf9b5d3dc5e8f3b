"""The join of per-submitter ingest outputs (the parts the ingest stage,
:mod:`pipeline.stages.ingest`, writes per ``<round>/<submitter>`` folder):
:func:`merge_parts` reads them back into one validated table."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.ingest import table
from pipeline.core.errors import ConfigError
from pipeline.core.findings import Finding, TableReport
from pipeline.core.model import REJECTED, SET_ASIDE, Source
from pipeline.core.rules import Rules

PARTS = ("results.parquet", "rejected.csv", "findings.json", "versions.csv")
VERSION_COLUMNS = ["round", "submitter", "version", "path", "used", "status_declared", "status",
                   "submitted_at", "supersedes", "withdraws"]


@dataclass
class MergeReport(TableReport):
    """findings: the joined table's own (schema); ``recorded``: every finding
    the ingest stages recorded, kept as data."""

    table: pd.DataFrame
    rejected: pd.DataFrame
    recorded: list[dict]
    versions: pd.DataFrame
    findings: list[Finding]
    cache: dict = field(default_factory=dict)   # submitters read / taken from the cache

    @property
    def summary(self) -> dict:
        outcome = self.rejected["outcome"] if "outcome" in self.rejected else pd.Series(dtype=str)
        return {"accepted": len(self.table), "rejected": int((outcome == REJECTED).sum()),
                "set_aside": int((outcome == SET_ASIDE).sum()),
                "recorded_findings": len(self.recorded), **self.cache}


def merge_parts(rules: Rules, parts: list[Path], display: str = "<table>") -> MergeReport:
    """Join part folders, in the order given, into one validated table
    (``display`` names it in the schema's findings)."""
    tables, rejected, findings, versions = [], [], [], []
    for d in parts:
        missing = [n for n in PARTS if not (d / n).exists()]
        if missing:
            raise ConfigError(f"{d}: incomplete ingest output, missing {missing}")
        tables.append(table.read_frame(d / "results.parquet"))
        rejected.append(table.read_frame(d / "rejected.csv", dtype=str, keep_default_na=False))
        findings.extend(json.loads((d / "findings.json").read_text(encoding="utf-8")))
        versions.append(table.read_frame(d / "versions.csv", dtype=str, keep_default_na=False))
    frame = _stack([d / "results.parquet" for d in parts], tables)
    frame = frame.sort_values(["round", "submitter", "source"], kind="stable").reset_index(drop=True)
    accepted, bad, found = table.validate(rules, frame, display)
    rej = pd.concat(rejected, ignore_index=True)
    if len(bad):
        rej = pd.concat([rej, pd.DataFrame({"source": bad["source"], "outcome": REJECTED,
                                            "codes": "schema-violation",
                                            "reason": "the row fails the canonical table schema"})],
                        ignore_index=True)
    return MergeReport(accepted.reset_index(drop=True), rej, findings + [f.to_dict() for f in found],
                       pd.concat(versions, ignore_index=True), found)


def _stack(paths: list[Path], frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The parts' tables (``frames``, as read from ``paths``) as one canonical
    frame: what ``table.read`` of each part, stacked, gives, with the columns'
    types set once for all the rows rather than once per part."""
    if all(list(f.columns) == list(table.COLUMNS) for f in frames):
        return table.coerce(pd.concat(frames, ignore_index=True))
    return pd.concat([table.read(p) for p in paths], ignore_index=True)


def submitter_folders(root: Path) -> list[Path]:
    """Every ``<round>/<submitter>`` folder (hidden ones aside), sorted."""
    if not root.is_dir():
        raise ConfigError(f"{root}: no such submissions root")
    return sorted(s for r in root.iterdir() if r.is_dir() and not r.name.startswith(".")
                  for s in r.iterdir() if s.is_dir() and not s.name.startswith("."))


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
        places = {(where.file, where.line) for where in map(Source.from_cell, rej["source"])}
        out.append((acc, rej, [f for f in found if (f.where.file, f.line) in places]))
    return out


def versions_frame(versions: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(versions, columns=VERSION_COLUMNS).astype({"supersedes": "Int64"})
