"""The first screen (the values of ``answers.html.j2``): the answers an auditor
asks for, before any detail: per round, its partners' results, the deviating
partners first (for the newest :data:`FIRST_SCREEN_ROUNDS` rounds: a screen
holds two such tables; the older ones in one line); the claims that do not
hold or hold only against a weaker comparator; how many results are
unverified; the validation of the two sets and the rejected inputs.
"""

from __future__ import annotations

import pandas as pd

from pipeline.core.model import (AGREE, AGREEMENT_VERDICTS, CHERRY_PICKED, DEVIATES, DOES_NOT_HOLD, EXCLUDED, HOLDS,
                                 NO_REFERENCE, POST_DEADLINE, REJECTED, SET_ASIDE, VERIFIED)
from pipeline.core.vocabulary import label, tally
from pipeline.output.report.claims import claim_view
from pipeline.output.figures import number
from pipeline.output.report.html import Row, anchor
from pipeline.output.report.load import ACROSS_ROUNDS, PARTNER, Data, claim_round, is_unverified
from pipeline.output.report.validation import summary as validation_summary


NAME_CHARS = 28   # a longer partner name is shortened here (whole in its tooltip and in the details)
FIRST_SCREEN_ROUNDS = 2   # the newest rounds get a table on the first screen; the older ones a line


def _partner_row(round_: str, status: str, partner: str, rows: pd.DataFrame) -> tuple[tuple, Row]:
    """One partner of one round: the sort key (deviating first, then by
    |worst deviation|, whatever the number of deviating results) and the row."""
    compared = rows[rows["verdict"].isin([AGREE, DEVIATES])]
    devs = [(abs(d), d, f"{model} {scenario}") for d, model, scenario in
            zip(compared["deviation_pct"].map(number), compared["model"], compared["scenario"]) if d is not None]
    _, worst, case = max(devs, key=lambda x: (x[0], x[1])) if devs else (None, None, "")
    got = tally(rows["verdict"], AGREEMENT_VERDICTS)
    partner = str(partner)
    item = {"partner": partner, "unv": status != VERIFIED, "results": len(rows), "agree": got[AGREE],
            "deviate": got[DEVIATES], "no_reference": got[NO_REFERENCE], "excluded": got[EXCLUDED],
            "shown": partner if len(partner) <= NAME_CHARS else partner[:NAME_CHARS - 1] + "…",
            "anchor": anchor(round_, POST_DEADLINE if status != VERIFIED else VERIFIED), "worst": worst, "case": case}
    key = (not got[DEVIATES], -abs(worst) if worst is not None else 0.0, partner, status)
    return key, Row(item, "bad" if got[DEVIATES] else "")


def partner_rounds(data: Data, rounds: list[str]) -> list[dict]:
    """Per round, its partners (deviating first); the submitters with no partner result counted under them."""
    agr, out = data.agreement, []
    for round_ in rounds:
        mine = agr[agr["round"] == round_]
        ours = mine[mine[PARTNER]]
        rows = sorted((_partner_row(round_, status, partner, part) for (status, partner), part in
                       ours.groupby(["status", "submitter"], sort=True)), key=lambda x: x[0])
        others = mine[~mine["submitter"].isin(set(ours["submitter"]))]
        status = VERIFIED if (others["status"] == VERIFIED).any() else POST_DEADLINE
        out.append({"round": round_, "ident": anchor(round_), "partners": ours["submitter"].nunique(),
                    "rows": [row for _, row in rows], "others": sorted(set(others["submitter"])),
                    "others_anchor": anchor(round_, status, "other-vendors")})
    return out


def _claim(claim: dict, round_: str) -> dict:
    return dict(claim_view(claim), round=round_, at="record" if round_ == ACROSS_ROUNDS else anchor(round_, "claims"))


def _claims(data: Data) -> dict | None:
    if data.claims is None:
        return None
    unchecked: dict[str, list[str]] = {}
    for c in data.claims:
        if c.get("verdict") not in (HOLDS, DOES_NOT_HOLD, CHERRY_PICKED):
            unchecked.setdefault(label(c.get("verdict")), []).append(str(c.get("id")))
    return {"boxes": [{"verdict": v, "against_best": v == CHERRY_PICKED,
                       "rows": [Row(_claim(c, claim_round(c, data))) for c in data.claims if c.get("verdict") == v]}
                      for v in (DOES_NOT_HOLD, CHERRY_PICKED)],
            "total": len(data.claims), "holds": sum(c.get("verdict") == HOLDS for c in data.claims),
            "unchecked": "; ".join(f"{len(ids)} {said} ({', '.join(ids)})" for said, ids in unchecked.items())}


def _unverified(data: Data) -> dict:
    post = data.results[data.results["status"] != VERIFIED]
    claims = sum(is_unverified(c) for c in data.claims or [])
    scaling = sum(is_unverified(r) for r in data.scaling or [])
    return {"post": len(post), "results": len(data.results), "claims": claims, "scaling": scaling,
            "where": [(round_, list(part.groupby("submitter").size().items()))
                      for round_, part in post.groupby("round")]}


def _checks(data: Data) -> dict:
    got = tally(data.rejected.get("outcome", []), (REJECTED, SET_ASIDE))
    return {"inputs": f"{got[REJECTED]} {REJECTED.label} and {got[SET_ASIDE]} {SET_ASIDE.label} input rows",
            "validation": None if data.validation is None else validation_summary(data.validation)}


def _earlier_rounds(data: Data, rounds: list[str]) -> list[dict]:
    """The rounds older than the first screen's tables: their partners and the deviating ones."""
    agr, out = data.agreement, []
    for round_ in rounds:
        ours = agr[(agr["round"] == round_) & agr[PARTNER]]
        out.append({"round": round_, "ident": anchor("round", round_), "partners": ours["submitter"].nunique(),
                    "deviating": sorted(set(ours[ours["verdict"] == DEVIATES]["submitter"]))})
    return out


def view(data: Data, rounds: list[str]) -> dict:
    return {"rounds": partner_rounds(data, rounds[:FIRST_SCREEN_ROUNDS]),
            "earlier": _earlier_rounds(data, rounds[FIRST_SCREEN_ROUNDS:]), "claims": _claims(data),
            "claims_missing": data.why.get("claims", ""), "unverified": _unverified(data), "checks": _checks(data)}
