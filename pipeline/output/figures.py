"""Figures rounded for reading, with their units: the same on a terminal
(:mod:`pipeline.output.render`'s text tables) and in the HTML report. The raw
values stay in the CSV, Parquet and JSON outputs. Standard library only.
"""

from __future__ import annotations

import math


def number(value) -> float | None:
    """A finite float, or None (missing, empty, not a number)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def readable(value) -> str:
    """A number rounded for reading: thousands grouped, about four significant
    digits."""
    x = number(value)
    if x is None:
        return "" if value is None else str(value)
    size = abs(x)
    if size >= 1000:
        return f"{x:,.0f}"
    if size >= 100:
        return f"{x:.1f}"
    if size >= 1:
        return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x)}"
    return "0" if x == 0 else f"{x:.3g}"


def signed_pct(value, digits: int = 2) -> str:
    x = number(value)
    return "" if x is None else f"{x:+.{digits}f}%"


def pct(value, digits: int = 1) -> str:
    x = number(value)
    return "" if x is None else f"{x:.{digits}f}%"


def with_units(value, units) -> str:
    """``100,282 Tokens/s``: a result's value rounded for reading, with its units."""
    shown = readable(value)
    return f"{shown} {units}" if shown and units else shown


def claim_figure(claim: dict, key: str) -> str:
    """``claimed`` or ``computed`` (or ``computed_vs_best``) of a claim in its
    own measure: 3.1× and 3.13×, 93% and 93.2%, within ±4% and max |deviation| 6.99%."""
    x = number(claim.get(key))
    if x is None:
        return ""
    measure = claim.get("measure")
    if measure == "ratio":
        return f"{x:g}×" if key == "claimed" else f"{x:.2f}×"
    if measure == "max_abs_deviation_pct":
        return f"within ±{x:g}%" if key == "claimed" else f"max |deviation| {x:.2f}%"
    return f"{x:g}%" if key == "claimed" else f"{x:.1f}%"
