"""The first screen: the answers an auditor asks for, before any detail.

- per round and partner (a submitter with results on the reference vendor's
  accelerators: :data:`.load.PARTNER`): its partner results, agree, deviate,
  no-reference, excluded and the worst deviation (signed), the deviating
  partners first, each group by |worst deviation|, the largest first; the
  round's other submitters counted under them; for the newest
  :data:`FIRST_SCREEN_ROUNDS` rounds (a screen holds two such tables), the
  older ones in one line;
- the claims that do not hold, and those that hold only against a weaker
  comparator (and those that cannot be checked);
- how many results are unverified, with the MLCommons sentence;
- the validation of the two sets, and the rejected inputs.
"""

from __future__ import annotations

from html import escape

import pandas as pd

from pipeline.core.model import (AGREE, AGREEMENT_VERDICTS, CHERRY_PICKED, DEVIATES, DOES_NOT_HOLD, EXCLUDED, HOLDS,
                                 NO_REFERENCE, POST_DEADLINE, REJECTED, SET_ASIDE, VERIFIED)
from pipeline.core.vocabulary import label, tally
from pipeline.output.report.claims import figure, scope
from pipeline.output.figures import count, number, signed_pct
from pipeline.output.report.html import Cell, Table, footnote, unverified, verdict, wrap
from pipeline.output.report.load import ACROSS_ROUNDS, PARTNER, Data, claim_round, is_unverified
from pipeline.output.report.sections import anchor
from pipeline.output.report.validation import summary as validation_summary


HEADER = ["partner", "res.", "agree", "dev.", "no ref.", "excl.", "worst"]
NAME_CHARS = 28   # a longer partner name is shortened here (whole in its tooltip and in the details)
FIRST_SCREEN_ROUNDS = 2   # the newest rounds get a table on the first screen; the older ones a line


def _partner_row(round_: str, status: str, partner: str, rows: pd.DataFrame) -> tuple[tuple, list, str]:
    """One partner of one round (its partner results only): the sort key
    (deviating first, then by |worst deviation|, the largest first, whatever
    the number of deviating results), the cells and the row class."""
    unv = status != VERIFIED
    verdicts = rows["verdict"]
    compared = rows[verdicts.isin([AGREE, DEVIATES])]
    devs = [(abs(d), d, r) for d, r in zip(compared["deviation_pct"].map(number),
                                           zip(compared["model"], compared["scenario"]))
            if d is not None]
    worst, d = "", None
    if devs:
        _, d, (model, scenario) = max(devs, key=lambda x: (x[0], x[1]))
        worst = f'<span title="{escape(f"{model} {scenario}")}">{escape(signed_pct(d))}</span>'
        worst = unverified(worst, below=True) if unv else worst
    shown = str(partner) if len(str(partner)) <= NAME_CHARS else str(partner)[:NAME_CHARS - 1] + "…"
    # a name breaks only after "_" (never mid-word), its status under it
    name = wrap(shown) + (' <br><span class="unv">post-deadline</span>' if unv else "")
    got = tally(verdicts, AGREEMENT_VERDICTS)
    deviate = got[DEVIATES]
    cells = [Cell(f'<a class="pname" href="#{anchor(round_, POST_DEADLINE if unv else VERIFIED)}" '
                  f'title="{escape(partner)}">{name}</a>', str(partner)),
             str(len(rows)), str(got[AGREE]),
             Cell(f"<b>{deviate}</b>" if deviate else "0", deviate),
             str(got[NO_REFERENCE]), str(got[EXCLUDED]),
             Cell(worst, "" if d is None else d)]
    key = (not deviate, -abs(d) if d is not None else 0.0, str(partner), status)
    return key, cells, "bad" if deviate else ""


