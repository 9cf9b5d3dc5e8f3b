"""Withdrawals and superseded versions in a round's details: the verdicts the
superseded stage judged (``data/superseded.csv``), never decided again here.

Each withdrawal shows its reason and the verdict it removed; each superseded
version's results show their verdicts and what became of each (withdrawn,
replaced by the newer version, or left out). A claim about partners notes
each withdrawn deviating result its scope covers (:func:`withdrawn_notes`).
"""

from __future__ import annotations

from html import escape

import pandas as pd

from pipeline.core.model import DEVIATES
from pipeline.output.figures import number, readable, signed_pct
from pipeline.output.report.html import Cell, Table, text, verdict, wrap
from pipeline.output.report.load import Data

WITHDRAWN, REPLACED = "withdrawn", "replaced"


def printed(data: Data, round_: str) -> bool:
    """Whether the round's part prints: only when a result left the current view (withdrawn or left out)."""
    return any(r.get("fate") != REPLACED for r in _rows(data, round_))


def _rows(data: Data, round_: str) -> list[dict]:
    if data.superseded is None or not len(data.superseded):
        return []
    table = data.superseded[data.superseded["round"] == round_]
    return table.sort_values(["submitter", "version", "source"], kind="stable").to_dict("records")


def _deviation(r: dict) -> Cell:
    return Cell(escape(signed_pct(r.get("deviation_pct"))), number(r.get("deviation_pct")))


def section(data: Data, round_: str) -> str:
    """The round's withdrawals (reason, the verdict removed) and its superseded versions' verdicts."""
    if data.superseded is None:
        return f'<p class="missing">{escape(data.why.get("superseded", ""))}</p>'
    rows = _rows(data, round_)
    if not rows:
        return '<p class="empty">No version of this round was superseded.</p>'
    withdrawn = Table(f"withdrawals-{round_.replace('.', '-')}", ["submitter", "withdrawn by", "system", "model",
                                                                 "scenario", "reason", "deviation", "verdict"],
                      numeric={6})
    for r in (r for r in rows if r.get("fate") == WITHDRAWN):
        v = text(r.get("verdict"))
        withdrawn.add([wrap(r.get("submitter")), f"v{escape(text(r.get('superseded_by')))} (of "
                       f"v{escape(text(r.get('version')))})", wrap(r.get("system")), escape(text(r.get("model"))),
                       escape(text(r.get("scenario"))), wrap(r.get("withdrawal_reason")), _deviation(r),
                       Cell(verdict(v), v)], "bad" if v == DEVIATES else "")
    every = Table(f"superseded-{round_.replace('.', '-')}", ["submitter", "version", "system", "model", "scenario",
                                                           "value", "deviation", "verdict", "then"], numeric={5, 6},
                  where_all=" and in data/superseded.csv")
    for r in rows:
        v = text(r.get("verdict"))
        every.add([wrap(r.get("submitter")), f"v{escape(text(r.get('version')))} → "
                   f"v{escape(text(r.get('superseded_by')))}", wrap(r.get("system")), escape(text(r.get("model"))),
                   escape(text(r.get("scenario"))),
                   Cell(f"{escape(readable(r.get('value')))} <span class=small>{escape(text(r.get('units')))}</span>",
                        number(r.get("value"))), _deviation(r), Cell(verdict(v), v), escape(text(r.get("fate")))],
                  "bad" if v == DEVIATES else "", printed=r.get("fate") != REPLACED)   # print: what left the view
    return ("<h4>Withdrawals</h4>" + withdrawn.html("No result of this round was withdrawn.")
            + "<h4>Every result of a superseded version, with its verdict</h4>"
            + '<p class="small">Judged against today\'s references by the superseded stage (data/superseded.csv), '
              "apart from the current verdicts.</p>" + every.html())


def withdrawn_notes(claim: dict, superseded: pd.DataFrame | None) -> list[str]:
    """For a claim about partners (a reproducibility claim), each deviating result a
    partner withdrew within its scope (round, model variants, accelerators)."""
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
