"""The report's two plots, drawn in HTML and CSS (no image, no SVG text to
clip): labels are ordinary text that wraps, so no label is ever cut.

- the deviation strip: one line per partner, one dot per compared result,
  the ±tolerance band shaded;
- the scaling bars: grouped by system, one bar per model and scenario, with
  the 100 % (linear) line.
"""

from __future__ import annotations

import math
from html import escape

from pipeline.core.model import DEVIATES
from pipeline.output.figures import axis_pct, number, pct, signed_pct, tolerance as band_text


def _ticks(span: float) -> list[float]:
    step = next((s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000) if span / s <= 4), None)
    if step is None:   # a deviation of thousands of percent (plausible values far apart): powers of ten
        step = 10.0 ** math.ceil(math.log10(span / 4))
    n = int(span // step)
    return [i * step for i in range(-n, n + 1)]


def deviation_strip(points: list[dict], tolerance: float, label: str) -> str:
    """``points``: dicts with partner, case, deviation_pct, verdict."""
    points = [p for p in points if number(p.get("deviation_pct")) is not None]
    if not points:
        return ""
    span = max(2 * tolerance, max(abs(number(p["deviation_pct"])) for p in points) * 1.08, 1.0)
    at = lambda v: (v + span) / (2 * span) * 100  # noqa: E731
    band = (f'<span class="band" style="left:{at(-tolerance):.2f}%;width:{at(tolerance) - at(-tolerance):.2f}%">'
            "</span>")
    out = [f'<div class="chart dev" role="img" aria-label="{escape(label)}">']
    partners = sorted({p["partner"] for p in points})
    for partner in partners:
        mine = [p for p in points if p["partner"] == partner]
        worst = max(mine, key=lambda p: abs(number(p["deviation_pct"])))
        dots = "".join(
            f'<span class="dot{" bad" if p["verdict"] == DEVIATES else ""}" '
            f'style="left:{at(number(p["deviation_pct"])):.2f}%" '
            f'title="{escape(p["case"])}: {signed_pct(p["deviation_pct"])}"></span>' for p in mine)
        out.append(f'<div class="crow"><span class="clab">{escape(partner)}</span>'
                   f'<span class="track">{band}<span class="zero" style="left:50%"></span>{dots}</span>'
                   f'<span class="cval">worst {signed_pct(worst["deviation_pct"])}</span></div>')
    ticks = "".join(f'<span style="left:{at(t):.2f}%">{axis_pct(t)}</span>' for t in _ticks(span))
    out.append(f'<div class="axis"><span></span><span class="ticks">{ticks}</span><span></span></div>'
               f'<p class="small">Each dot is one compared result (hover for its model and scenario); shaded: '
               f"{band_text(tolerance)} tolerance; red: outside it.</p></div>")
    return "".join(out)


def scaling_bars(rows: list[dict], label: str) -> str:
    """Efficiency bars grouped by system, labelled by model and scenario."""
    if not rows:
        return ""
    values = [number(r.get("efficiency_pct")) for r in rows]
    top = max([110.0] + [v * 1.05 for v in values if v is not None])
    out = [f'<div class="chart eff" role="img" aria-label="{escape(label)}">']
    group = None
    for r, v in zip(rows, values):
        key = (str(r.get("submitter")), str(r.get("system")))
        if key != group:
            group = key
            what = ", ".join(x for x in (str(r.get("submitter") or ""), f"{r.get('nodes')} nodes"
                                         if r.get("nodes") is not None else "",
                                         f"{r.get('total_accelerators')} accelerators"
                                         if r.get("total_accelerators") is not None else "") if x)
            out.append(f'<div class="cgroup">{escape(str(r.get("system") or ""))} '
                       f'<span class="small">({escape(what)})</span></div>')
        case = f"{r.get('model')} · {r.get('scenario')}"
        bar = (f'<span class="bar" style="width:{v / top * 100:.2f}%" title="{escape(case)}: {pct(v)}"></span>'
               if v is not None else "")
        shown = pct(v) if v is not None else str(r.get("verdict") or "no value")
        out.append(f'<div class="crow"><span class="clab">{escape(case)}</span>'
                   f'<span class="track">{bar}<span class="linear" style="left:{100 / top * 100:.2f}%">'
                   f'</span></span><span class="cval">{escape(shown)}</span></div>')
    out.append('<p class="small">Bar: efficiency (value against linear scaling of a single-node '
               "reference); line: 100% (linear).</p></div>")
    return "".join(out)


def record_bars(rows: list[dict], label: str) -> str:
    """The record across rounds: per partner and generation, one bar per
    round, its length the share of compared results within the tolerance.
    ``rows``: the record's rows of single rounds (compared > 0)."""
    if not rows:
        return ""
    out = [f'<div class="chart eff" role="img" aria-label="{escape(label)}">']
    group = None
    for r in rows:
        key = (str(r["submitter"]), str(r["accelerator"]))
        if key != group:
            group = key
            out.append(f'<div class="cgroup">{escape(key[0])} <span class="small">({escape(key[1])})</span></div>')
        share = r["agree"] / r["compared"] * 100
        case = f"{r['round']}: {r['agree']} of {r['compared']} within"
        out.append(f'<div class="crow"><span class="clab">{escape(str(r["round"]))}</span>'
                   f'<span class="track"><span class="bar" style="width:{share:.2f}%" title="{escape(case)}">'
                   f'</span></span><span class="cval">{r["agree"]}/{r["compared"]}, worst '
                   f'{signed_pct(r["worst_deviation_pct"])}</span></div>')
    out.append('<p class="small">Bar: share of the verified partner results compared in the round that are '
               "within the tolerance (full: all).</p></div>")
    return "".join(out)
