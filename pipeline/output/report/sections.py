"""The details below the first screen, as values for ``round.html.j2``: per
round, the partner results (verified and post-deadline apart; the ones not
compared folded into one ``<details>`` per reason: no script needed),
scaling, claims, rejected inputs, versions, withdrawals; then the partners'
record across rounds."""

from __future__ import annotations

import pandas as pd

from pipeline.analyses.superseded import REPLACED, WITHDRAWN
from pipeline.core.model import AGREE, AGREEMENT_VERDICTS, DEVIATES, NO_REFERENCE, POST_DEADLINE, VERIFIED
from pipeline.core.vocabulary import label as word, tally
from pipeline.output.figures import number, signed_pct
from pipeline.output.report import charts
from pipeline.output.report.claims import claims_view
from pipeline.output.report.html import Row, anchor, text
from pipeline.output.report.load import ACROSS_ROUNDS, NO_ROUND, PARTNER, Data, claim_round, is_unverified, round_of

DEVIATION_COLUMNS = ("round", "partner", "model", "scenario", "system", "case", "status", "label",
                     "deviation_pct", "tolerance", "verdict")
BY_SYSTEM = ["submitter", "system", "model", "scenario"]


def deviation_frame(agreement: pd.DataFrame) -> pd.DataFrame:
    """One row per compared partner result: the data of `dvc plots show`."""
    frame = agreement[agreement["deviation_pct"].notna()].copy()
    frame["deviation_pct"] = frame["deviation_pct"].astype(float)
    frame["tolerance"] = frame["tolerance_pct"].astype(float)
    frame["partner"] = frame["submitter"]
    base = frame["round"] + " · " + frame["submitter"] + " · " + frame["model"] + " · " + frame["scenario"]
    dup = base.duplicated(keep=False)
    frame["case"] = base.where(~dup, base + " · " + frame["system"])
    frame = frame.sort_values(["round", "partner", "model", "scenario", "system"], kind="stable")
    return frame[list(DEVIATION_COLUMNS)].reset_index(drop=True)


def tolerance_pct(agreement: pd.DataFrame, default: float) -> float:
    """The tolerance the agreement table was judged with, else ``default``."""
    return next((v for v in map(number, agreement.get("tolerance_pct", [])) if v is not None), default)


# ---- partner results ---------------------------------------------------------------------

def _sorted(rows: pd.DataFrame) -> list[dict]:
    return rows.sort_values(BY_SYSTEM, kind="stable").to_dict("records")


def _compared(rows: pd.DataFrame, unv: bool) -> list[Row]:
    """The compared partner results, the deviating first, then by |deviation|;
    printed: the deviating ones (every one when unverified)."""
    records = rows.to_dict("records")
    records.sort(key=lambda r: (r.get("verdict") != DEVIATES, -abs(number(r.get("deviation_pct")) or 0.0),
                                *(text(r.get(k)) for k in BY_SYSTEM)))
    return [Row(r, "bad" if r.get("verdict") == DEVIATES else "", unv or r.get("verdict") == DEVIATES)
            for r in records]


def _differences(records: list[dict]) -> list[dict]:
    """One item per partner system and what differs (a system's rows share it)."""
    by: dict[tuple, list[dict]] = {}
    for r in records:
        by.setdefault(tuple(text(r.get(k)) for k in ("submitter", "system", "reference_system", "differences")),
                      []).append(r)
    return [{"submitter": submitter, "system": system, "reference": reference, "found": found,
             "cases": ", ".join(f"{text(r.get('model'))} {text(r.get('scenario'))} "
                                f"{signed_pct(r.get('deviation_pct'))}" for r in rows)}
            for (submitter, system, reference, found), rows in by.items()]


def _not_compared(rows: pd.DataFrame) -> list[dict]:
    """Rows not compared with the reference, one folded group per verdict and reason."""
    groups = [(-len(part), str(v), str(reason), part)
              for (v, reason), part in rows.fillna({"reason": ""}).groupby(["verdict", "reason"], sort=False)]
    out = []
    for _, v, reason, part in sorted(groups, key=lambda g: g[:3]):
        names = sorted(set(part["submitter"].map(text)))
        # no reference at all: why there is no context comparison either (compare's context_note)
        notes = sorted({text(n) for n in part.get("context_note", pd.Series(dtype=object)) if text(n)}) \
            if v == NO_REFERENCE else []
        out.append({"verdict": v, "reason": reason, "rows": [Row(r) for r in _sorted(part)],
                    "names": ", ".join(names[:6]) + (f", +{len(names) - 6}" if len(names) > 6 else ""),
                    "notes": notes})
    return out


