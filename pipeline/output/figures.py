"""Every figure mlrepro prints for a reader, rounded and with its unit: the
same on a terminal (:mod:`pipeline.output.render`'s text tables) and in the
HTML report (the raw values stay in the CSV, Parquet and JSON outputs). Plain
text, standard library only.

============================ ==================================================
a value with its units       ``26,006 Tokens/s``, ``0.0515 Samples/s``
a share in percent           ``93.2%`` (efficiency, a claimed share)
a deviation                  ``-6.99%`` (always signed)
a ratio                      ``3.13×``
the tolerance                ``±4%``
============================ ==================================================

A figure the ledger or the parameters state (a claimed ``93%``, a tolerance
``4%``) is printed as stated; a computed one is rounded as above.
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
        return f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if x == 0 else f"{x:.3g}"


def quantity(value, units) -> str:
    """A measured value with its units (``26,006 Tokens/s``); the value alone
    when the units are unknown."""
    shown = readable(value)
    unit = "" if units is None or (isinstance(units, float) and math.isnan(units)) else str(units).strip()
    return f"{shown} {unit}" if shown and unit else shown


def _shown(value, form: str) -> str:
    """``value`` in ``form`` (a str.format pattern); empty when it is not a number."""
    x = number(value)
    return "" if x is None else form.format(x)


def stated(value) -> str:
    """A figure as the ledger or the parameters state it (``93``, ``3.1``)."""
    return _shown(value, "{:g}")


def pct(value, digits: int = 1) -> str:
    return _shown(value, f"{{:.{digits}f}}%")


def signed_pct(value, digits: int = 2) -> str:
    return _shown(value, f"{{:+.{digits}f}}%")


def ratio(value, digits: int = 2) -> str:
    return _shown(value, f"{{:.{digits}f}}×")


def tolerance(value) -> str:
    return _shown(value, "±{:g}%")


def axis_pct(value: float) -> str:
    """A tick of a percent axis (``-5%``, ``0%``, ``+5%``)."""
    return f"{value:+g}%" if value else "0%"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 partner``, ``7 partners``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def claim_figure(claim: dict, key: str) -> str:
    """``claimed`` or ``computed`` (or ``computed_vs_best``) of a claim in its
    own measure: 3.1× and 3.13×, 93% and 93.2%, within ±4% and max |deviation| 6.99%."""
    x = number(claim.get(key))
    if x is None:
        return ""
    measure = claim.get("measure")
    if measure == "ratio":
        return f"{stated(x)}×" if key == "claimed" else ratio(x)
    if measure == "max_abs_deviation_pct":
        return f"within ±{stated(x)}%" if key == "claimed" else f"max |deviation| {pct(x, 2)}"
    return f"{stated(x)}%" if key == "claimed" else pct(x)
