"""Compare: each partner result against the reference submitter's result for
the same round, accelerator, accelerators per node, nodes, model and scenario.

Verdicts: agree (|deviation| <= tolerance), deviates, no-reference, excluded.

Which rows are partner results: the rows of any other submitter on the
reference *vendor's* accelerators (``vendor`` in schemas/accelerators.yaml,
``compare.reference_vendor`` in params.yaml, default AMD). A partner row with
no same-round reference is ``no-reference`` (MI350X when the reference
submitter published none); a row on another vendor's part, or on an
accelerator the registry lacks (vendor unknown), is ``excluded`` with that
reason.

Which reference, when several match: the reference submitter's *best* eligible
result (highest rate, or lowest latency), ties broken by system id. The best
is the score the vendor publishes, so a partner is held to it; the rule and
the candidates are written in every row (`reference_rule`).

Verified partner rows are compared with verified references only; a
post-deadline partner row may use any reference (verified first) and its
agreement row is labelled unverified.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import rules
from .findings import Finding, ReportShape, located
from .formulas import deviation_pct, within
from .model import (DEFAULT_REFERENCE_SUBMITTER, DEFAULT_REFERENCE_VENDOR, DEFAULT_TOLERANCE_PCT,
                    LABEL_UNVERIFIED, UNVERIFIED_FOOTNOTE, Source, plain)

MATCH = ("round", "accelerator", "accelerators_per_node", "nodes", "model", "scenario")
PARTNER_COLUMNS = ("round", "submitter", "system", "accelerator", "accelerator_variant",
                   "accelerators_per_node", "nodes",
                   "total_accelerators", "model", "scenario", "division", "units", "value", "source")
COLUMNS = PARTNER_COLUMNS + (
    "reference_submitter", "reference_system", "reference_value", "reference_source",
    "reference_status", "reference_rule", "deviation_pct", "tolerance_pct", "verdict", "reason",
    "partner_status", "status", "label", "footnote")


def power_capped_name(text: object) -> bool:
    """A system id or name that says power-capped (the pattern is in schemas/)."""
    return bool(rules.power_cap_pattern().search(str(text or "")))


@dataclass
class CompareReport(ReportShape):
    """The agreement table, one row per partner result, and one
    ``deviates-from-reference`` error per row out of tolerance."""

    table: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(COLUMNS)))
    tolerance_pct: float = DEFAULT_TOLERANCE_PCT
    reference_submitter: str = DEFAULT_REFERENCE_SUBMITTER
    reference_vendor: str = DEFAULT_REFERENCE_VENDOR
    read_findings: list[Finding] = field(default_factory=list)  # e.g. rows the table's schema refused
    prefix: str = ""  # before a row's source in a finding: the submissions root, from the repository root

    def frame(self) -> pd.DataFrame:
        return self.table

    @property
    def rows(self) -> list[dict]:
        """The agreement rows as dicts of JSON-safe values."""
        return plain(self.table.to_dict("records"))

    @property
    def findings(self) -> list[Finding]:
        return self.findings_head(None)

    # Text output shows a few findings and rows of a table that may hold a million:
    # only those are built (one finding per deviating row would be 500,000 objects).
    def _deviating(self, limit: int | None = None) -> pd.DataFrame:
        at = np.flatnonzero((self.table["verdict"] == "deviates").to_numpy())
        return self.table.iloc[at if limit is None else at[:max(limit, 0)]]

    def finding_count(self) -> int:
        return len(self.read_findings) + int((self.table["verdict"] == "deviates").sum())

    def error_count(self) -> int:
        return (sum(1 for f in self.read_findings if f.severity == "error")
                + int((self.table["verdict"] == "deviates").sum()))

    def findings_head(self, limit: int | None) -> list[Finding]:
        head = self.read_findings if limit is None else self.read_findings[:limit]
        deviating = self._deviating(None if limit is None else limit - len(head))
        return head + [deviation_finding(r, self.prefix) for r in plain(deviating.to_dict("records"))]

    def row_count(self) -> int:
        return len(self.table)

    def rows_head(self, limit: int | None) -> list[dict]:
        return plain((self.table if limit is None else self.table.head(limit)).to_dict("records"))

    def any_unverified(self) -> bool:
        return bool((self.table["label"] == LABEL_UNVERIFIED).any())

    @property
    def summary(self) -> dict:
        t = self.table
        per_partner = {}
        for submitter, group in t.groupby("submitter", sort=True):
            counts = group["verdict"].value_counts()
            p = {v: int(counts.get(v, 0)) for v in ("agree", "deviates", "no-reference", "excluded")}
            p["compared"] = p["agree"] + p["deviates"]
            p["agreement_rate"] = round(p["agree"] / p["compared"], 6) if p["compared"] else None
            per_partner[str(submitter)] = {"compared": p.pop("compared"), **p}
        counts = t["verdict"].value_counts()
        return {
            "tolerance_pct": self.tolerance_pct,
            "reference_submitter": self.reference_submitter,
            "reference_vendor": self.reference_vendor,
            "partner_rows": len(t),
            **{v: int(counts.get(v, 0)) for v in ("agree", "deviates", "no-reference", "excluded")},
            "partners": per_partner,
        }


def deviation_finding(r: dict, prefix: str = "", own: bool = True) -> Finding:
    """The ``deviates-from-reference`` finding of one agreement row, at the
    partner's file and line (``prefix`` makes root-relative files repo-relative).
    ``own=False``: a warning for a partner moved out of tolerance by a gated
    reference change (the gate)."""
    where = Source.parse(r["source"]).moved(prefix)
    where = Source(where.file, where.line, column="value")
    ref = Source.parse(r.get("reference_source")).moved(prefix) if r.get("reference_source") else None
    return located(
        "deviates-from-reference", where,
        f"within ±{plain(r['tolerance_pct'])}% of {plain(r['reference_value'])} "
        f"({r['reference_system']}" + (f", {ref}" if ref else "") + ")",
        f"{plain(r['value'])} ({r['deviation_pct']:+.2f}%)",
        f"{r['submitter']} {r['model']} {r['scenario']} deviates from the reference "
        f"by {r['deviation_pct']:+.2f}%" + ("" if own else " (after the gated reference change)")
        + (" [unverified]" if r.get("label") == "unverified" else ""),
        severity="error" if own else "warning")


def _power_capped(frame: pd.DataFrame) -> pd.Series:
    pattern = rules.power_cap_pattern()
    name = frame["system_name"].fillna("") if "system_name" in frame.columns else ""
    return (frame["system"].astype("str").str.contains(pattern)
            | pd.Series(name, index=frame.index).astype("str").str.contains(pattern))


def _better_first(units: str):
    """Sort key: best result first (rates high, latencies low), then system id."""
    sign = 1.0 if rules.is_latency(units) else -1.0
    return lambda r: (sign * r["value"], r["system"])


# What decides a partner row's reference: everything but its own value.
DECISION = MATCH + ("division", "units", "total_accelerators", "status", "capped")
REF_FIELDS = DECISION + ("system", "value", "source")


def _dicts(frame: pd.DataFrame, columns: tuple[str, ...]) -> list[dict]:
    """Rows as dicts of plain Python values (faster than to_dict on Arrow strings)."""
    arrays = [frame[c].to_numpy(dtype=object) for c in columns]
    return [dict(zip(columns, values)) for values in zip(*arrays)]


@rules.cached()
def vendors() -> dict[str, str]:
    """Accelerator name -> vendor, from schemas/accelerators.yaml."""
    return {str(e["name"]): str(e.get("vendor") or "")
            for e in rules.load_yaml("accelerators.yaml").get("accelerators") or []}


def vendors_of(accelerator: str) -> set[str | None]:
    """The vendors of an accelerator's parts (one for a homogeneous system);
    None for a part the registry lacks."""
    return {vendors().get(part) or None for part in str(accelerator).split("+")}


def compare(results: pd.DataFrame, tolerance_pct: float = DEFAULT_TOLERANCE_PCT,
            reference_submitter: str = DEFAULT_REFERENCE_SUBMITTER,
            reference_vendor: str = DEFAULT_REFERENCE_VENDOR) -> CompareReport:
    """The reference is decided once per distinct decision key (a handful per
    round); deviations and verdicts are computed as columns."""
    if "accelerator_variant" not in results.columns:   # a v1 table
        results = results.assign(accelerator_variant=results["accelerator"])
    refs = results[results["submitter"] == reference_submitter]
    by_key: dict[tuple, list[dict]] = {}
    for ref in _dicts(refs.assign(capped=_power_capped(refs)), REF_FIELDS):
        by_key.setdefault(tuple(ref[k] for k in MATCH), []).append(ref)
    partners = results[results["submitter"] != reference_submitter]
    partners = partners.reset_index(drop=True)   # in the table's own (deterministic) order
    partners = partners.assign(capped=_power_capped(partners))
    if partners.empty:
        return CompareReport(pd.DataFrame(columns=list(COLUMNS)), tolerance_pct, reference_submitter,
                             reference_vendor)
    codes = partners.groupby(list(DECISION), sort=False, dropna=False).ngroup().to_numpy()
    firsts = pd.Series(range(len(codes))).groupby(codes).first().to_numpy()
    keys = _dicts(partners.iloc[firsts], DECISION)
    decisions = pd.DataFrame([_decide(k, by_key.get(tuple(k[m] for m in MATCH), []), reference_vendor,
                                      reference_submitter) for k in keys])
    table = partners[list(PARTNER_COLUMNS)].copy()
    for col in decisions.columns:  # categorical: one copy of each decided text, not one per row
        if decisions[col].dtype == object and col != "reference_value":
            per_key = pd.Categorical(decisions[col].to_numpy())   # categories from the few keys
            table[col] = pd.Categorical.from_codes(per_key.codes[codes], dtype=per_key.dtype)
        else:
            table[col] = decisions[col].to_numpy()[codes]
    table["reference_submitter"] = reference_submitter
    table["tolerance_pct"] = tolerance_pct
    table["partner_status"] = pd.Categorical(partners["status"].to_numpy())
    compared = table["reference_value"].notna().to_numpy()
    ref_value = table["reference_value"].to_numpy(dtype="float64")
    dev = deviation_pct(table["value"].to_numpy(dtype="float64"), np.where(compared, ref_value, 1.0))
    table["deviation_pct"] = np.where(compared, np.round(dev, 6), np.nan)
    table["verdict"] = pd.Categorical(np.where(
        compared, np.where(within(dev, tolerance_pct), "agree", "deviates"), table["verdict"].to_numpy()))
    statuses_ok = ((table["partner_status"] == "verified").to_numpy()
                   & (~compared | (table["reference_status"] == "verified").to_numpy()))
    table["status"] = pd.Categorical(np.where(statuses_ok, "verified", "post-deadline"))
    table["label"] = pd.Categorical(np.where(statuses_ok, "verified", "unverified"))
    table["footnote"] = pd.Categorical(np.where(statuses_ok, "", UNVERIFIED_FOOTNOTE))
    return CompareReport(table[list(COLUMNS)], tolerance_pct, reference_submitter, reference_vendor)


def _decide(row: dict, candidates: list[dict], ref_vendor: str, ref_submitter: str) -> dict:
    """The reference of every partner row sharing ``row``'s decision key."""
    out = {"reference_system": None, "reference_value": None, "reference_source": None,
           "reference_status": None, "reference_rule": None, "verdict": None, "reason": ""}

    def finish(verdict: str, reason: str = "") -> dict:
        return {**out, "verdict": verdict, "reason": reason}

    found = vendors_of(row["accelerator"])
    if None in found:
        return finish("excluded", f"not a partner result: {row['accelerator']} is not in "
                                  f"schemas/accelerators.yaml (vendor unknown, so not a {ref_vendor} part)")
    if found != {ref_vendor}:
        return finish("excluded", f"not a partner result: {row['accelerator']} is "
                                  f"{' and '.join(sorted(found))}'s, not {ref_vendor}'s")
    if row["capped"]:
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
        pool = [c for c in candidates if c["status"] == "verified"] or candidates
    eligible, why_not = [], []
    for c in pool:
        if c["division"] != row["division"]:
            why_not.append(f"division differs ({row['division']} against {c['division']})")
        elif c["units"] != row["units"]:
            why_not.append(f"units differ ({row['units']} against {c['units']})")
        elif c["capped"]:
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
    names = ", ".join(c["system"] for c in eligible[:5])
    more = f" and {len(eligible) - 5} more" if len(eligible) > 5 else ""
    rule = ("only candidate" if len(eligible) == 1 else
            f"best of {len(eligible)} ({direction}; ties by system id): {names}{more}")
    return {**out, "reference_system": ref["system"], "reference_value": ref["value"],
            "reference_source": ref["source"], "reference_status": ref["status"],
            "reference_rule": rule}
