"""The details below the first screen: per round, the partner results
(verified and post-deadline apart: the compared ones, the deviating first;
the rest folded into one ``<details>`` per reason, so no script is needed to
unfold them), scaling and claims; the rejected inputs and the submission
versions."""

from __future__ import annotations

from html import escape

import pandas as pd

from pipeline.core.model import AGREE, AGREEMENT_VERDICTS, DEVIATES, NO_REFERENCE, POST_DEADLINE, VERIFIED
from pipeline.core.vocabulary import label as word, tally
from pipeline.output.report.charts import deviation_strip, record_bars, scaling_bars
from pipeline.output.report.claims import claims_table
from pipeline.output.figures import count, number, pct, quantity, readable, signed_pct
from pipeline.output.report.html import Cell, Table, footnote, text, unverified, verdict, wrap
from pipeline.output.report.load import (ACROSS_ROUNDS, NO_ROUND, PARTNER, Data, claim_round, is_unverified,
                                         round_of)
from pipeline.output.report import superseded

DEVIATION_COLUMNS = ("round", "partner", "model", "scenario", "system", "case", "status", "label",
                     "deviation_pct", "tolerance", "verdict")


def anchor(*parts: str) -> str:
    return "-".join("".join(c if c.isalnum() else "-" for c in p) for p in parts)


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


def _nw(value) -> Cell:
    """A short identifier (model, scenario) kept on one line."""
    return Cell(escape(text(value)), cls="nw")


def round_title(round_: str) -> str:
    return "Rows whose data states no round" if round_ == NO_ROUND else f"Round {escape(round_)}"


def tolerance_pct(agreement: pd.DataFrame) -> float:
    values = [v for v in (number(t) for t in agreement.get("tolerance_pct", [])) if v is not None]
    return values[0] if values else 4.0


# ---- partner results ---------------------------------------------------------------------

def _below(figure_html: str) -> str:
    """An unverified figure with its label on the next line (numbers stay narrow)."""
    return unverified(figure_html, below=True)


def _value(r: dict, key: str, mark, units_below: bool = False) -> Cell:
    """A measured value with its units (``units_below``: on the next line, for a
    table of many columns), marked when unverified."""
    if number(r.get(key)) is None:
        return Cell(escape(text(r.get(key))))
    shown = (f"{escape(readable(r.get(key)))} {'<br class=ub>' if units_below else ''}"
             f"<span class=small>{escape(text(r.get('units')))}</span>")
    return Cell(mark(shown), number(r.get(key)))


def _compared_table(ident: str, rows: pd.DataFrame, unv: bool) -> str:
    """The partner results compared with the reference, the deviating ones
    first, then by |deviation|, the largest first. The reference value is in
    the units of the value beside it."""
    mark = _below if unv else (lambda h: h)
    table = Table(ident, ["partner", "system", "accelerator", "model", "scenario", "value", "reference",
                          "deviation", "verdict"], numeric={5, 7},
                  where_all=" and in the agreement table (data/agreement.csv)")
    printed = (lambda v: True) if unv else (lambda v: v == DEVIATES)   # print: the deviating rows
    records = rows.to_dict("records")
    records.sort(key=lambda r: (r.get("verdict") != DEVIATES, -abs(number(r.get("deviation_pct")) or 0.0),
                                *(text(r.get(k)) for k in ("submitter", "model", "scenario", "system"))))
    for r in records:
        ref = f'{escape(readable(r["reference_value"]))} <span class="small">({wrap(r.get("reference_system"))})</span>'
        dev = signed_pct(r.get("deviation_pct"))
        v = str(r.get("verdict") or "")
        table.add([wrap(r.get("submitter")), wrap(r.get("system")), escape(text(r.get("accelerator"))),
                   _nw(r.get("model")), _nw(r.get("scenario")), _value(r, "value", mark),
                   Cell(ref, number(r.get("reference_value"))),
                   Cell(mark(escape(dev)), number(r.get("deviation_pct"))), Cell(verdict(v), v)],
                  "bad" if v == DEVIATES else "", printed(v))
    return table.html("No partner result with this status was compared with the reference in this round.")


