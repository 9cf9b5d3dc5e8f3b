"""Every formula of the project, defined once (each takes a number or a
numpy column alike, so that the row path and the columnar path share it).

The reference is always the denominator, and every bound is inclusive. A
tiny epsilon absorbs binary floating point (104/100 - 1 is not exactly 0.04),
so that a deviation printed as 4.00% counts as within a 4% tolerance.

A result value is judged once, where it is read (the plausible range is a
check of the table schema, schemas/results.v4.yaml): a value outside it
never reaches a formula. Each formula is still
total over any float: a number over zero is not a number (nan), and a figure
that overflows stays infinite; neither raises.
"""

from __future__ import annotations

import math

from pipeline.core.model import AGREE, DEVIATES

EPSILON = 1e-9


def _over(numerator, denominator):
    """numerator / denominator; a number over zero is nan, never an exception."""
    if isinstance(denominator, (int, float)) and denominator == 0:
        return math.nan
    return numerator / denominator


def deviation_pct(value: float, reference: float) -> float:
    """(value - reference) / reference * 100. Positive: above the reference."""
    return _over(value - reference, reference) * 100.0


def within(deviation: float, tolerance_pct: float) -> bool:
    """|deviation| <= tolerance, inclusive."""
    return abs(deviation) <= tolerance_pct + EPSILON


VERDICT_WITHIN = {True: AGREE, False: DEVIATES}   # the verdict of a compared result: VERDICT_WITHIN[within(...)]


PCT_DIGITS = 6   # a deviation is kept to a millionth of a percent


def rate(part: int, whole: int) -> float | None:
    """part / whole (the agreement rate: agree / compared), kept to PCT_DIGITS
    decimals; None when nothing was counted."""
    return round(part / whole, PCT_DIGITS) if whole else None


def share_pct(part: int, whole: int) -> float | None:
    """part / whole in percent (a claim's share of partner results within its band)."""
    return round(part / whole * 100, PCT_DIGITS) if whole else None


def rounded_pct(deviation):
    """A deviation rounded to PCT_DIGITS decimals, half to even: numpy's
    ``round(x, 6)`` (rint of x * 10**6, divided back). Takes a number or a
    numpy column alike, and gives the same value for both."""
    if isinstance(deviation, float) and not math.isfinite(deviation):
        return deviation   # nothing to round (round() of an infinity raises)
    scale = 10.0 ** PCT_DIGITS
    scaled = deviation * scale
    whole = scaled.round() if hasattr(scaled, "round") else round(scaled)   # a column: rint; a number: half to even
    return whole / scale


def efficiency_pct(value: float, expected: float) -> float:
    """Scaling efficiency: value / expected * 100, the expected (linear)
    throughput as the denominator. 100: perfectly linear; below: sub-linear."""
    return _over(value, expected) * 100.0


def linear_expectation(parts) -> float:
    """The throughput a cluster would reach if it scaled linearly: the sum over
    node types of count x per-accelerator reference, where the per-accelerator
    reference is a single-node result divided by that result's accelerator
    count. ``parts``: (count, reference value, reference accelerators)."""
    return sum(count * _over(value, accelerators) for count, value, accelerators in parts)


def ratio(subject: float, comparator: float, lower_is_better: bool = False) -> float:
    """How the subject compares with the comparator, > 1 always meaning the
    subject is better: subject / comparator for rates, comparator / subject
    for latencies (lower is better). The comparator is the denominator of a
    rate ratio; for a latency, the subject's time is."""
    return _over(comparator, subject) if lower_is_better else _over(subject, comparator)