def _status_part(data: Data, round_: str, unv: bool, tolerance: float) -> dict:
    agreement = data.agreement[(data.agreement["round"] == round_)
                               & ((data.agreement["status"] != VERIFIED) == unv)]
    results = data.results[(data.results["round"] == round_) & ((data.results["status"] != VERIFIED) == unv)]
    kind = POST_DEADLINE if unv else VERIFIED
    partner = agreement[agreement[PARTNER]]
    compared = partner[partner["verdict"].isin([AGREE, DEVIATES])]
    other = agreement[~agreement[PARTNER]]
    not_compared = partner[~partner["verdict"].isin([AGREE, DEVIATES])]
    in_context = (not_compared["verdict"] == NO_REFERENCE) & not_compared.get(
        "context_system", pd.Series(None, index=not_compared.index)).notna()
    records = _sorted(compared)
    by_verdict = ", ".join(f"{n} {word(v)}" for v, n in sorted(tally(not_compared["verdict"],
                                                                    AGREEMENT_VERDICTS).items()) if n)
    points = [{"partner": r["submitter"], "case": f"{r['model']} {r['scenario']} ({r['system']})",
               "deviation_pct": r["deviation_pct"], "verdict": r["verdict"]} for r in compared.to_dict("records")]
    return {
        "unv": unv, "kind": kind, "ident": anchor(round_, kind), "round": round_, "results": len(results),
        "partner": len(partner), "partners": partner["submitter"].nunique(), "vendor": data.reference_vendor,
        "compared": len(compared), "deviate": int((compared["verdict"] == DEVIATES).sum()),
        "other": len(other), "other_submitters": other["submitter"].nunique(),
        "strip": charts.deviation_strip(points, tolerance,
                                        f"{round_} {kind}: deviation of each partner result from the reference"),
        "compared_rows": _compared(compared, unv),
        "deviating": _differences([r for r in records if r.get("verdict") == DEVIATES]),
        "agreeing": _differences([r for r in records if r.get("verdict") != DEVIATES and text(r.get("differences"))]),
        "context": [Row(dict(r, mine=(number(r.get("value")) or 0.0) / (number(r.get("total_accelerators")) or 1.0),
                             note=text(r.get("context_note")).removeprefix("context only, not a verdict: ")),
                        printed=False) for r in _sorted(not_compared[in_context])],
        "not_compared": len(not_compared[~in_context]),
        "no_reference": int(((not_compared["verdict"] == NO_REFERENCE) & ~in_context).sum()),
        "groups": _not_compared(not_compared[~in_context]), "other_groups": _not_compared(other),
        "not_compared_all": len(not_compared), "by_verdict": by_verdict,
        "every": [Row(r) for r in results.sort_values(BY_SYSTEM).to_dict("records")] if unv else [],
    }


# ---- scaling -----------------------------------------------------------------------------

def _scaling(data: Data, round_: str) -> dict:
    if data.scaling is None:
        return {"missing": data.why.get("scaling", ""), "rows": []}
    rows = [r for r in data.scaling if round_of(r) == round_]
    # the largest clusters first
    rows.sort(key=lambda r: (-(number(r.get("total_accelerators")) or 0), -(number(r.get("nodes")) or 0),
                             *(str(r.get(k)) for k in BY_SYSTEM)))
    shown = [dict(r, unv=is_unverified(r), no_reference=r.get("verdict") == NO_REFERENCE,
                  refs=[x for x in r.get("references") or [] if isinstance(x, dict)]) for r in rows]
    return {"missing": None, "rows": [Row(r) for r in shown], "unv": any(r["unv"] for r in shown),
            "bars": charts.scaling_bars(rows)}


# ---- inputs of the round -----------------------------------------------------------------

def _rejected(data: Data, round_: str) -> list[Row]:
    if not len(data.rejected):
        return []
    rows = data.rejected[data.rejected["source"].map(lambda s: round_of({"source": s})) == round_]
    return [Row(r) for r in rows.to_dict("records")]


def _versions(data: Data, round_: str) -> list[Row]:
    versions = data.versions[data.versions["round"] == round_].to_dict("records")
    out = []
    for r in versions:
        used = str(r.get("used")).lower() == "true"
        by = ", ".join(f"v{o['version']}" for o in versions if o["submitter"] == r["submitter"]
                       and o.get("status") == r.get("status") and str(o.get("used")).lower() == "true")
        out.append(Row(dict(r, used="used" if used else ("superseded" if by else "not used"), by="" if used else by,
                            supersedes=text(r.get("supersedes")).split(".")[0]), printed=not used))
    return out


def _superseded(data: Data, round_: str) -> dict:
    """The round's withdrawals and superseded versions' results, with the
    verdicts the superseded stage judged (never decided again here) and what
    became of each; printed only when a result left the current view."""
    table = data.superseded
    rows = [] if table is None or not len(table) else table[table["round"] == round_].sort_values(
        ["submitter", "version", "source"], kind="stable").to_dict("records")
    return {"missing": data.why.get("superseded", "") if table is None else None,
            "ident": round_.replace(".", "-"), "printed": any(r.get("fate") != REPLACED for r in rows),
            "withdrawn": [Row(r, "bad" if r.get("verdict") == DEVIATES else "") for r in rows
                          if r.get("fate") == WITHDRAWN],
            "every": [Row(r, "bad" if r.get("verdict") == DEVIATES else "", r.get("fate") != REPLACED) for r in rows]}


def round_view(data: Data, round_: str, tolerance: float) -> dict:
    claims = None if data.claims is None else [c for c in data.claims if claim_round(c, data) == round_]
    title = "Rows whose data states no round" if round_ == NO_ROUND else f"Round {round_}"
    return {"round": round_, "title": title, "ident": anchor(round_),
            "parts": [_status_part(data, round_, False, tolerance), _status_part(data, round_, True, tolerance)],
            "claims": claims_view(claims, data.superseded) if claims is not None else None,
            "claims_missing": data.why.get("claims", ""),
            "scaling": _scaling(data, round_), "rejected": _rejected(data, round_),
            "versions": _versions(data, round_), "superseded": _superseded(data, round_)}


# ---- the partners' record across rounds ------------------------------------------------

def record_view(data: Data, tolerance: float) -> dict:
    """Per partner and accelerator generation, the verified agreement in every round, and its chart."""
    from pipeline.analyses.record import ALL_ROUNDS, record

    rows = [dict(r) for r in record(data.agreement).rows] if len(data.agreement) else []
    claims = [c for c in data.claims or [] if claim_round(c, data) == ACROSS_ROUNDS]
    # on screen, in audit/record.json and `mlrepro record`
    return {"rows": [Row(r, "bad" if r["deviates"] else "", False) for r in rows],
            "bars": charts.record_bars([r for r in rows if r["round"] != ALL_ROUNDS and r["compared"]]),
            "tolerance": tolerance, "claims": claims_view(claims) if claims else None}
