"""Merge: the per-submission ingest outputs of the DVC pipeline into one
canonical table, one rejected list, one findings list and one versions list.

Each ``ingest@<round>-<submitter>`` stage writes a folder with
``results.parquet``, ``rejected.csv``, ``findings.json`` and ``versions.csv``;
this joins them, in a stable order, and checks the joined table once more
against the schema so that the table the pipeline publishes is valid as a whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import table
from .errors import ConfigError
from .findings import Finding, ReportShape
from .model import plain

PARTS = ("results.parquet", "rejected.csv", "findings.json", "versions.csv")


@dataclass
class MergeReport(ReportShape):
    """findings: the joined table's own (schema); ``recorded``: every finding
    the ingest stages recorded, kept as data."""

    table: pd.DataFrame
    rejected: pd.DataFrame
    recorded: list[dict]
    versions: pd.DataFrame
    findings: list[Finding]

    @property
    def rows(self) -> list[dict]:
        from .outputs import label_frame

        return plain(label_frame(self.table).to_dict("records"))

    def frame(self) -> pd.DataFrame:
        return self.table

    @property
    def summary(self) -> dict:
        outcome = self.rejected["outcome"]
        return {"accepted": len(self.table), "rejected": int((outcome == "rejected").sum()),
                "excluded": int((outcome == "excluded").sum()), "recorded_findings": len(self.recorded)}


def merge(folder: Path) -> MergeReport:
    parts = sorted(p for p in folder.rglob("results.parquet"))
    if not parts:
        raise ConfigError(f"{folder}: no ingest outputs (results.parquet) found")
    tables, rejected, findings, versions = [], [], [], []
    for results in parts:
        d = results.parent
        missing = [n for n in PARTS if not (d / n).exists()]
        if missing:
            raise ConfigError(f"{d}: incomplete ingest output, missing {missing}")
        tables.append(table.read(results))
        rejected.append(table.read_frame(d / "rejected.csv", dtype=str, keep_default_na=False))
        findings.extend(json.loads((d / "findings.json").read_text(encoding="utf-8")))
        versions.append(table.read_frame(d / "versions.csv", dtype=str, keep_default_na=False))
    frame = pd.concat(tables, ignore_index=True)
    frame = frame.sort_values(["round", "submitter", "source"], kind="stable").reset_index(drop=True)
    accepted, bad, found = table.validate(frame, folder.as_posix())
    rej = pd.concat(rejected, ignore_index=True)
    if len(bad):
        rej = pd.concat([rej, pd.DataFrame({"source": bad["source"], "outcome": "rejected",
                                            "codes": "schema-violation",
                                            "reason": "the row fails the canonical table schema"})],
                        ignore_index=True)
    return MergeReport(accepted.reset_index(drop=True), rej, findings + [f.to_dict() for f in found],
                       pd.concat(versions, ignore_index=True), found)