def _others(round_: str, rows: pd.DataFrame) -> str:
    """The submitters of the round with no partner result (``rows``: theirs),
    counted; named in the tooltip and listed in the round's details."""
    if not len(rows):
        return ""
    names = sorted(set(rows["submitter"]))
    status = VERIFIED if (rows["status"] == VERIFIED).any() else POST_DEADLINE
    return (f'<a class="others" href="#{anchor(round_, status, "other-vendors")}" title="{escape(", ".join(names))}">'
            f"and {count(len(names), 'submitter')} on other vendors' accelerators</a>")


def partner_tables(data: Data, rounds: list[str]) -> list[str]:
    """Per round, one dense table of its partners (deviating first): their
    results on the reference vendor's accelerators; the submitters with none
    counted under it. The worst deviation's model and scenario are its tooltip
    (and in the round's details)."""
    agr, out = data.agreement, []
    for round_ in rounds:
        table = Table(f"answers-{anchor('partners', round_)}", HEADER, numeric={1, 2, 3, 4, 5, 6}, searchable=False)
        mine = agr[agr["round"] == round_]
        ours = mine[mine[PARTNER]]
        rows = [_partner_row(round_, status, partner, part) for (status, partner), part in
                ours.groupby(["status", "submitter"], sort=True)]
        for _, cells, cls in sorted(rows, key=lambda x: x[0]):
            table.add(cells, cls)
        others = mine[~mine["submitter"].isin(set(ours["submitter"]))]
        table.foot = _others(round_, others)
        title = f'<a href="#{anchor("round", round_)}">{escape(round_)}</a>'
        body = table.html() if rows else ('<p class="empty">No partner result.</p>'
                                          + (f'<p class="small">{table.foot}</p>' if len(others) else ""))
        out.append(f'<div class="round-partners" data-round="{escape(round_)}"><h3>{title}: '
                   f"{count(ours['submitter'].nunique(), 'partner')}</h3>{body}</div>")
    return out


def _claim_cells(claim: dict, round_: str, against_best: bool) -> list[Cell | str]:
    mark = unverified if is_unverified(claim) else (lambda h: h)
    computed = mark(escape(figure(claim, "computed") or "—"))
    if claim.get("kind") == "reproducibility" and claim.get("compared") is not None:
        computed += f" <span class=\"nw\">({claim.get('within')} of {claim.get('compared')} within)</span>"
    # the round and the id, then what the claim covers (model variant, scenarios, accelerator)
    covers = f'<div class="scope">{escape(scope(claim))}</div>' if scope(claim) else ""
    at = "record" if round_ == ACROSS_ROUNDS else anchor(round_, "claims")
    cells = [Cell(f'<a class="small" href="#{at}">{escape(round_)}</a> '
                  f"<b>{escape(str(claim.get('id')))}</b>{covers}", str(claim.get("id")), "claim"),
             mark(f'<span class="nw">{escape(figure(claim, "claimed"))}</span>'), computed]
    if against_best:
        cells.append(mark(escape(figure(claim, "computed_vs_best") or "—")))
    return cells


def _claims_boxes(data: Data) -> list[str]:
    if data.claims is None:
        return [f'<div class="box" data-answer="claims"><h2>Claims</h2>'
                f'<p class="missing">{escape(data.why.get("claims", ""))}</p></div>']
    rounds = {id(c): claim_round(c, data) for c in data.claims}
    out = []
    for verdict_name, title, header in (
            (DOES_NOT_HOLD, "Claims that do not hold", ["claim", "claimed", "computed"]),
            (CHERRY_PICKED, "Claims that hold only against a weaker comparator",
             ["claim", "claimed", "computed", "vs strongest"])):
        mine = [c for c in data.claims if c.get("verdict") == verdict_name]
        table = Table(f"answers-{verdict_name}", header, searchable=False)
        for c in mine:
            table.add(_claim_cells(c, rounds[id(c)], verdict_name == CHERRY_PICKED))
        cls = "box alarm" if mine else "box"
        out.append(f'<div class="{cls}" data-answer="{verdict_name}"><h2>{title}: {len(mine)}</h2>'
                   f"{table.html()}</div>")
    unchecked = [c for c in data.claims if c.get("verdict") not in (HOLDS, DOES_NOT_HOLD, CHERRY_PICKED)]
    holds = sum(c.get("verdict") == HOLDS for c in data.claims)
    detail = ""
    if unchecked:
        by = {}
        for c in unchecked:
            by.setdefault(label(c.get("verdict")), []).append(str(c.get("id")))
        detail = "; ".join(f"{len(ids)} {escape(said)} ({escape(', '.join(ids))})" for said, ids in by.items())
    out.append(f'<p data-answer="claims-other">{len(data.claims)} claims: {holds} hold'
               + (f"; {detail}" if detail else "") + ".</p>")
    return out


