"""Which reference a partner result is judged against, and its verdict: the
rules of :mod:`pipeline.analyses.compare`, decided once per distinct decision
key (the deviation and the bound are :mod:`pipeline.core.formulas`).
"""

from __future__ import annotations

from pipeline.core.findings import Finding, located
from pipeline.core.rules import Rules, is_latency
from pipeline.core.model import (EXCLUDED, LABEL_UNVERIFIED, NO_REFERENCE, POST_DEADLINE, VERIFIED, Source,
                                 footnote, label, plain)
from pipeline.core.vocabulary import Severity

MATCH = ("round", "accelerator", "accelerators_per_node", "nodes", "model", "scenario")
PARTNER_COLUMNS = ("round", "submitter", "system", "accelerator", "accelerator_variant",
                   "accelerators_per_node", "nodes",
                   "total_accelerators", "model", "scenario", "division", "units", "value", "source", "file",
                   "line")
COLUMNS = PARTNER_COLUMNS + (
    "reference_submitter", "reference_system", "reference_value", "reference_source", "reference_file",
    "reference_line",
    "reference_status", "reference_rule", "deviation_pct", "tolerance_pct", "verdict", "reason",
    "partner_result", "partner_status", "status", "label", "footnote",
    # how the systems differ (pipeline.analyses.differences), and a no-reference row's context
    "differences", "differs_in", "context_system", "context_source", "context_per_accelerator",
    "context_deviation_pct", "context_note")


def deviation_finding(r: dict, prefix: str = "", own: bool = True) -> Finding:
    """The ``deviates-from-reference`` finding of one agreement row, at the
    partner's file and line (``prefix`` makes root-relative files repo-relative).
    ``own=False``: a warning for a partner moved out of tolerance by a gated
    reference change (the gate)."""
    where = Source.of_row(r, prefix or None).at(column="value")
    ref = Source.of_row(r, prefix or None, prefix="reference_") if r.get("reference_file") else None
    return located(
        "deviates-from-reference", where,
        f"within ±{plain(r['tolerance_pct'])}% of {plain(r['reference_value'])} "
        f"({r['reference_system']}" + (f", {ref}" if ref else "") + ")",
        f"{plain(r['value'])} ({r['deviation_pct']:+.2f}%)",
        f"{r['submitter']} {r['model']} {r['scenario']} deviates from the reference "
        f"by {r['deviation_pct']:+.2f}%" + ("" if own else " (after the gated reference change)")
        + (" [unverified]" if r.get("label") == LABEL_UNVERIFIED else ""),
        severity=Severity.ERROR if own else Severity.WARNING)


def _better_first(units: str):
    """Sort key: best result first (rates high, latencies low), then system id."""
    sign = 1.0 if is_latency(units) else -1.0
    return lambda r: (sign * r["value"], r["system"])


# What decides a partner row's reference: everything but its own value.
DECISION = MATCH + ("division", "units", "total_accelerators", "status", "capped")
REF_FIELDS = DECISION + ("system", "value", "source", "file", "line")


def vendors_of(rules: Rules, accelerator: str) -> set[str | None]:
    """The vendors of an accelerator's parts (one for a homogeneous system):
    the registry's, or the one an unregistered part is kept under
    (``AMD-MI400X``); None for a part whose vendor nothing says."""
    return {rules.accelerator_vendor(part) for part in str(accelerator).split("+")}


def on_vendor(rules: Rules, accelerator: str, vendor: str) -> bool:
    """Whether every part of an accelerator is the vendor's: what makes a result
    a partner result (the first rule of :func:`decide`)."""
    return vendors_of(rules, accelerator) == {vendor}


def decide(rules: Rules, row: dict, candidates: list[dict], ref_vendor: str, ref_submitter: str) -> dict:
    """The reference of every partner row sharing ``row``'s decision key."""
    out = {**dict.fromkeys(f"reference_{k}" for k in ("system", "value", "source", "file", "line", "status", "rule")),
           "verdict": None, "reason": ""}

    def finish(verdict: str, reason: str = "") -> dict:
        return {**out, "verdict": verdict, "reason": reason}

    found = vendors_of(rules, row["accelerator"])
    if None in found:
        return finish(EXCLUDED, f"not a partner result: {row['accelerator']} is not in "
                                  f"schemas/accelerators.yaml (vendor unknown, so not a {ref_vendor} part)")
    if len(found) > 1:
        return finish(EXCLUDED, f"mixed vendors: {row['accelerator']} combines "
                                  f"{' and '.join(sorted(found))} parts, not a {ref_vendor} system")
    if found != {ref_vendor}:
        return finish(EXCLUDED, f"not a partner result: {row['accelerator']} is "
                                  f"{' and '.join(sorted(found))}'s, not {ref_vendor}'s")
    if row["capped"]:
        return finish(EXCLUDED, "power-capped configuration")
    if not candidates:
        return finish(NO_REFERENCE, f"no {ref_submitter} result for this round, accelerator, "
                                      "accelerators per node, nodes, model and scenario")
    if row["status"] == VERIFIED:
        pool = [c for c in candidates if c["status"] == VERIFIED]
        if not pool:
            return finish(NO_REFERENCE, f"only post-deadline {ref_submitter} results match; "
                                          "a verified result is compared with verified references only")
    else:
        pool = [c for c in candidates if c["status"] == VERIFIED] or candidates
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
        return finish(EXCLUDED, why_not[0])
    eligible.sort(key=_better_first(row["units"]))
    ref = eligible[0]
    direction = "lowest latency" if is_latency(row["units"]) else "highest value"
    names = ", ".join(c["system"] for c in eligible[:5])
    more = f" and {len(eligible) - 5} more" if len(eligible) > 5 else ""
    rule = ("only candidate" if len(eligible) == 1 else
            f"best of {len(eligible)} ({direction}; ties by system id): {names}{more}")
    return {**out, "reference_system": ref["system"], "reference_value": ref["value"],
            "reference_source": ref["source"], "reference_file": ref["file"], "reference_line": ref["line"],
            "reference_status": ref["status"],
            "reference_rule": rule}


def agreement_status(partner_status: str, reference_status: str | None) -> str:
    """verified when the partner's result and its reference (if any) both are."""
    return VERIFIED if partner_status == VERIFIED and reference_status in (None, VERIFIED) else POST_DEADLINE


def decision(rules: Rules, key: dict, candidates: list[dict], ref_vendor: str, ref_submitter: str) -> dict:
    """Everything a partner row's decision key decides: its reference (see
    :func:`decide`), status, label and footnote."""
    out = decide(rules, key, candidates, ref_vendor, ref_submitter)
    status = agreement_status(key["status"], out["reference_status"])
    # decided here once, so that no reader (the HTML report) decides again which rows are partner results
    return {**out, "partner_result": on_vendor(rules, key["accelerator"], ref_vendor), "status": status,
            "label": label(status), "footnote": footnote(status)}


def reference_index(refs: list[dict]) -> dict[tuple, list[dict]]:
    """The reference submitter's rows (with ``capped``) by match key, in table order."""
    by_key: dict[tuple, list[dict]] = {}
    for ref in refs:
        by_key.setdefault(tuple(ref[k] for k in MATCH), []).append(ref)
    return by_key
