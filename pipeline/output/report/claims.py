"""The claims ledger in the report, as values for ``round.html.j2``'s claims
table. A claim about verified results shows, under its own figure, the figure
post-deadline results would give, labelled and footnoted as MLCommons asks of
an unverified figure."""

from __future__ import annotations

import pandas as pd

from pipeline.analyses.superseded import WITHDRAWN
from pipeline.core.model import (AMBIGUOUS, CHERRY_PICKED, DEVIATES, DOES_NOT_HOLD, HOLDS,
                                 LABEL_INCLUDING_POST_DEADLINE, NO_REFERENCE, UNMATCHED)
from pipeline.core.vocabulary import label as word
from pipeline.output.figures import claim_figure as figure, quantity, signed_pct
from pipeline.output.report.html import Row
from pipeline.output.report.load import is_unverified

RANKS = {DOES_NOT_HOLD: 0, CHERRY_PICKED: 1, AMBIGUOUS: 2, UNMATCHED: 2, NO_REFERENCE: 3, HOLDS: 4}  # worst first


def rank(claim: dict) -> int:
    return RANKS.get(str(claim.get("verdict")), 5)


def scope(claim: dict) -> str:
    """What the claim covers: ``llama2-70b-99.9 Interactive, Offline, Server · MI355X``."""
    s = claim.get("scope")
    if not isinstance(s, dict):
        return ""
    models, scenarios, accelerators = (", ".join(map(str, s.get(k) or [])) for k in
                                       ("models", "scenarios", "accelerators"))
    return " · ".join(p for p in (" ".join(x for x in (models, scenarios) if x), accelerators) if p)


def comparator(claim: dict) -> str:
    """Who the subject was measured against, in a few words."""
    comp = claim.get("comparator")
    if claim.get("kind") in ("reproducibility", "record"):
        within, compared = claim.get("within"), claim.get("compared")
        share = f"{within} of {compared} partner results within" if compared is not None else ""
        who = (comp or {}).get("submitter") if isinstance(comp, dict) else None
        return ", ".join(x for x in (f"the reference submitter {who}" if who else "", share) if x)
    if not isinstance(comp, dict):
        return ""
    value = quantity(comp.get("value"), comp.get("units"))
    if claim.get("kind") == "scaling":
        return f"linear from {comp.get('submitter')} {comp.get('system')}: expected {value}"
    where = f" ({comp['round']})" if comp.get("round") else ""
    return f"{comp.get('submitter')} {comp.get('system')}{where}: {value}"


def post_deadline_figure(claim: dict) -> dict | None:
    """The figure including post-deadline results, as one labelled line (None when there is none)."""
    late = claim.get("including_post_deadline")
    if not isinstance(late, dict):
        return None
    shown = {**claim, **late}   # the claim's measure, the figure's values
    parts = [figure(shown, "computed")]
    if claim.get("kind") == "reproducibility" and late.get("compared") is not None:
        parts.append(f"{late.get('within')} of {late.get('compared')} partner results within")
    parts.append(word(shown.get("verdict")))
    return {"label": str(late.get("label") or LABEL_INCLUDING_POST_DEADLINE),
            "figure": ", ".join(p for p in parts if p)}


def withdrawn_notes(claim: dict, superseded: pd.DataFrame | None) -> list[str]:
    """For a reproducibility claim, each deviating result a partner withdrew within its scope."""
    scope = claim.get("scope")
    if claim.get("kind") != "reproducibility" or superseded is None or not isinstance(scope, dict) \
            or not len(superseded):
        return []
    hit = superseded[(superseded["fate"] == WITHDRAWN) & (superseded["verdict"] == DEVIATES)
                     & (superseded["round"] == scope.get("round"))
                     & superseded["model"].isin(scope.get("models") or [])
                     & superseded["accelerator"].isin(scope.get("accelerators") or [])]
    return [f"{r['submitter']} withdrew a deviating result in v{r['superseded_by']}: {r['system']} {r['model']} "
            f"{r['scenario']} {signed_pct(r['deviation_pct'])} (reason: {r['withdrawal_reason']})"
            for r in hit.to_dict("records")]


def _notes(claim: dict, superseded=None) -> list[str]:
    notes = withdrawn_notes(claim, superseded) + [n for n in claim.get("notes") or [] if isinstance(n, str)]
    if claim.get("reason") and claim["reason"] not in notes:
        notes.insert(0, str(claim["reason"]))
    return notes


def claim_view(claim: dict, superseded=None) -> dict:
    repro = claim.get("kind") == "reproducibility"
    return {"id": claim.get("id"), "text": claim.get("text"), "scope": scope(claim), "notes": _notes(claim, superseded),
            "kind": str(claim.get("kind") or ""), "claimed": claim.get("claimed"),
            "claimed_figure": figure(claim, "claimed"), "computed": claim.get("computed"),
            "computed_figure": figure(claim, "computed"), "vs_best": figure(claim, "computed_vs_best"),
            "against_strongest": claim.get("verdict") == CHERRY_PICKED and claim.get("computed_vs_best") is not None,
            "within": claim.get("within") if repro else None, "compared": claim.get("compared") if repro else None,
            "unv": is_unverified(claim), "late": post_deadline_figure(claim),
            "verdict": str(claim.get("verdict")), "rank": rank(claim), "against": comparator(claim)}


def claims_view(claims: list[dict], superseded=None) -> dict:
    """The claims of one round, the worst verdicts first."""
    rows = [Row(claim_view(c, superseded), {0: "bad", 1: "warn"}.get(rank(c), ""))
            for c in sorted(claims, key=lambda c: (rank(c), str(c.get("id"))))]
    return {"rows": rows, "footnote": any(r.item["unv"] or r.item["late"] for r in rows)}

