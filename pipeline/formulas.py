"""Every formula of the project, defined once.

The reference is always the denominator, and every bound is inclusive. A
tiny epsilon absorbs binary floating point (104/100 - 1 is not exactly 0.04),
so that a deviation printed as 4.00% counts as within a 4% tolerance.
"""

from __future__ import annotations

EPSILON = 1e-9


def deviation_pct(value: float, reference: float) -> float:
    """(value - reference) / reference * 100. Positive: above the reference."""
    return (value - reference) / reference * 100.0


def within(deviation: float, tolerance_pct: float) -> bool:
    """|deviation| <= tolerance, inclusive."""
    return abs(deviation) <= tolerance_pct + EPSILON


def agreement_verdict(deviation: float, tolerance_pct: float) -> str:
    return "agree" if within(deviation, tolerance_pct) else "deviates"