def _differences(records: list[dict]) -> list[str]:
    """One item per partner system and its differences (a system's rows share
    them): the system, its rows with their deviations, what differs."""
    by: dict[tuple, list[dict]] = {}
    for r in records:
        by.setdefault((text(r.get("submitter")), text(r.get("system")), text(r.get("reference_system")),
                       text(r.get("differences"))), []).append(r)

    def case(r: dict) -> str:
        return f"{text(r.get('model'))} {text(r.get('scenario'))} {signed_pct(r.get('deviation_pct'))}"

    return [f"<li>{escape(submitter)} {escape(system)} <span class=\"small\">"
            f"({escape(', '.join(case(r) for r in rows))}; against {escape(reference)})</span>: "
            f"{escape(found or 'no difference stated')}</li>"
            for (submitter, system, reference, found), rows in by.items()]


def _differences_list(rows: pd.DataFrame) -> str:
    """How each compared system differs from its reference's (compare's
    ``differences``), below its table: every deviating system's, printed; the
    others' in a folded details."""
    records = rows.sort_values(["submitter", "system", "model", "scenario"], kind="stable").to_dict("records")
    bad = _differences([r for r in records if r.get("verdict") == DEVIATES])
    good = _differences([r for r in records if r.get("verdict") != DEVIATES and text(r.get("differences"))])
    out = (f'<p class="small">How each deviating system differs from its reference:</p>'
           f'<ul class="small differs">{"".join(bad)}</ul>') if bad else ""
    if good:
        out += (f'<details class="noprint"><summary class="small">How the agreeing systems differ from '
                f'their references</summary><ul class="small differs">{"".join(good)}</ul></details>')
    return out


def _context_table(ident: str, rows: pd.DataFrame, unv: bool) -> str:
    """No same-round reference, but a near one: context only, never a verdict.
    Per accelerator: the partner's value and the nearest reference's."""
    mark = _below if unv else (lambda h: h)
    # model and scenario share a cell: nine columns of long system ids overflowed 1024 px
    table = Table(ident, ["partner", "system", "model, scenario", "per accelerator", "nearest reference",
                          "per accelerator", "difference (context)", "differs in"], numeric={3, 5, 6})
    for r in rows.sort_values(["submitter", "system", "model", "scenario"], kind="stable").to_dict("records"):
        mine = (number(r.get("value")) or 0.0) / (number(r.get("total_accelerators")) or 1.0)
        table.add([wrap(r.get("submitter")), wrap(r.get("system")),
                   Cell(f'{escape(text(r.get("model")))}<br>{escape(text(r.get("scenario")))}',
                        f'{r.get("model")} {r.get("scenario")}', "nw"),
                   Cell(mark(escape(readable(mine))), mine),
                   f'{wrap(r.get("context_system"))} <span class="small">'
                   f'{escape(text(r.get("context_note")).removeprefix("context only, not a verdict: "))}</span>',
                   Cell(escape(readable(r.get("context_per_accelerator"))), number(r.get("context_per_accelerator"))),
                   Cell(mark(escape(signed_pct(r.get("context_deviation_pct")))), number(r.get("context_deviation_pct"))),
                   f'<span class="small">{escape(text(r.get("differs_in")))}</span>'], printed=False)
    return table.html()


def _names(names: list[str], shown: int = 6) -> str:
    more = f", +{len(names) - shown}" if len(names) > shown else ""
    return escape(", ".join(names[:shown])) + more


