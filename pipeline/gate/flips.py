"""What a policy change would do (``mlrepro gate --allow-policy-change``):
every shipped result whose verdict or status differs between the base's
policy and the head's, each judged as the pipeline judges it (ingest, then
compare, under that policy's schemas and parameters)."""

from __future__ import annotations

from pathlib import Path

from pipeline.analyses.compare import compare
from pipeline.core.findings import Finding, located
from pipeline.core.model import REFERENCE, Source
from pipeline.gate.policy import Policy, active
from pipeline.ingest.submissions import ingest

WHO = ("round", "submitter", "system", "model", "scenario")


def outcomes(root: Path, policy: Policy) -> dict[str, dict]:
    """result source -> its status and verdict (or outcome) under POLICY."""
    with active(policy):
        report = ingest([root], root=root)
        agreement = compare(report.table, policy.tolerance_pct, policy.reference_submitter,
                            policy.reference_vendor).table
    verdicts = dict(zip(agreement["source"], zip(agreement["verdict"], agreement["deviation_pct"])))
    out = {}
    for row in report.table[list(WHO) + ["status", "source"]].to_dict("records"):
        verdict, deviation = verdicts.get(row["source"], (REFERENCE, None))
        out[row["source"]] = {k: row[k] for k in WHO} | {
            "status": row["status"], "verdict": str(verdict),
            "deviation_pct": None if deviation is None or deviation != deviation else float(deviation)}
    for d in report.dispositions:
        out.setdefault(d.source, {**{k: None for k in WHO}, "status": None, "verdict": d.outcome,
                                  "deviation_pct": None})
    return out


def flips(root: Path, base: Policy, head: Policy, shown: str | None) -> tuple[list[dict], list[Finding]]:
    """Every shipped result whose verdict or status differs between the two
    policies (SHOWN: the submissions root as locations name it)."""
    before, after = outcomes(root, base), outcomes(root, head)
    rows, found = [], []
    for source in sorted(set(before) | set(after)):
        a = before.get(source) or {"status": None, "verdict": "absent"}
        b = after.get(source) or {"status": None, "verdict": "absent"}
        if (a["status"], a["verdict"]) == (b["status"], b["verdict"]):
            continue
        who = b if b.get("model") else a
        changed = [f"{a['verdict']} -> {b['verdict']}"] if a["verdict"] != b["verdict"] else []
        if a["status"] != b["status"]:
            changed.append(f"{a['status']} -> {b['status']}")
        name = " ".join(str(who.get(k) or "?") for k in ("submitter", "round", "model", "scenario"))
        text = f"{name}: {', '.join(changed)}"
        where = Source.from_cell(source, shown)
        rows.append({"source": str(where), "file": where.path, "line": where.line,
                     "submitter": who.get("submitter"), "round": who.get("round"),
                     "system": who.get("system"), "model": who.get("model"), "scenario": who.get("scenario"),
                     "base": {"status": a["status"], "verdict": a["verdict"],
                              "deviation_pct": a.get("deviation_pct")},
                     "head": {"status": b["status"], "verdict": b["verdict"],
                              "deviation_pct": b.get("deviation_pct")},
                     "text": text})
        found.append(located("verdict-flip", where, f"{a['verdict']} ({a['status']}) under the base policy",
                             f"{b['verdict']} ({b['status']}) under the head policy",
                             f"the policy change flips {text}", "warning"))
    return rows, found
