"""Claims: the claims of a ledger recomputed from the results table, one row
each; a problem is a finding naming the claim id and its line in the ledger.

Kinds: ``ratio`` (the subject against a comparator), ``scaling``,
``reproducibility`` and ``record`` (partner results within ±claimed_pct of
the reference, by :func:`pipeline.analyses.compare.compare`). The comparator
closest to the claim (ties to the stronger) decides ``holds``; a claim that
holds but not against the strongest is ``cherry_picked``.

Claims are judged on the data they were made on: a claim about verified
results is computed on the verified results only, so its verdict never moves
when post-deadline results are added; what they would change is written
beside it as ``including_post_deadline``, labelled unverified, never a verdict.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core.rules import Rules, is_latency
from pipeline.analyses import scaling
from pipeline.analyses.compare import compare
from pipeline.analyses.record import ALL_ROUNDS, record as record_of
from pipeline.analyses.ledger import INT_KEYS, Claim, Ledger
from pipeline.core.findings import Finding, Report, located
from pipeline.core.formulas import PCT_DIGITS, ratio, share_pct, within
from pipeline.core.model import (AGREE, AMBIGUOUS, CHERRY_PICKED, COMPARISON_DISCLAIMER,
                                 DEFAULT_REFERENCE_SUBMITTER, DEFAULT_REFERENCE_VENDOR, DEVIATES, DOES_NOT_HOLD,
                                 HOLDS, INVALID, LABEL_INCLUDING_POST_DEADLINE, LABEL_UNVERIFIED,
                                 NO_REFERENCE, POST_DEADLINE, UNMATCHED, UNVERIFIED_FOOTNOTE, VERIFIED,
                                 RESULT_KEY, Source, footnote, label, result_key, typed_rows)
from pipeline.core.vocabulary import Severity, tally

# differences the MLCommons messaging guidelines say a comparison must state
STATED = (("round", "round (version)"), ("division", "division"),
          ("availability", "category (availability)"), ("status", "verified/unverified status"),
          ("scenario", "scenario"), ("total_accelerators", "accelerator count"), ("model", "model"))


# ---- recomputing claims ---------------------------------------------------------------

class Results:
    """The results table as the claims read it, with what is built once for a whole ledger."""

    def __init__(self, rules: Rules, frame: pd.DataFrame):
        self.rules, self.frame = rules, frame
        self.late = (frame["status"].astype("str") != VERIFIED).to_numpy(dtype=bool)
        self.single_nodes = scaling.single_node_index(rules, frame)
        self._agreements: dict[tuple, object] = {}

    def agreement(self, tolerance_pct: float, reference_submitter: str, reference_vendor: str):
        """compare's report of the whole table, shared by the claims of one band
        (a row's verdict depends on the row, the references and the tolerance only)."""
        key = (tolerance_pct, reference_submitter, reference_vendor)
        if key not in self._agreements:
            self._agreements[key] = compare(self.rules, self.frame, *key)
        return self._agreements[key]

    def mask(self, selector: dict) -> np.ndarray:
        mask = np.ones(len(self.frame), dtype=bool)
        for key, value in selector.items():
            column = self.frame[key]
            hit = (column == value) if key in INT_KEYS else (column.astype("str") == str(value))
            mask &= hit.to_numpy(dtype=bool)
        return mask

    def rows(self, selector: dict) -> list[dict]:
        return self.frame[self.mask(selector)].to_dict("records")


def _describe(row: dict) -> str:
    return (f"{row['round']} {row['submitter']} {row['system']} {row['model']} {row['scenario']} "
            f"{row['value']:g} {row['units']} ({row['status']}, {row['source']})")


def _brief(row: dict) -> dict:
    return {k: row[k] for k in ("round", "submitter", "system", "value", "units", "status", "source", *RESULT_KEY)}


def check_claims(rules: Rules, ledger: Ledger, results: pd.DataFrame, reference_submitter: str = DEFAULT_REFERENCE_SUBMITTER,
                 reference_vendor: str = DEFAULT_REFERENCE_VENDOR) -> Report:
    """Every claim of the ledger against RESULTS; the reference submitter and
    vendor (``compare.*`` of params.yaml) decide which results are partner
    results and what they are compared with."""
    findings = list(ledger.findings)
    rows = [{**_row(cid, None, INVALID, "the claim's ledger entry is invalid (see findings)"), "line": line,
             "including_post_deadline": None} for cid, line in ledger.invalid]
    every = Results(rules, results)
    late = bool(every.late.any())
    official = Results(rules, results[~every.late]) if late else every   # the results verified claims were made on
    refs = (reference_submitter, reference_vendor)
    for claim in ledger.claims:
        unverified = about_unverified(claim)
        row, found = KIND_CHECKS[claim.kind](claim, every if unverified else official, ledger, refs)
        row["including_post_deadline"] = (_including_post_deadline(claim, row, official, every, ledger, refs)
                                          if late and not unverified else None)
        if "scope" not in row:   # a record claim states its own (the generations it compared)
            row["scope"] = _scope(claim, every if unverified else official, ledger)
        rows.append(row)
        findings.extend(found)
    rows = typed_rows("ClaimRow", sorted(rows, key=lambda r: r["line"] or 0))
    given = [r["verdict"] for r in rows]   # a claim's, or a scaling claim's scaling verdict (not-applicable)
    return Report(rows, findings, {"claims": len(rows), **tally(given, sorted(set(given))),
                                   "unverified": sum(r["label"] == LABEL_UNVERIFIED for r in rows)})


def _scope(claim: Claim, results: Results, ledger: Ledger) -> dict:
    """What a claim is about, in the table's words: of the results its subject matches."""
    selector = _selector(claim, ledger)
    rows = results.rows(selector)

    def values(key: str) -> list[str]:
        return sorted({str(r[key]) for r in rows})

    against, rounds = (claim.comparator or {}).get("accelerator"), values("round")
    return {"round": selector.get("round") or (rounds[0] if len(rounds) == 1 else None),   # the data's, when one
            "models": values("model"), "scenarios": values("scenario"), "accelerators": values("accelerator"),
            "nodes": selector.get("nodes"), "against": str(against) if against else None}


def about_unverified(claim: Claim) -> bool:
    """Whether a selector of the claim names a status other than verified."""
    return any((s or {}).get("status", VERIFIED) != VERIFIED for s in (claim.subject, claim.comparator))


def _row(cid: str, claim: Claim | None, verdict: str, reason: str = "") -> dict:
    stated = {k: getattr(claim, k, None) for k in ("kind", "text", "line", "measure", "claimed", "tolerance")}
    return {"id": cid, **stated, "text": stated["text"] or "", "computed": None, "holds": None, "verdict": verdict,
            "reason": reason, **dict.fromkeys(("subject", "comparator", "best_comparator", "computed_vs_best",
                                               "range_min", "range_max")),
            "eligible_comparators": 0, "cherry_picked": None, "verified": None, "label": "", "footnote": "",
            "disclaimer": "", "notes": []}


def _at(ledger: Ledger, claim: Claim, key: str) -> Source:
    return Source(ledger.path, claim.lines.get(key) or claim.line, key=f"claims.{claim.id}.{key}")


def _selector(claim: Claim, ledger: Ledger) -> dict:
    return {"round": ledger.round, **claim.subject} if ledger.round else dict(claim.subject)


def _subject(claim: Claim, results: Results, ledger: Ledger):
    selector = _selector(claim, ledger)
    rows = results.rows(selector)
    if len(rows) == 1:
        return rows[0], None, None
    verdict = UNMATCHED if not rows else AMBIGUOUS
    code = "selector-unmatched" if not rows else "selector-ambiguous"
    found = located(code, _at(ledger, claim, "subject"), "exactly one result",
                    "; ".join(_describe(r) for r in rows[:10]) or "no result",
                    f"claim {claim.id}: the subject {selector} matches {len(rows)} results")
    row = _row(claim.id, claim, verdict, found.message)
    row["candidates"] = [_describe(r) for r in rows]
    return None, row, found


def _label(row: dict, used: list[dict]) -> dict:
    statuses = {u["status"] for u in used}
    status = VERIFIED if statuses == {VERIFIED} else POST_DEADLINE
    row.update(verified=status == VERIFIED, label=label(status), footnote=footnote(status),
               disclaimer=COMPARISON_DISCLAIMER if len(statuses) > 1 else "")
    return row


def _differences(subject: dict, other: dict, what: str) -> list[str]:
    return [f"{name} differs from {what}: {subject[key]} against {other[key]}"
            for key, name in STATED if str(subject[key]) != str(other[key])]


def eligible_comparators(claim: Claim, subject: dict, results: Results, default_round,
                         any_status: bool = False) -> tuple:
    """(eligible rows, effective selector) of a ratio claim: verified only unless
    the subject is post-deadline, the selector names a status or ANY_STATUS;
    never power-capped, never the subject."""
    selector = _comparator_selector(claim, subject, default_round)
    pool = [r for r in results.rows(selector)
            if (result_key(r), r["system"]) != (result_key(subject), subject["system"])]
    if "status" not in claim.comparator and subject["status"] == VERIFIED and not any_status:
        pool = [r for r in pool if r["status"] == VERIFIED]
    capped = results.rules.power_capped
    return [r for r in pool if not (capped(r["system"]) or capped(r["system_name"]))], selector


def _comparator_selector(claim: Claim, subject: dict, default_round) -> dict:
    """The comparator selector over its defaults: the ledger's round, the subject's
    model, scenario and units, closed division, one node."""
    return {"round": default_round or subject["round"], "model": subject["model"], "scenario": subject["scenario"],
            "units": subject["units"], "division": "closed", "nodes": 1, **claim.comparator}


def _ratio(claim, results, ledger, refs):
    subject, row, found = _subject(claim, results, ledger)
    if subject is None:
        return row, [found]
    eligible, selector = eligible_comparators(claim, subject, results, ledger.round)
    if not eligible:
        late = " (post-deadline results are not eligible against a verified subject)"
        f = located("selector-unmatched", _at(ledger, claim, "comparator"),
                    "at least one eligible comparator", "none",
                    f"claim {claim.id}: no eligible result matches the comparator {selector}"
                    + (late if subject["status"] == VERIFIED else ""))
        row = _row(claim.id, claim, UNMATCHED, f.message)
        row["subject"] = _brief(subject)
        return _label(row, [subject]), [f]
    row = _row(claim.id, claim, UNMATCHED)
    row.update(_ratio_figures(claim, subject, eligible))
    _label(row, [subject, row.pop("_chosen"), row.pop("_best")])
    return row, _verdict_findings(row, claim, ledger)


def _ratio_figures(claim: Claim, subject: dict, eligible: list[dict]) -> dict:
    """The verdict and figures of a ratio claim (``_chosen``, ``_best``: the rows, for the label)."""
    latency = is_latency(str(subject["units"]))
    scale = 100.0 if claim.measure == "pct" else 1.0

    def computed(c):
        return ratio(subject["value"], c["value"], lower_is_better=latency) * scale

    strongest = sorted(eligible, key=lambda c: ((1 if latency else -1) * c["value"], str(c["system"])))
    best = strongest[0]
    rank = {id(c): i for i, c in enumerate(strongest)}
    chosen = min(eligible, key=lambda c: (abs(computed(c) - claim.claimed), rank[id(c)]))
    values = [computed(c) for c in eligible]
    holds = within(computed(chosen) - claim.claimed, claim.tolerance)
    holds_best = within(computed(best) - claim.claimed, claim.tolerance)
    cherry = holds and not holds_best
    notes = _differences(subject, chosen, "the comparator")
    if latency:
        notes.append(f"latency metric ({subject['units']}): ratio = comparator / subject, "
                     "above 100% means the subject is faster")
    if best is not chosen:
        notes.append(f"the strongest eligible comparator is {best['submitter']} {best['system']} "
                     f"({best['value']:g}); against it the claim computes {computed(best):.6g}")
    return {"verdict": CHERRY_PICKED if cherry else (HOLDS if holds else DOES_NOT_HOLD),
            "computed": round(computed(chosen), PCT_DIGITS), "holds": holds, "subject": _brief(subject),
            "comparator": _brief(chosen), "best_comparator": _brief(best),
            "computed_vs_best": round(computed(best), PCT_DIGITS), "range_min": round(min(values), PCT_DIGITS),
            "range_max": round(max(values), PCT_DIGITS), "eligible_comparators": len(eligible), "cherry_picked": cherry,
            "notes": notes, "_chosen": chosen, "_best": best}


def _verdict_findings(row: dict, claim: Claim, ledger: Ledger) -> list[Finding]:
    unit = "%" if claim.measure == "pct" else "x"
    expected = f"{claim.claimed:g}{unit} ± {claim.tolerance:g}"
    if row["verdict"] == DOES_NOT_HOLD:
        key = "claimed_pct" if claim.measure == "pct" else "claimed_ratio"
        return [located("claim-not-supported", _at(ledger, claim, key),
                        expected, f"{row['computed']:.6g}{unit}",
                        f"claim {claim.id}: the data does not support the claimed figure")]
    if row["verdict"] == CHERRY_PICKED:
        return [located("claim-cherry-picked", _at(ledger, claim, "comparator"),
                        f"{expected} against the strongest comparator", f"{row['computed_vs_best']:.6g}{unit}",
                        f"claim {claim.id}: holds only against a comparator that is not the strongest",
                        severity=Severity.WARNING)]
    return []


def _scaling(claim, results, ledger, refs):
    subject, row, found = _subject(claim, results, ledger)
    if subject is None:
        return row, [found]
    scaled = scaling.scale_row(subject, results.single_nodes, refs[0])
    row = _row(claim.id, claim, scaled["verdict"], scaled["reason"])
    row.update(_scaling_figures(claim, subject, scaled))
    _label(row, [subject] + scaled["references"])
    if scaled["efficiency_pct"] is None:
        return row, [located("claim-no-reference", _at(ledger, claim, "subject"),
                             "a computable scaling efficiency", scaled["verdict"],
                             f"claim {claim.id}: {scaled['reason']}", severity=Severity.WARNING)]
    return row, _verdict_findings(row, claim, ledger)


def _scaling_figures(claim: Claim, subject: dict, scaled: dict) -> dict:
    refs = scaled["references"]
    if scaled["efficiency_pct"] is None:
        notes = [scaled["reason"]]
        if scaled["verdict"] == NO_REFERENCE:
            notes += [f"missing: {', '.join(scaled['missing'])}"]
        return {"subject": _brief(subject), "notes": notes}
    computed = scaled["efficiency_pct"]
    holds = within(computed - claim.claimed, claim.tolerance)
    notes = [f"efficiency = {subject['value']:g} / expected {scaled['expected']:g} "
             f"(linear from {scaled['reference_rule']})"]
    for ref in refs:
        notes += [f"{n} ({ref['accelerator']} reference {ref['system']})"
                  for n in _differences(subject, {**subject, **ref, "total_accelerators": ref["accelerators"]},
                                        "the single-node reference")]
    return {"verdict": HOLDS if holds else DOES_NOT_HOLD, "reason": "", "computed": computed, "holds": holds,
            "subject": _brief(subject), "cherry_picked": False,
            "comparator": {"submitter": ",".join(dict.fromkeys(r["submitter"] for r in refs)),
                           "system": ",".join(dict.fromkeys(r["system"] for r in refs)),
                           "value": scaled["expected"], "references": refs},
            "range_min": computed, "range_max": computed, "eligible_comparators": len(refs), "notes": notes}


def _agreement_of(results: Results, mask: np.ndarray, claimed: float, refs) -> tuple:
    """compare's report with the claim's band as tolerance, and the positions in
    it of the partner rows ``mask`` selects (its rows are the partner rows, in order)."""
    partner = results.frame["submitter"].to_numpy(dtype=object) != refs[0]
    positions = np.searchsorted(np.flatnonzero(partner), np.flatnonzero(mask & partner))
    return results.agreement(claimed, *refs), positions


def _compared(results: Results, mask: np.ndarray, claimed: float, refs) -> list:
    agreement, positions = _agreement_of(results, mask, claimed, refs)
    return agreement.rows_at(positions)


def _none_compared(claim: Claim, ledger: Ledger) -> Finding:
    return located("claim-no-reference", _at(ledger, claim, "subject"), "partner results with a reference", "none",
                   f"claim {claim.id}: no partner result could be compared", severity=Severity.WARNING)


def _reproducibility(claim, results, ledger, refs):
    reference_submitter, _ = refs
    selector = _selector(claim, ledger)
    mask = results.mask(selector)
    partners = results.frame[mask]
    if (partners["submitter"] == reference_submitter).all():
        f = located("selector-unmatched", _at(ledger, claim, "subject"),
                    f"at least one partner (not {reference_submitter}) result", "none",
                    f"claim {claim.id}: the subject {selector} matches no partner result")
        return _row(claim.id, claim, UNMATCHED, f.message), [f]
    rows = _compared(results, mask, claim.claimed, refs)
    row = _row(claim.id, claim, NO_REFERENCE)
    row.update(_reproducibility_figures(claim, rows, reference_submitter))
    if row["verdict"] == NO_REFERENCE:
        _label(row, [{"status": r["status"]} for r in rows])
        return row, [_none_compared(claim, ledger)]
    _label(row, [{"status": r["status"]} for r in rows if r["verdict"] in (AGREE, DEVIATES)])
    return row, _band_findings(row, claim, ledger, "", len(row["outside"]), "partner results")


def _reproducibility_figures(claim: Claim, rows: list, reference_submitter: str) -> dict:
    compared = [r for r in rows if r["verdict"] in (AGREE, DEVIATES)]
    others = [f"{r['submitter']} {r['system']} {r['model']} {r['scenario']}: {r['verdict']} ({r['reason']})"
              for r in rows if r["verdict"] not in (AGREE, DEVIATES)]
    if not compared:
        return {"verdict": NO_REFERENCE, "reason": "no partner result could be compared", "notes": others,
                "measure": "max_abs_deviation_pct"}
    outside = [{k: r[k] for k in ("submitter", "system", "model", "scenario", "value", "reference_system",
                                  "reference_value", "deviation_pct", "label")}
               for r in compared if r["verdict"] == DEVIATES]
    devs = [r["deviation_pct"] for r in compared]
    inside = len(compared) - len(outside)
    notes = ([f"{inside} of {len(compared)} partner results within ±{claim.claimed:g}% of {reference_submitter}"]
             + [f"outside: {o['submitter']} {o['system']} {o['model']} {o['scenario']} {o['value']:g} "
                f"against {o['reference_value']:g} ({o['reference_system']}): {o['deviation_pct']:+.2f}%"
                for o in outside]
             + [f"not compared: {o}" for o in others])
    return {**_band(reference_submitter, round(max(abs(d) for d in devs), PCT_DIGITS), len(compared), inside,
                    outside, len(others)),
            "range_min": round(min(devs), PCT_DIGITS), "range_max": round(max(devs), PCT_DIGITS), "notes": notes}


def _band_findings(row: dict, claim: Claim, ledger: Ledger, scope: str, outside: int, whose: str) -> list[Finding]:
    """Nothing when a band claim holds; else its ``claim-not-supported``."""
    return [] if row["holds"] else [located(
        "claim-not-supported", _at(ledger, claim, "claimed_pct"), f"every partner result within ±{claim.claimed:g}%"
        f"{scope}", f"{outside} outside (max |deviation| {row['computed']:.4g}%)",
        f"claim {claim.id}: {whose} outside the claimed band")]


def _band(reference_submitter: str, computed: float, compared: int, inside: int, outside: list,
          not_compared: int) -> dict:
    holds = not outside
    return {"verdict": HOLDS if holds else DOES_NOT_HOLD, "computed": computed, "holds": holds,
            "cherry_picked": False, "comparator": {"submitter": reference_submitter, "system": None, "value": None},
            "eligible_comparators": compared, "measure": "max_abs_deviation_pct", "compared": compared,
            "within": inside, "share_within_pct": share_pct(inside, compared), "outside": outside,
            "not_compared": not_compared}


def _record(claim, results, ledger, refs):
    """The partners' record across rounds and generations (verified results only)
    against the claimed band; the ledger's default round is not applied."""
    reference_submitter, _ = refs
    agreement, positions = _agreement_of(results, results.mask(dict(claim.subject)), claim.claimed, refs)
    table = agreement.frame().iloc[positions]
    overall = [r for r in record_of(table, claim.claimed).rows if r["round"] == ALL_ROUNDS]
    row = _row(claim.id, claim, NO_REFERENCE)
    compared = sum(r["compared"] for r in overall)
    notes = [f"{r['submitter']} {r['accelerator']}: " + (
        f"{r['agree']} of {r['compared']} within ±{claim.claimed:g}%, worst {r['worst_deviation_pct']:+.2f}% "
        f"({r['worst_round']} {r['worst_model']} {r['worst_scenario']})" if r["compared"] else
        f"none compared ({r['no_reference']} without a reference)") for r in overall]
    generations = sorted({r["accelerator"] for r in overall if r["compared"]})
    if not compared:
        row.update(reason="no verified partner result could be compared", notes=notes,
                   measure="max_abs_deviation_pct", scope=_every_round([]))
        return row, [_none_compared(claim, ledger)]
    worst = max((r for r in overall if r["compared"]), key=lambda r: abs(r["worst_deviation_pct"]))
    inside = sum(r["agree"] for r in overall)
    outside = [{"submitter": r["submitter"], "accelerator": r["accelerator"], "deviates": r["deviates"],
                "worst_deviation_pct": r["worst_deviation_pct"]} for r in overall if r["deviates"]]
    row.update(_band(reference_submitter, round(abs(worst["worst_deviation_pct"]), PCT_DIGITS), compared, inside,
                     outside, sum(r["no_reference"] for r in overall)),
               notes=[f"generations compared: {', '.join(generations)}", *notes], scope=_every_round(generations))
    _label(row, [{"status": VERIFIED}])
    return row, _band_findings(row, claim, ledger, " in every round and generation", compared - inside,
                               "partners' record")


def _every_round(accelerators: list[str]) -> dict:
    return {"round": None, "models": [], "scenarios": ["every round"], "accelerators": accelerators,
            "nodes": None, "against": None}


KIND_CHECKS = {"ratio": _ratio, "scaling": _scaling, "reproducibility": _reproducibility, "record": _record}


# ---- the figure including post-deadline results ----------------------------------------


def _including_post_deadline(claim: Claim, row: dict, official: Results, every: Results, ledger: Ledger,
                             refs) -> dict | None:
    """The claim computed with the post-deadline results too, when one bears on it."""
    late = every.late
    if claim.kind == "record":
        return None   # the record is of verified results only: a post-deadline result has no figure in it
    if claim.kind == "reproducibility":
        mask = every.mask(_selector(claim, ledger))
        if not (mask & late & (every.frame["submitter"].to_numpy(dtype=object) != refs[0])).any():
            return None   # no post-deadline partner result: the figure would be the claim's own
        rows = _compared(every, mask, claim.claimed, refs)
        figures = _reproducibility_figures(claim, rows, refs[0])
        added = [{k: r[k] for k in ("submitter", "system", "model", "scenario", "value", "verdict", "source")}
                 for r in rows if r["status"] != VERIFIED]
        return _late_figure(figures, added)
    subject = _late_subject(claim, row, official, every, ledger)
    if subject is None:
        return None
    others = (_comparator_selector(claim, subject, ledger.round) if claim.kind == "ratio" else
              {**{k: subject[k] for k in scaling.MATCH}, "nodes": 1})   # single-node references
    if subject["status"] == VERIFIED and not (every.mask(others) & late).any():
        return None
    if claim.kind == "ratio":
        eligible, _ = eligible_comparators(claim, subject, every, ledger.round, any_status=True)
        added = [_brief(r) for r in [subject, *eligible] if r["status"] != VERIFIED]
        if not eligible or not added:
            return None
        figures = _ratio_figures(claim, subject, eligible)
    else:
        scaled = scaling.scale_row(subject, every.single_nodes, refs[0])
        added = [r for r in [_brief(subject), *scaled["references"]] if r["status"] != VERIFIED]
        if not added:
            return None
        figures = {"verdict": scaled["verdict"], **_scaling_figures(claim, subject, scaled)}
    return _late_figure(figures, added)


def _late_figure(figures: dict, added: list[dict]) -> dict:
    keep = ("verdict", "measure", "computed", "holds", "comparator", "best_comparator", "computed_vs_best", "range_min",
            "range_max", "eligible_comparators", "cherry_picked", "compared", "within", "share_within_pct",
            "outside", "not_compared", "notes")
    return {"label": LABEL_INCLUDING_POST_DEADLINE, "post_deadline_results": added,
            **{k: figures[k] for k in keep if k in figures},
            "footnote": UNVERIFIED_FOOTNOTE, "disclaimer": COMPARISON_DISCLAIMER}


def _late_subject(claim: Claim, row: dict, official: Results, every: Results, ledger: Ledger) -> dict | None:
    """The claim's verified subject, else the one result among all its selector matches."""
    selector = _selector(claim, ledger)
    if row["subject"] is not None:
        key = result_key(row["subject"]), row["subject"]["system"]
        return next((r for r in official.rows(selector) if (result_key(r), r["system"]) == key), None)
    if not (every.mask(selector) & every.late).any():
        return None
    rows = every.rows(selector)
    return rows[0] if len(rows) == 1 else None
