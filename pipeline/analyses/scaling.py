"""Scaling: how close a multi-node result comes to linear scaling.

``efficiency_pct = value / expected * 100``, where ``expected`` is the sum
over the cluster's node types of count x per-accelerator reference (a
single-node result / its accelerator count). The count is the canonical
table's true accelerator count (87 for ``87xMI355X_22xEPYC_9575F``).

A node type's reference is a single-node result of the same model,
scenario, units and division, one accelerator type, no power cap, found by
the first step of :data:`LOOKUP` that finds one (the cluster's submitter,
then the reference submitter, then any submitter, each in the same round;
the step is written in ``references[].rule``). Within a step, verified
before post-deadline, then the strongest per accelerator (so that efficiency
is never flattered), ties by system id. A type that no step finds makes the
row ``no-reference``.

A latency is ``not-applicable``: a cluster does not answer one query faster
than a node. A row is unverified as soon as the cluster or one reference is.
"""

from __future__ import annotations

import pandas as pd

from pipeline.core.rules import Rules, is_latency
from pipeline.core.vocabulary import ScalingVerdict, tally
from pipeline.core.formulas import EPSILON, efficiency_pct, linear_expectation
from pipeline.core.findings import Report
from pipeline.core.model import (DEFAULT_REFERENCE_SUBMITTER, LABEL_UNVERIFIED, POST_DEADLINE,
                                 VERIFIED, footnote, label, typed_rows)

LOOKUP = ("same-submitter", "reference-submitter", "any-submitter")
SUB_LINEAR, LINEAR, SUPER_LINEAR, NO_REFERENCE, NOT_APPLICABLE = VERDICTS = tuple(ScalingVerdict)
MATCH = ("round", "model", "scenario", "units", "division")
ROW_COLUMNS = ("round", "submitter", "system", "model", "scenario", "units", "division", "nodes",
               "total_accelerators", "composition", "value", "source", "file", "line")


def composition(row: dict) -> dict[str, int]:
    """``MI300X:32,MI325X:16`` -> {MI300X: 32, MI325X: 16}; a row without a
    composition counts all its accelerators under its accelerator name."""
    text = row.get("composition")
    parts = [part.partition(":") for part in text.split(",")] if text and isinstance(text, str) else []
    if not parts or not all(count.strip().isdigit() for _, _, count in parts):   # not name:count: one type
        return {str(row["accelerator"]): int(row["total_accelerators"])}
    out: dict[str, int] = {}
    for name, _, count in parts:
        out[name.strip()] = out.get(name.strip(), 0) + int(count)
    return out


def single_node_index(rules: Rules, results: pd.DataFrame) -> dict[tuple, list[dict]]:
    """Single-node, single-type, uncapped results by (accelerator, *MATCH)."""
    index: dict[tuple, list[dict]] = {}
    for row in results[results["nodes"] == 1].to_dict("records"):
        types = composition(row)
        if len(types) != 1 or rules.power_capped(row["system"]) or rules.power_capped(row.get("system_name")):
            continue
        (name,) = types
        index.setdefault((name,) + tuple(row[k] for k in MATCH), []).append(row)
    return index


def find_reference(row: dict, accelerator: str, index: dict, reference_submitter: str):
    """(rule, reference row) for one node type of ``row``, or (None, None)."""
    candidates = index.get((accelerator,) + tuple(row[k] for k in MATCH), [])
    for rule, submitter in zip(LOOKUP, (row["submitter"], reference_submitter, None)):
        found = [c for c in candidates if submitter is None or c["submitter"] == submitter]
        if found:
            found.sort(key=lambda c: (c["status"] != VERIFIED,
                                      -c["value"] / c["total_accelerators"], str(c["system"])))
            return rule, found[0]
    return None, None


def scale_row(row: dict, index: dict, reference_submitter: str = DEFAULT_REFERENCE_SUBMITTER) -> dict:
    """The scaling row of one result (any node count; one node is not-applicable)."""
    out = {k: row.get(k) for k in ROW_COLUMNS}
    out.update(expected=None, efficiency_pct=None, references=[], missing=[], reason="")
    statuses = {row["status"]}
    if is_latency(str(row["units"])):
        return _finish(out, NOT_APPLICABLE, statuses,
                       f"latency metric ({row['units']}): scaling efficiency applies to rates only")
    if int(row["nodes"]) < 2:
        return _finish(out, NOT_APPLICABLE, statuses, "a single-node result has no scaling efficiency")
    parts = []
    for accelerator, count in composition(row).items():
        rule, ref = find_reference(row, accelerator, index, reference_submitter)
        if ref is None:
            out["missing"].append(accelerator)
            continue
        statuses.add(ref["status"])
        per_acc = ref["value"] / ref["total_accelerators"]
        out["references"].append({
            "accelerator": accelerator, "count": count, "rule": rule, "submitter": ref["submitter"],
            "system": ref["system"], "value": ref["value"], "accelerators": int(ref["total_accelerators"]),
            "per_accelerator": round(per_acc, 6), "status": ref["status"], "source": ref["source"]})
        parts.append((count, ref["value"], int(ref["total_accelerators"])))
    if out["missing"]:
        return _finish(out, NO_REFERENCE, statuses, "no single-node reference for "
                       + ", ".join(f"{a} ({row['round']} {row['model']} {row['scenario']} {row['division']})"
                                   for a in out["missing"]))
    expected = linear_expectation(parts)
    eff = efficiency_pct(row["value"], expected)
    out.update(expected=round(expected, 6), efficiency_pct=round(eff, 6))
    verdict = LINEAR if abs(eff - 100.0) <= EPSILON else (SUB_LINEAR if eff < 100.0 else SUPER_LINEAR)
    return _finish(out, verdict, statuses)


def _finish(out: dict, verdict: str, statuses: set, reason: str = "") -> dict:
    out["verdict"], out["reason"] = verdict, reason
    out["reference_rule"] = "; ".join(
        f"{r['accelerator']}: {r['rule']} {r['submitter']} {r['system']} {r['value']:g}/{r['accelerators']}"
        for r in out["references"])
    out["status"] = VERIFIED if statuses == {VERIFIED} else POST_DEADLINE
    out["label"], out["footnote"] = label(out["status"]), footnote(out["status"])
    return out


def scaling(rules: Rules, results: pd.DataFrame, reference_submitter: str = DEFAULT_REFERENCE_SUBMITTER) -> Report:
    """A scaling row for every multi-node result of the table."""
    index = single_node_index(rules, results)
    multi = results[results["nodes"] > 1].sort_values(
        ["round", "submitter", "system", "model", "scenario", "status"], kind="stable")
    rows = typed_rows("ScalingRow", (scale_row(r, index, reference_submitter) for r in multi.to_dict("records")))
    return Report(rows, [], {"reference_submitter": reference_submitter, "multi_node_rows": len(rows),
                             **tally([r["verdict"] for r in rows], VERDICTS),
                             "unverified": sum(r["label"] == LABEL_UNVERIFIED for r in rows)})
