"""Compare: each partner result against the reference submitter's result for
the same round, accelerator, accelerators per node, nodes, model and scenario.

Verdicts: agree (|deviation| <= tolerance), deviates, no-reference, excluded.

Which reference, when several match: the reference submitter's *best* eligible
result (highest rate, or lowest latency), ties broken by system id. The best
is the score the vendor publishes, so a partner is held to it; the rule and
the candidates are written in every row (`reference_rule`).

Verified partner rows are compared with verified references only; a
post-deadline partner row may use any reference (verified first) and its
agreement row is labelled unverified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from . import rules
from .formulas import agreement_verdict, deviation_pct
from .outputs import UNVERIFIED_FOOTNOTE

MATCH = ("round", "accelerator", "accelerators_per_node", "nodes", "model", "scenario")
POWER_CAP = re.compile(r"power[ _-]?cap", re.IGNORECASE)
PARTNER_COLUMNS = ("round", "submitter", "system", "accelerator", "accelerators_per_node", "nodes",
                   "total_accelerators", "model", "scenario", "division", "units", "value", "source")
COLUMNS = PARTNER_COLUMNS + (
    "reference_submitter", "reference_system", "reference_value", "reference_source",
    "reference_status", "reference_rule", "deviation_pct", "tolerance_pct", "verdict", "reason",
    "partner_status", "status", "label", "footnote")


@dataclass
class CompareReport:
    rows: list[dict] = field(default_factory=list)
    tolerance_pct: float = 4.0
    reference_submitter: str = "AMD"

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=list(COLUMNS))

    def summary(self) -> dict:
        verdicts = pd.Series([r["verdict"] for r in self.rows], dtype="str")
        per_partner = {}
        for r in self.rows:
            p = per_partner.setdefault(r["submitter"], {"compared": 0, "agree": 0, "deviates": 0,
                                                         "no-reference": 0, "excluded": 0})
            p[r["verdict"]] += 1
            if r["verdict"] in ("agree", "deviates"):
                p["compared"] += 1
        for p in per_partner.values():
            p["agreement_rate"] = round(p["agree"] / p["compared"], 6) if p["compared"] else None
        return {
            "tolerance_pct": self.tolerance_pct,
            "reference_submitter": self.reference_submitter,
            "partner_rows": len(self.rows),
            **{v: int((verdicts == v).sum()) for v in ("agree", "deviates", "no-reference", "excluded")},
            "partners": dict(sorted(per_partner.items())),
        }


def _power_capped(row) -> bool:
    return bool(POWER_CAP.search(str(row["system"])) or POWER_CAP.search(str(row.get("system_name") or "")))


def _better_first(units: str):
    """Sort key: best result first (rates high, latencies low), then system id."""
    sign = 1.0 if rules.is_latency(units) else -1.0
    return lambda r: (sign * r["value"], r["system"])


def compare(results: pd.DataFrame, tolerance_pct: float = 4.0,
            reference_submitter: str = "AMD") -> CompareReport:
    report = CompareReport(tolerance_pct=tolerance_pct, reference_submitter=reference_submitter)
    refs = results[results["submitter"] == reference_submitter]
    ref_accelerators = set(refs["accelerator"])
    by_key: dict[tuple, list[dict]] = {}
    for ref in refs.to_dict("records"):
        by_key.setdefault(tuple(ref[k] for k in MATCH), []).append(ref)
    partners = results[results["submitter"] != reference_submitter]
    for row in partners.sort_values(["round", "submitter", "system", "model", "scenario"],
                                    kind="stable").to_dict("records"):
        report.rows.append(_compare_row(row, by_key.get(tuple(row[k] for k in MATCH), []),
                                        ref_accelerators, tolerance_pct, reference_submitter))
    return report


def _compare_row(row: dict, candidates: list[dict], ref_accelerators: set, tol: float,
                 ref_submitter: str) -> dict:
    out = {k: row[k] for k in PARTNER_COLUMNS}
    out.update(reference_submitter=ref_submitter, reference_system=None, reference_value=None,
               reference_source=None, reference_status=None, reference_rule=None,
               deviation_pct=None, tolerance_pct=tol, reason="", partner_status=row["status"])

    def finish(verdict: str, reason: str = "", ref: dict | None = None) -> dict:
        out["verdict"], out["reason"] = verdict, reason
        statuses = {row["status"]} | ({ref["status"]} if ref else set())
        out["status"] = "verified" if statuses == {"verified"} else "post-deadline"
        unverified = out["status"] != "verified"
        out["label"] = "unverified" if unverified else "verified"
        out["footnote"] = UNVERIFIED_FOOTNOTE if unverified else ""
        return out

    if row["accelerator"] not in ref_accelerators:
        return finish("excluded", f"not a partner result: {ref_submitter} has no result on {row['accelerator']}")
    if _power_capped(row):
        return finish("excluded", "power-capped configuration")
    if not candidates:
        return finish("no-reference", f"no {ref_submitter} result for this round, accelerator, "
                                      "accelerators per node, nodes, model and scenario")
    if row["status"] == "verified":
        pool = [c for c in candidates if c["status"] == "verified"]
        if not pool:
            return finish("no-reference", f"only post-deadline {ref_submitter} results match; "
                                          "a verified result is compared with verified references only")
    else:
        verified = [c for c in candidates if c["status"] == "verified"]
        pool = verified or candidates
    eligible, why_not = [], []
    for c in pool:
        if c["division"] != row["division"]:
            why_not.append(f"division differs ({row['division']} against {c['division']})")
        elif c["units"] != row["units"]:
            why_not.append(f"units differ ({row['units']} against {c['units']})")
        elif _power_capped(c):
            why_not.append(f"reference {c['system']} is power-capped")
        elif c["total_accelerators"] != row["total_accelerators"]:
            why_not.append(f"accelerator count differs ({row['total_accelerators']} against "
                           f"{c['total_accelerators']})")
        else:
            eligible.append(c)
    if not eligible:
        return finish("excluded", why_not[0])
    eligible.sort(key=_better_first(row["units"]))
    ref = eligible[0]
    direction = "lowest latency" if rules.is_latency(row["units"]) else "highest value"
    out["reference_rule"] = (f"only candidate" if len(eligible) == 1 else
                             f"best of {len(eligible)} ({direction}; ties by system id): "
                             + ", ".join(c["system"] for c in eligible))
    dev = deviation_pct(row["value"], ref["value"])
    out.update(reference_system=ref["system"], reference_value=ref["value"],
               reference_source=ref["source"], reference_status=ref["status"],
               deviation_pct=round(dev, 6))
    return finish(agreement_verdict(dev, tol), ref=ref)
