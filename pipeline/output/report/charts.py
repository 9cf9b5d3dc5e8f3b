"""The geometry of the report's plots, as percentages of the track (text):
``charts.html.j2`` draws them in HTML and CSS, no image and no SVG text to
clip, so no label is ever cut.
"""

from __future__ import annotations

import math
from itertools import groupby

from pipeline.core.model import DEVIATES
from pipeline.output.figures import axis_pct, number, pct, signed_pct


def _ticks(span: float) -> list[float]:
    step = next((s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000) if span / s <= 4), None)
    if step is None:   # a deviation of thousands of percent (plausible values far apart): powers of ten
        step = 10.0 ** math.ceil(math.log10(span / 4))
    n = int(span // step)
    return [i * step for i in range(-n, n + 1)]


def deviation_strip(points: list[dict], tolerance: float, label: str) -> dict | None:
    """``points``: dicts with partner, case, deviation_pct, verdict."""
    points = [p for p in points if number(p.get("deviation_pct")) is not None]
    if not points:
        return None
    span = max(2 * tolerance, max(abs(number(p["deviation_pct"])) for p in points) * 1.08, 1.0)
    at = lambda v: (v + span) / (2 * span) * 100  # noqa: E731
    partners = []
    for partner in sorted({p["partner"] for p in points}):
        mine = [p for p in points if p["partner"] == partner]
        worst = max(mine, key=lambda p: abs(number(p["deviation_pct"])))
        partners.append({"name": partner, "worst": worst["deviation_pct"],
                         "dots": [{"left": f"{at(number(p['deviation_pct'])):.2f}", "bad": p["verdict"] == DEVIATES,
                                   "title": f"{p['case']}: {signed_pct(p['deviation_pct'])}"} for p in mine]})
    return {"label": label, "tolerance": tolerance, "band_left": f"{at(-tolerance):.2f}",
            "band_width": f"{at(tolerance) - at(-tolerance):.2f}", "partners": partners,
            "ticks": [{"left": f"{at(t):.2f}", "text": axis_pct(t)} for t in _ticks(span)]}


def scaling_bars(rows: list[dict]) -> dict | None:
    """Efficiency bars grouped by system, labelled by model and scenario."""
    if not rows:
        return None
    values = [number(r.get("efficiency_pct")) for r in rows]
    top = max([110.0] + [v * 1.05 for v in values if v is not None])
    bars, group = [], None
    for r, v in zip(rows, values):
        key = (str(r.get("submitter")), str(r.get("system")))
        what = ", ".join(x for x in [str(r.get("submitter") or ""), *(f"{r[k]} {noun}" for k, noun in (
            ("nodes", "nodes"), ("total_accelerators", "accelerators")) if r.get(k) is not None)] if x)
        bars.append({"group": {"system": str(r.get("system") or ""), "what": what} if key != group else None,
                     "case": f"{r.get('model')} · {r.get('scenario')}", "pct": pct(v),
                     "width": f"{v / top * 100:.2f}" if v is not None else None,
                     "shown": pct(v) if v is not None else str(r.get("verdict") or "no value")})
        group = key
    return {"linear": f"{100 / top * 100:.2f}", "bars": bars}


def record_bars(rows: list[dict]) -> list[dict]:
    """Per partner and generation, one bar per round: the share of compared results within the tolerance."""
    out = []
    for key, group in groupby(rows, key=lambda r: (str(r["submitter"]), str(r["accelerator"]))):
        out += [dict(r, group=None if i else key, share=f"{r['agree'] / r['compared'] * 100:.2f}")
                for i, r in enumerate(group)]
    return out