def _not_compared(ident: str, rows: pd.DataFrame, unv: bool) -> str:
    """Rows not compared with the reference, one folded group per verdict and
    reason (its count, verdict, reason and submitters); unfolded, the rows."""
    mark = _below if unv else (lambda h: h)
    groups = []
    for (v, reason), part in rows.fillna({"reason": ""}).groupby(["verdict", "reason"], sort=False):
        groups.append((-len(part), str(v), str(reason), part))
    out = []
    for i, (_, v, reason, part) in enumerate(sorted(groups, key=lambda g: g[:3])):
        table = Table(f"{ident}-{i + 1}", ["submitter", "system", "accelerator", "model", "scenario", "value"],
                      numeric={5})
        for r in part.sort_values(["submitter", "system", "model", "scenario"], kind="stable").to_dict("records"):
            table.add([wrap(r.get("submitter")), wrap(r.get("system")), escape(text(r.get("accelerator"))),
                       _nw(r.get("model")), _nw(r.get("scenario")), _value(r, "value", mark)])
        names = sorted(set(part["submitter"].map(text)))
        # no reference at all: why there is no context comparison either (compare's context_note)
        notes = sorted({text(n) for n in part.get("context_note", pd.Series(dtype=object)) if text(n)}) \
            if v == NO_REFERENCE else []
        why = (f'<p class="small">No context comparison either:</p><ul class="small">'
               + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>") if notes else ""
        out.append(f'<details class="nc noprint"><summary><b>{len(part)}</b> {verdict(v)} {escape(reason)} '
                   f'<span class="small">({_names(names)})</span></summary>{table.html()}{why}</details>')
    return "".join(out)


def _status_part(data: Data, round_: str, unv: bool) -> str:
    status_rows = data.agreement[(data.agreement["round"] == round_)
                                 & ((data.agreement["status"] != VERIFIED) == unv)]
    results = data.results[(data.results["round"] == round_) & ((data.results["status"] != VERIFIED) == unv)]
    kind = POST_DEADLINE if unv else VERIFIED
    partner = status_rows[status_rows[PARTNER]]
    compared = partner[partner["verdict"].isin([AGREE, DEVIATES])]
    other = status_rows[~status_rows[PARTNER]]
    title = "Post-deadline results (unverified)" if unv else "Verified results"
    deviate = int((compared["verdict"] == DEVIATES).sum())
    out = [f'<section class="status {"unverified" if unv else "verified"}" id="{anchor(round_, kind)}">'
           f"<h3>{title}</h3>",
           f"<p>{count(len(results), f'accepted {kind} result')}; "
           f"{count(len(partner), 'partner result')} of {count(partner['submitter'].nunique(), 'partner')} "
           f"on {escape(data.reference_vendor)} accelerators: {len(compared)} compared with the reference "
           f"({len(compared) - deviate} agree, {deviate} deviate), {len(partner) - len(compared)} not compared."
           + (f" {count(len(other), 'result')} of {count(other['submitter'].nunique(), 'submitter')} on other "
              "vendors' accelerators: not partner results." if len(other) else "") + "</p>"]
    if unv and len(results):
        out.append(footnote(comparison=True))
    points = [{"partner": r["submitter"], "case": f"{r['model']} {r['scenario']} ({r['system']})",
               "deviation_pct": r["deviation_pct"], "verdict": r["verdict"]}
              for r in compared.to_dict("records")]
    out.append(deviation_strip(points, tolerance_pct(data.agreement),
                               f"{round_} {kind}: deviation of each partner result from the reference"))
    out.append(_compared_table(f"agreement-{anchor(round_, kind)}", compared, unv))
    out.append(_differences_list(compared))
    not_compared = partner[~partner["verdict"].isin([AGREE, DEVIATES])]
    in_context = (not_compared["verdict"] == NO_REFERENCE) & not_compared.get(
        "context_system", pd.Series(None, index=not_compared.index)).notna()
    if in_context.any():
        out.append(f'<h4 class="noprint" id="{anchor(round_, kind, "context")}">Context only, not a verdict: '
                   f'{int(in_context.sum())} partner results without a same-round reference, beside the '
                   "nearest reference per accelerator (never counted as agree or deviates, never in a claim)</h4>"
                   + _context_table(f"context-{anchor(round_, kind)}", not_compared[in_context], unv))
    if (~in_context).any():
        no_ref = int(((not_compared["verdict"] == NO_REFERENCE) & ~in_context).sum())
        out.append(f'<h4 class="noprint">Partner results not compared: {int((~in_context).sum())}'
                   + (f" ({no_ref} with no reference at all)" if no_ref else "") + "</h4>"
                   + _not_compared(f"notcompared-{anchor(round_, kind)}", not_compared[~in_context], unv))
    if len(other):
        out.append(f'<h4 class="noprint" id="{anchor(round_, kind, "other-vendors")}">Results on other vendors\' '
                   f"accelerators: {len(other)}</h4>" + _not_compared(f"others-{anchor(round_, kind)}", other, unv))
    if len(not_compared) or len(other):
        by_verdict = ", ".join(f"{n} {word(v)}" for v, n in sorted(tally(not_compared["verdict"],
                                                                        AGREEMENT_VERDICTS).items()) if n)
        parts = [f"{count(len(not_compared), 'partner result')} not compared ({by_verdict})" if len(not_compared)
                 else "", f"{count(len(other), 'result')} on other vendors' accelerators" if len(other) else ""]
        out.append(f'<p class="print-only small">Not printed: {" and ".join(x for x in parts if x)}; each row, '
                   "with its reason, is in the report on screen and in the agreement table "
                   "(data/agreement.csv).</p>")
    if unv and len(results):
        out.append(f"<h4>Every post-deadline result of {escape(round_)}</h4>")
        table = Table(f"results-{anchor(round_, kind)}", ["submitter", "system", "model", "scenario", "value",
                                                           "source"], numeric={4})
        for r in results.sort_values(["submitter", "system", "model", "scenario"]).to_dict("records"):
            table.add([wrap(r["submitter"]), wrap(r["system"]), _nw(r["model"]), _nw(r["scenario"]),
                       _value(r, "value", _below), wrap(r.get("source"))])
        out.append(table.html())
    return "".join(out) + "</section>"


# ---- scaling -----------------------------------------------------------------------------

def _references(r: dict) -> str:
    """The single-node references a cluster's expected value scales, each as
    ``MI355X ×32: AMD 8xMI355X_… 93,046 Tokens/s ÷ 8`` (the rule in small)."""
    refs = [x for x in r.get("references") or [] if isinstance(x, dict)]
    if not refs:
        return wrap(r.get("reference_rule"))
    parts = []
    for x in refs:
        per = f'<span class="nw">{escape(quantity(x.get("value"), r.get("units")))}</span> ÷ {escape(text(x.get("accelerators")))}'
        parts.append(f"{escape(text(x.get('accelerator')))} ×{escape(text(x.get('count')))}: "
                     f"{wrap(x.get('submitter'))} {wrap(x.get('system'))} {per} "
                     f'<span class="small">({escape(text(x.get("rule")))})</span>')
    return "<br>".join(parts)


def _scaling(data: Data, round_: str) -> str:
    if data.scaling is None:
        return f'<p class="missing">{escape(data.why.get("scaling", ""))}</p>'
    rows = [r for r in data.scaling if round_of(r) == round_]
    if not rows:
        return '<p class="empty">No multi-node result in this round.</p>'
    rows.sort(key=lambda r: (-(number(r.get("total_accelerators")) or 0), -(number(r.get("nodes")) or 0),
                             *(str(r.get(k)) for k in ("submitter", "system", "model", "scenario"))))
    # the largest clusters first; units under the figures, so that the
    # single-node references fit beside them at 1024 px
    table = Table(f"scaling-{anchor(round_)}", ["submitter", "system", "model", "scenario", "nodes",
                                               "acc.", "value", "expected", "efficiency",
                                               "verdict", "linear from"], numeric={4, 5, 6, 7, 8},
                  screen_only={10})
    for r in rows:
        mark = unverified if is_unverified(r) else (lambda h: h)
        table.add([wrap(r.get("submitter")), wrap(r.get("system")), _nw(r.get("model")),
                   _nw(r.get("scenario")), escape(text(r.get("nodes"))),
                   escape(text(r.get("total_accelerators"))),
                   _value(r, "value", mark, units_below=True), _value(r, "expected", lambda h: h, units_below=True),
                   Cell(mark(escape(pct(r.get("efficiency_pct")))) if number(r.get("efficiency_pct")) is not None
                        else "", number(r.get("efficiency_pct"))),
                   verdict(str(r.get("verdict"))),
                   wrap(r.get("reason")) if r.get("verdict") == NO_REFERENCE else _references(r)])
    bars = scaling_bars(rows, f"{round_}: scaling efficiency per cluster")   # the table prints, not the bars
    out = bars.replace('<div class="chart eff"', '<div class="chart eff noprint"', 1) + table.html()
    if any(is_unverified(r) for r in rows):
        out += footnote()
    return out


# ---- inputs of the round -----------------------------------------------------------------

def _rejected(data: Data, round_: str) -> str:
    rows = data.rejected[data.rejected["source"].map(lambda s: round_of({"source": s})) == round_] \
        if len(data.rejected) else data.rejected
    table = Table(f"rejected-{anchor(round_)}", ["source", "outcome", "codes", "reason"])
    for r in rows.to_dict("records"):
        table.add([wrap(r.get("source")), verdict(str(r.get("outcome"))), wrap(r.get("codes")), wrap(r.get("reason"))])
    return table.html("No input of this round was rejected or set aside.")


def _versions(data: Data, round_: str) -> str:
    versions = data.versions[data.versions["round"] == round_].to_dict("records")
    table = Table(f"versions-{anchor(round_)}", ["submitter", "version", "declared", "status", "submitted at",
                                                "used", "supersedes", "superseded by"],
                  where_all=" and in data/versions.csv")   # print: the versions not used
    for r in versions:
        used = str(r.get("used")).lower() == "true"
        by = ", ".join(f"v{o['version']}" for o in versions if o["submitter"] == r["submitter"]
                       and o.get("status") == r.get("status") and str(o.get("used")).lower() == "true")
        sup = text(r.get("supersedes")).split(".")[0]
        table.add([wrap(r.get("submitter")), f"v{escape(str(r.get('version')))}",
                   escape(text(r.get("status_declared"))), escape(text(r.get("status"))),
                   escape(text(r.get("submitted_at"))),
                   "used" if used else ("superseded" if by else "not used"), f"v{escape(sup)}" if sup else "",
                   "" if used else escape(by)], printed=not used)
    return table.html()


def round_section(data: Data, round_: str) -> str:
    claims = None if data.claims is None else [c for c in data.claims
                                                if claim_round(c, data) == round_]
    claims_html = (f'<p class="missing">{escape(data.why.get("claims", ""))}</p>' if claims is None
                   else claims_table(f"claims-{anchor(round_)}", claims, data.superseded) if claims
                   else '<p class="empty">No claim about this round.</p>')
    return "".join([
        f'<section class="round" id="{anchor("round", round_)}"><h2>{round_title(round_)}</h2>',
        '<section class="part"><h3>Partner results against the reference</h3>',
        _status_part(data, round_, unv=False), _status_part(data, round_, unv=True), "</section>",
        f'<section class="part" id="{anchor(round_, "claims")}"><h3>Claims</h3>', claims_html, "</section>",
        f'<section class="part" id="{anchor(round_, "scaling")}"><h3>Scaling efficiency per cluster</h3>',
        _scaling(data, round_), "</section>",
        '<section class="part"><h3>Rejected and set-aside inputs</h3>', _rejected(data, round_), "</section>",
        '<section class="part"><h3>Submission versions</h3>', _versions(data, round_), "</section>",
        f'<section class="part{"" if superseded.printed(data, round_) else " noprint"}" '
        f'id="{anchor(round_, "superseded")}"><h3>Withdrawals and superseded versions</h3>',
        superseded.section(data, round_), "</section></section>"])


# ---- the partners' record across rounds ------------------------------------------------

def record_section(data: Data) -> str:
    """Per partner and accelerator generation, the verified agreement in every
    round: the table and its chart (:func:`pipeline.analyses.record.record`)."""
    from pipeline.analyses.record import ALL_ROUNDS, record

    rows = record(data.agreement).table if len(data.agreement) else []
    table = Table("record", ["round", "partner", "generation", "compared", "within", "deviate", "no reference",
                             "worst deviation"], numeric={3, 4, 5, 6, 7})
    for r in rows:
        counted = [Cell(str(r[k]), r[k]) for k in ("compared", "agree", "deviates", "no_reference")]
        worst = Cell(escape(signed_pct(r["worst_deviation_pct"])), number(r["worst_deviation_pct"]))
        table.add([escape(r["round"]), wrap(r["submitter"]), escape(r["accelerator"]), *counted, worst],
                  "bad" if r["deviates"] else "", False)   # on screen, in audit/record.json and `mlrepro record`
    chart = record_bars([r for r in rows if r["round"] != ALL_ROUNDS and r["compared"]],
                        "each partner's share of results within the tolerance, per generation and round")
    claims = [c for c in data.claims or [] if claim_round(c, data) == ACROSS_ROUNDS]
    judged = f"<h3>Claims on the record</h3>{claims_table('claims-record', claims)}" if claims else ""
    return (f'<section id="record"><h2>Partners\' record across rounds</h2><p>Verified results only: per '
            f"partner and accelerator generation, the results compared with the reference in each round, "
            f"how many within {tolerance_pct(data.agreement):g}%, and the worst deviation "
            f'(<code>mlrepro record</code>).</p><div class="noprint">{chart}</div>'
            f"{table.html('No partner result.')}{judged}</section>")
