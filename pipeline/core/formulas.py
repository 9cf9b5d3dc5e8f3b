"""Every formula of the project, defined once (each takes a number or a
numpy column alike, so that the row path and the columnar path share it).

The reference is always the denominator, and every bound is inclusive. A
tiny epsilon absorbs binary floating point (104/100 - 1 is not exactly 0.04),
so that a deviation printed as 4.00% counts as within a 4% tolerance.
"""

from __future__ import annotations

from pipeline.core.model import AGREE, DEVIATES

EPSILON = 1e-9


def deviation_pct(value: float, reference: float) -> float:
    """(value - reference) / reference * 100. Positive: above the reference."""
    return (value - reference) / reference * 100.0


def within(deviation: float, tolerance_pct: float) -> bool:
    """|deviation| <= tolerance, inclusive."""
    return abs(deviation) <= tolerance_pct + EPSILON


VERDICT_WITHIN = {True: AGREE, False: DEVIATES}   # the verdict of a compared result


def agreement_verdict(deviation: float, tolerance_pct: float) -> str:
    return VERDICT_WITHIN[bool(within(deviation, tolerance_pct))]


PCT_DIGITS = 6   # a deviation is kept to a millionth of a percent


def rounded_pct(deviation):
    """A deviation rounded to PCT_DIGITS decimals, half to even: numpy's
    ``round(x, 6)`` (rint of x * 10**6, divided back). Takes a number or a
    numpy column alike, and gives the same value for both."""
    scale = 10.0 ** PCT_DIGITS
    scaled = deviation * scale
    whole = scaled.round() if hasattr(scaled, "round") else round(scaled)   # a column: rint; a number: half to even
    return whole / scale


def efficiency_pct(value: float, expected: float) -> float:
    """Scaling efficiency: value / expected * 100, the expected (linear)
    throughput as the denominator. 100: perfectly linear; below: sub-linear."""
    return value / expected * 100.0


def linear_expectation(parts) -> float:
    """The throughput a cluster would reach if it scaled linearly: the sum over
    node types of count x per-accelerator reference, where the per-accelerator
    reference is a single-node result divided by that result's accelerator
    count. ``parts``: (count, reference value, reference accelerators)."""
    return sum(count * value / accelerators for count, value, accelerators in parts)


def ratio(subject: float, comparator: float, lower_is_better: bool = False) -> float:
    """How the subject compares with the comparator, > 1 always meaning the
    subject is better: subject / comparator for rates, comparator / subject
    for latencies (lower is better). The comparator is the denominator of a
    rate ratio; for a latency, the subject's time is."""
    return comparator / subject if lower_is_better else subject / comparator
