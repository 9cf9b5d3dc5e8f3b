"""A partner's record across rounds: per partner and accelerator generation,
the agreement with the reference in every round, from compare's judged
table, verified results only (a post-deadline result, or one judged against
a post-deadline reference, never enters it).

Each row counts with the one tally of the project (:func:`pipeline.analyses.metrics.counts`):
results, compared, within the tolerance (``agree``), deviates, no-reference;
and the worst deviation (the largest in size, its sign kept). Beside the
rows per round, a row per partner and generation over every round
(``round`` = :data:`ALL_ROUNDS`).
"""

from __future__ import annotations

import pandas as pd

from pipeline.core.findings import Report
from pipeline.core.formulas import PCT_DIGITS
from pipeline.core.model import (AGREE, DEFAULT_REFERENCE_SUBMITTER, DEFAULT_REFERENCE_VENDOR,
                                 DEFAULT_TOLERANCE_PCT, DEVIATES, EXCLUDED, VERIFIED, typed_rows)
from pipeline.core.rules import Rules, round_order
from pipeline.analyses.compare import compare
from pipeline.analyses.metrics import counts

ALL_ROUNDS = "all rounds"
COLUMNS = ("submitter", "accelerator", "round", "results", "compared", "agree", "deviates", "no_reference",
           "agreement_rate", "worst_deviation_pct", "worst_round", "worst_model", "worst_scenario")


def _scope(group: pd.DataFrame, round_: str) -> dict:
    got = counts(len(group), group["verdict"])   # the keys COLUMNS does not name are dropped
    out = {"round": round_, **got, "agreement_rate": got.get("agreement_rate"),
           **dict.fromkeys(("worst_deviation_pct", "worst_round", "worst_model", "worst_scenario"))}
    compared = group[group["verdict"].isin([AGREE, DEVIATES])]
    if len(compared):
        dev = pd.to_numeric(compared["deviation_pct"], errors="coerce")
        at = dev.abs().idxmax()
        out.update(worst_deviation_pct=round(float(dev[at]), PCT_DIGITS), worst_round=str(compared.at[at, "round"]),
                   worst_model=str(compared.at[at, "model"]), worst_scenario=str(compared.at[at, "scenario"]))
    return out


def record(agreement: pd.DataFrame, tolerance_pct: float | None = None) -> Report:
    """The record of every partner from compare's table (``agreement``: its
    rows, any extra column ignored): verified agreement rows only, partner
    results only (``excluded`` rows are not partner results)."""
    t = agreement[(agreement["status"].astype("str") == VERIFIED)
                  & (agreement["verdict"].astype("str") != EXCLUDED)]
    if tolerance_pct is None and len(agreement) and "tolerance_pct" in agreement:
        tolerance_pct = float(agreement["tolerance_pct"].iloc[0])
    rows: list[dict] = []
    for (submitter, accelerator), group in t.groupby(["submitter", "accelerator"], sort=True, observed=True):
        head = {"submitter": str(submitter), "accelerator": str(accelerator)}
        for round_ in sorted(set(group["round"].astype("str")), key=round_order):
            rows.append({**head, **_scope(group[group["round"].astype("str") == round_], round_)})
        rows.append({**head, **_scope(group, ALL_ROUNDS)})
    rows = [{c: r[c] for c in COLUMNS} for r in rows]
    overall = [r for r in rows if r["round"] == ALL_ROUNDS]
    return Report(typed_rows("RecordRow", rows), [], {
        "tolerance_pct": tolerance_pct, "partners": len({r["submitter"] for r in overall}),
        "generations": sorted({r["accelerator"] for r in overall if r["compared"]}),
        "compared": sum(r["compared"] for r in overall), "agree": sum(r["agree"] for r in overall),
        "deviates": sum(r["deviates"] for r in overall)})


def partner_record(rules: Rules, results: pd.DataFrame, tolerance_pct: float = DEFAULT_TOLERANCE_PCT,
                   reference_submitter: str = DEFAULT_REFERENCE_SUBMITTER,
                   reference_vendor: str = DEFAULT_REFERENCE_VENDOR) -> Report:
    """The record of a canonical results table: compare's judgement, then :func:`record`."""
    return record(compare(rules, results, tolerance_pct, reference_submitter, reference_vendor).frame(), tolerance_pct)