def _unverified_box(data: Data) -> str:
    res = data.results
    post = res[res["status"] != VERIFIED]
    where = "; ".join(f"{escape(round_)}: " + ", ".join(f"{wrap(submitter)} {n}" for submitter, n
                                                         in part.groupby("submitter").size().items())
                      for round_, part in post.groupby("round"))
    claims = sum(is_unverified(c) for c in data.claims or [])
    scaling = sum(is_unverified(r) for r in data.scaling or [])
    rest = ", ".join(x for x in (count(claims, "claim") if claims else "",
                                 count(scaling, "scaling row") if scaling else "") if x)
    return (f'<div class="box" data-answer="unverified"><h2>Unverified results: {len(post)} of {len(res)}</h2>'
            f"<p>{count(len(post), 'accepted result')} {'is' if len(post) == 1 else 'are'} post-deadline"
            + (f" ({where})" if where else "") + (f"; {rest} rest on them" if rest else "")
            + f". Each unverified figure is marked {unverified('')}.</p>{footnote()}</div>")


def _checks_line(data: Data) -> str:
    rej = data.rejected
    got = tally(rej["outcome"] if "outcome" in rej else [], (REJECTED, SET_ASIDE))
    inputs = f"{got[REJECTED]} {REJECTED.label} and {got[SET_ASIDE]} {SET_ASIDE.label} input rows"
    if data.validation is None:
        checks = "no validation results given"
    else:
        s = validation_summary(data.validation)
        state = verdict("failed", f"{s['failed']} failed") if s["failed"] else verdict("met", "all met")
        checks = (f'<a href="#validation">Great Expectations</a>: {s["expectations"]} expectations in '
                  f"{s['suites']} suites, {state}")
    return f'<p data-answer="checks">{checks}; {inputs}.</p>'


def _earlier_rounds(data: Data, rounds: list[str]) -> str:
    """One line for the rounds older than the first screen's tables: each
    round's partners and how many deviate (named in the tooltip); their tables
    are in the round's details."""
    if not rounds:
        return ""
    agr, said = data.agreement, []
    for round_ in rounds:
        ours = agr[(agr["round"] == round_) & agr[PARTNER]]
        deviating = sorted(set(ours[ours["verdict"] == DEVIATES]["submitter"]))
        text = f'<a href="#{anchor("round", round_)}">{escape(round_)}</a>: {count(ours["submitter"].nunique(), "partner")}'
        if deviating:
            text += f', <span title="{escape(", ".join(deviating))}">{len(deviating)} deviating</span>'
        said.append(text)
    return f'<p class="small earlier">Earlier rounds (their tables in the details): {"; ".join(said)}.</p>'


def section(data: Data, rounds: list[str]) -> str:
    shown, earlier = rounds[:FIRST_SCREEN_ROUNDS], rounds[FIRST_SCREEN_ROUNDS:]
    tables = "".join(partner_tables(data, shown)) or '<p class="empty">No partner result.</p>'
    tables += _earlier_rounds(data, earlier)
    partners = (f'<div data-answer="partners"><h2>Partner results against the reference, per round</h2>'
                f'<div class="rounds">{tables}</div></div>')
    return (f'<section id="answers"><div class="grid">{partners}<div class="side">{"".join(_claims_boxes(data))}'
            f'</div><div class="more">{_unverified_box(data)}</div><div class="checks">{_checks_line(data)}</div>'
            "</div></section>")
