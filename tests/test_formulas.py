"""The agreement formula: deviation with the reference as denominator, and an
inclusive ±tolerance bound."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, strategies as st

from pipeline.core.formulas import VERDICT_WITHIN, deviation_pct, within


def agreement_verdict(deviation: float, tolerance_pct: float) -> str:
    """compare's verdict of one compared result, as its columns compute it."""
    return VERDICT_WITHIN[bool(within(deviation, tolerance_pct))]

TOLERANCE = 4.0

# (value, reference, expected deviation %, expected verdict at ±4%)
BOUNDARY = [
    (103990.0, 100000.0, 3.99, "agree"),
    (104000.0, 100000.0, 4.00, "agree"),
    (104010.0, 100000.0, 4.01, "deviates"),
    (96000.0, 100000.0, -4.00, "agree"),
    (95990.0, 100000.0, -4.01, "deviates"),
    (100000.0, 100000.0, 0.00, "agree"),
]


@pytest.mark.parametrize(("value", "reference", "deviation", "verdict"), BOUNDARY,
                         ids=[f"{d:+.2f}%" for _, _, d, _ in BOUNDARY])
def test_boundary_table(value, reference, deviation, verdict):
    dev = deviation_pct(value, reference)
    assert dev == pytest.approx(deviation, abs=1e-9)
    assert agreement_verdict(dev, TOLERANCE) == verdict


# A real reference: AMD's v5.1 8xMI300X llama2-70b-99 Server, 24593.8 tokens/s.
REAL_REFERENCE = 24593.8


@pytest.mark.parametrize(("factor", "verdict"), [
    (1.0399, "agree"),
    (1.04, "agree"),      # 24593.8 * 1.04 is 4.000000000000004 % in binary floating point
    (1.0401, "deviates"),
    (0.96, "agree"),
    (0.9599, "deviates"),
])
def test_real_reference_at_the_bound(factor, verdict):
    value = REAL_REFERENCE * factor
    assert agreement_verdict(deviation_pct(value, REAL_REFERENCE), TOLERANCE) == verdict


def test_reference_is_the_denominator():
    # 104 against 100 is +4 %, 100 against 104 is about -3.85 %: not symmetric.
    assert deviation_pct(104.0, 100.0) == pytest.approx(4.0)
    assert deviation_pct(100.0, 104.0) == pytest.approx(-3.846153846, abs=1e-6)
    assert deviation_pct(110.0, 100.0) > 0 > deviation_pct(90.0, 100.0)


def test_within_is_inclusive_and_symmetric():
    assert within(4.0, 4.0) and within(-4.0, 4.0)
    assert not within(4.0001, 4.0) and not within(-4.0001, 4.0)
    assert within(0.0, 0.0) and not within(0.01, 0.0)


positive = st.floats(min_value=1e-3, max_value=1e9, allow_nan=False, allow_infinity=False)
factors = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)
deviations = st.floats(min_value=-50.0, max_value=50.0, allow_nan=False)
tolerances = st.floats(min_value=0.0, max_value=20.0, allow_nan=False)


@given(reference=positive, deviation=deviations, factor=factors, tol=tolerances)
def test_scaling_both_by_one_factor_keeps_the_verdict(reference, deviation, factor, tol):
    value = reference * (1 + deviation / 100)
    assume(value > 0)
    dev = deviation_pct(value, reference)
    # Away from the bound itself, where binary rounding of the scaled figures
    # (about 1e-13 %) may fall either side of the epsilon.
    assume(abs(abs(dev) - tol) > 1e-6)
    scaled = deviation_pct(value * factor, reference * factor)
    assert agreement_verdict(scaled, tol) == agreement_verdict(dev, tol)


@given(reference=positive, factor=st.sampled_from([1e-3, 0.5, 2.0, 10.0, 1e3, 1e6]))
def test_scaling_keeps_the_verdict_on_the_bound(reference, factor):
    # Exactly on ±4 %: always agree, whatever the unit scale.
    for sign in (1, -1):
        value = reference * (1 + sign * 0.04)
        assert agreement_verdict(deviation_pct(value * factor, reference * factor), 4.0) == "agree"


@given(value=positive, reference=positive)
def test_deviation_is_zero_only_for_equal_values(value, reference):
    assert (deviation_pct(value, reference) == 0.0) == (value == reference)


@given(reference=positive)
def test_equal_values_always_agree(reference):
    assert agreement_verdict(deviation_pct(reference, reference), 0.0) == "agree"
