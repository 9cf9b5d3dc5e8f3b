"""Withdrawals and superseded versions in a round's details (values for
``round.html.j2``): the verdicts the superseded stage judged
(``data/superseded.csv``), never decided again here.

Each withdrawal shows its reason and the verdict it removed; each superseded
version's results show their verdicts and what became of each (withdrawn,
replaced by the newer version, or left out). A claim about partners notes
each withdrawn deviating result its scope covers (:func:`withdrawn_notes`).
"""

from __future__ import annotations

import pandas as pd

from pipeline.core.model import DEVIATES
from pipeline.output.figures import signed_pct
from pipeline.output.report.html import Row
from pipeline.output.report.load import Data

WITHDRAWN, REPLACED = "withdrawn", "replaced"


def view(data: Data, round_: str) -> dict:
    """The round's withdrawals (reason, the verdict removed) and its superseded
    versions' verdicts; the part prints only when a result left the current view
    (withdrawn or left out)."""
    rows = [] if data.superseded is None or not len(data.superseded) else data.superseded[
        data.superseded["round"] == round_].sort_values(["submitter", "version", "source"], kind="stable").to_dict("records")
    return {"missing": data.why.get("superseded", "") if data.superseded is None else None,
            "ident": round_.replace(".", "-"), "printed": any(r.get("fate") != REPLACED for r in rows),
            "withdrawn": [Row(r, "bad" if r.get("verdict") == DEVIATES else "") for r in rows
                          if r.get("fate") == WITHDRAWN],
            "every": [Row(r, "bad" if r.get("verdict") == DEVIATES else "", r.get("fate") != REPLACED) for r in rows]}


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
