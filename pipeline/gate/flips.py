"""What a maintenance change would do (``mlrepro gate --allow-maintenance``):
every shipped result whose verdict or status differs between the base (its
submissions, under its policy) and the head (its submissions, under its
policy), each judged as the pipeline judges it (ingest, then compare, under
that policy's schemas and parameters). A new reference version or a policy
change shows here as the partner verdicts it flips."""

from __future__ import annotations

from pathlib import Path

from pipeline.analyses.compare import compare
from pipeline.core.findings import Finding, located
from pipeline.core.model import REFERENCE, RESULT_KEY, Source, result_key
from pipeline.core.vocabulary import Severity
from pipeline.gate.policy import Policy
from pipeline.ingest.submissions import ingest
from pipeline.store.clock import Clock

WHO = ("round", "submitter", "system", "model", "scenario")


def outcomes(root: Path, policy: Policy, visible: Clock | None = None) -> dict[tuple, dict]:
    """result key -> its status and verdict (or outcome) in the submissions ROOT
    under POLICY (VISIBLE: when each version became visible)."""
    report = ingest(policy.rules, [root], root=root, visible=visible)
    agreement = compare(policy.rules, report.table, policy.tolerance_pct, policy.reference_submitter,
                        policy.reference_vendor).table
    verdicts = {result_key(r): (r["verdict"], r["deviation_pct"])
                for r in agreement[[*RESULT_KEY, "verdict", "deviation_pct"]].to_dict("records")}
    out = {}
    for row in report.table[[*WHO, "status", *RESULT_KEY]].to_dict("records"):
        verdict, deviation = verdicts.get(result_key(row), (REFERENCE, None))
        out[result_key(row)] = {k: row[k] for k in WHO} | {
            "status": row["status"], "verdict": str(verdict),
            "deviation_pct": None if deviation is None or deviation != deviation else float(deviation)}
    for d in report.dispositions:
        out.setdefault((d.where.file, d.where.line), {**{k: None for k in WHO}, "status": None, "verdict": d.outcome,
                                  "deviation_pct": None})
    return out


def flips(before: dict[tuple, dict], after: dict[tuple, dict], shown: str | None) -> tuple[list[dict], list[Finding]]:
    """Every shipped result whose verdict or status differs between the
    :func:`outcomes` BEFORE and AFTER (SHOWN: the submissions root as
    locations name it); the rows of a reference version that comes or goes
    are what the partner verdicts flip on, not flips themselves."""
    rows, found = [], []
    for key in sorted(set(before) | set(after), key=lambda k: (k[0], k[1] or 0)):
        a = before.get(key) or {"status": None, "verdict": "absent"}
        b = after.get(key) or {"status": None, "verdict": "absent"}
        if (a["status"], a["verdict"]) == (b["status"], b["verdict"]) or \
                {a["verdict"], b["verdict"]} == {"absent", REFERENCE}:   # a reference version coming or going
            continue
        who = b if b.get("model") else a
        changed = [f"{a[k]} -> {b[k]}" for k in ("verdict", "status") if a[k] != b[k]]
        name = " ".join(str(who.get(k) or "?") for k in ("submitter", "round", "model", "scenario"))
        text = f"{name}: {', '.join(changed)}"
        where = Source(*key).under(shown)
        rows.append({"source": str(where), "file": where.path, "line": where.line,
                     **{k: who.get(k) for k in ("submitter", "round", "system", "model", "scenario")},
                     **{side: {k: o.get(k) for k in ("status", "verdict", "deviation_pct")}
                        for side, o in (("base", a), ("head", b))},
                     "text": text})
        found.append(located("verdict-flip", where, f"{a['verdict']} ({a['status']}) at the base",
                             f"{b['verdict']} ({b['status']}) at the head",
                             f"the change flips {text}", Severity.WARNING))
    return rows, found
