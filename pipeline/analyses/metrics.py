"""Metrics for ``dvc metrics show``: counts per set and agreement per round,
status and partner.

`dvc metrics show` prints one row per metrics file, with one column per
(flattened) key of any file. So that its rows stay short, every file holds
the same few keys and the scope is in the file's path:

- ``metrics.json``: the inputs: ``results`` (accepted), ``rejected`` and
  ``set_aside`` rows of the canonical table;
- ``metrics/<status>.json``: every partner row of that status (all rounds);
- ``metrics/<round>/<status>.json``: one round;
- ``metrics/<round>/<status>/<partner>.json``: one partner in one round.

``<status>`` is ``verified`` or ``post_deadline``: the two are never added
together. Each agreement file holds ``results`` (accepted results in scope;
partner rows for a partner), ``compared`` (agree + deviates), ``agree``,
``deviates``, ``no_reference``, ``excluded`` and, only where something was
compared, ``agreement_rate`` (agree / compared). No value is ever null: DVC
drops nulls from its tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.core.formulas import rate
from pipeline.ingest.table import read_frame
from pipeline.core.vocabulary import tally
from pipeline.core.model import (AGREE, AGREEMENT_VERDICTS, DEVIATES, EXCLUDED, NO_REFERENCE, POST_DEADLINE, SET_ASIDE,
                                 REJECTED, VERIFIED)

STATUSES = {VERIFIED: "verified", POST_DEADLINE: "post_deadline"}   # status -> its name in a file name


@dataclass
class Metrics:
    """``totals`` for metrics.json; ``files`` maps a path under the metrics
    folder (``verified.json``, ``v5.1/verified/Dell.json``) to its counts."""

    totals: dict
    files: dict[str, dict] = field(default_factory=dict)


def counts(results: int, verdicts: pd.Series) -> dict:
    """The counts of one scope; ``agreement_rate`` only when something was compared."""
    got = tally(verdicts, AGREEMENT_VERDICTS)
    compared = got[AGREE] + got[DEVIATES]
    out = {"results": int(results), "compared": compared, "agree": got[AGREE], "deviates": got[DEVIATES],
           "no_reference": got[NO_REFERENCE], "excluded": got[EXCLUDED]}
    if compared:
        out["agreement_rate"] = rate(got[AGREE], compared)
    return out


def _safe(name: str) -> str:
    """A file name for a round or partner (they are identifiers; anything else is replaced)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name).lstrip(".") or "_"


def compute(results: Path, agreement: Path, rejected: Path) -> Metrics:
    res, agr, rej = (read_frame(p, dtype=str, keep_default_na=False, na_values=[""])
                     for p in (results, agreement, rejected))
    got = tally(rej.get("outcome", []), (REJECTED, SET_ASIDE))
    totals = {"results": int(len(res)), "rejected": got[REJECTED], "set_aside": got[SET_ASIDE]}
    metrics = Metrics(totals)
    for status, key in STATUSES.items():
        mine, rows = agr[agr["status"] == status], res[res["status"] == status]
        metrics.files[f"{key}.json"] = counts(len(rows), mine["verdict"])
        for round_ in sorted(set(rows["round"]) | set(mine["round"])):
            in_round = mine[mine["round"] == round_]
            metrics.files[f"{_safe(round_)}/{key}.json"] = counts(int((rows["round"] == round_).sum()),
                                                                  in_round["verdict"])
            for partner, group in in_round.groupby("submitter", sort=True):
                metrics.files[f"{_safe(round_)}/{key}/{_safe(str(partner))}.json"] = counts(
                    len(group), group["verdict"])
    return metrics
