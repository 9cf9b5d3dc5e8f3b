"""The agreement rule and the reference choice, in memory: compare() on a
small canonical table built here, and reference.decide on one decision key.
No file, no command: the CLI's own part (options, params.yaml, output files,
exit codes) is tests/test_compare.py, the journeys are the gate's and the DVC
pipeline's tests."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from conftest import RULES, UNVERIFIED_FOOTNOTE, canonical_row

from pipeline.analyses import reference
from pipeline.analyses.compare import compare
from pipeline.ingest import table


def ref(**kw) -> dict:
    return canonical_row(**kw)


def partner(system: str, value: float, submitter: str = "Dell", **kw) -> dict:
    return canonical_row(submitter=submitter, system=system, value=value,
                         file=f"v6.0/{submitter}/v1/results.csv", line=2 + len(system) % 7, **kw)


def judged(rows: list[dict], **options):
    """The compare report of ROWS, and its agreement rows by system."""
    report = compare(RULES, table.to_frame(rows), **options)
    return report, {r["system"]: r for r in report.table.to_dict("records")}


BOUNDARY = [  # system, value against a 100000 reference, expected deviation %, verdict
    ("P+3.99", 103990.0, 3.99, "agree"),
    ("P+4.00", 104000.0, 4.00, "agree"),
    ("P+4.01", 104010.0, 4.01, "deviates"),
    ("P-4.00", 96000.0, -4.00, "agree"),
    ("P-4.01", 95990.0, -4.01, "deviates"),
]


def test_verdicts_at_the_tolerance_boundary():
    report, by_system = judged([ref(value=100000.0)] + [partner(s, v) for s, v, _, _ in BOUNDARY])
    for system, _, deviation, verdict in BOUNDARY:
        row = by_system[system]
        assert row["verdict"] == verdict, system
        assert row["deviation_pct"] == pytest.approx(deviation, abs=1e-6), system
        assert (row["reference_system"], row["reference_value"]) == ("8xMI355X_2xEPYC_9575F", 100000.0)
        assert row["reference_rule"] == "only candidate" and row["tolerance_pct"] == 4.0
        assert row["label"] == "verified" and row["footnote"] == ""
    s = report.summary
    assert (s["partner_rows"], s["agree"], s["deviates"]) == (5, 3, 2)
    assert s["partners"]["Dell"]["agreement_rate"] == 0.6
    # each deviating row is an error at the partner's file and line, in the column value
    assert sorted(f.found for f in report.findings) == ["104010.0 (+4.01%)", "95990.0 (-4.01%)"]
    assert {(f.code, f.severity) for f in report.findings} == {("deviates-from-reference", "error")}
    assert report.error_count() == 2
    # the stage line counts the findings by code without building them: the same counts
    assert report.code_counts() == Counter(f.code for f in report.findings) == {"deviates-from-reference": 2}
    assert {(f.where.path, f.where.column) for f in report.findings} == {
        (by_system[s]["source"].rsplit(":", 1)[0], "value") for s in ("P+4.01", "P-4.01")}


def test_the_tolerance_is_a_parameter():
    rows = [ref(value=100000.0), partner("P+4.01", 104010.0), partner("P+4.50", 104500.0)]
    _, wider = judged(rows, tolerance_pct=4.5)
    assert wider["P+4.01"]["verdict"] == wider["P+4.50"]["verdict"] == "agree"
    assert wider["P+4.01"]["tolerance_pct"] == 4.5
    _, narrower = judged([ref(value=100000.0), partner("P+3.99", 103990.0)], tolerance_pct=3.5)
    assert narrower["P+3.99"]["verdict"] == "deviates"


def test_the_reference_rows_are_not_compared_with_themselves():
    report, by_system = judged([ref(), partner("D1", 100000.0)])
    assert list(by_system) == ["D1"] and report.findings == []


def test_a_real_reference_at_exactly_plus_four_percent_agrees():
    # AMD v5.1 8xMI300X llama2-70b-99 Server: 24593.8 tokens/s; 24593.8 * 1.04 is 4.000000000000004 %
    mi300x = {"round": "v5.1", "accelerator": "MI300X", "composition": "MI300X:8"}
    _, by_system = judged([ref(system="8xMI300X_2xEPYC_9575F", value=24593.8, **mi300x),
                           partner("Edge", 24593.8 * 1.04, **mi300x)])
    assert by_system["Edge"]["verdict"] == "agree"
    assert by_system["Edge"]["deviation_pct"] == pytest.approx(4.0)


def test_no_reference_for_another_scenario_or_node_count():
    rows = [ref(scenario="Offline"), partner("D1", 100000.0, scenario="Server"),
            partner("D2", 100000.0, nodes=2, total_accelerators=16)]
    report, by_system = judged(rows)
    for system in ("D1", "D2"):
        row = by_system[system]
        assert row["verdict"] == "no-reference"
        assert row["reason"].startswith("no AMD result for this round, accelerator")
        assert pd.isna(row["reference_system"]) and pd.isna(row["deviation_pct"])
    assert report.summary["no-reference"] == 2 and report.findings == []


@pytest.mark.parametrize(("partner_kw", "reference_kw", "reason"), [
    ({"division": "open"}, {}, "division differs (open against closed)"),
    ({"system": "8xMI355X_Power_Cap_1000W"}, {}, "power-capped configuration"),
    ({}, {"system": "8xMI355X_Power_Cap_1000W"}, "reference 8xMI355X_Power_Cap_1000W is power-capped"),
    ({"model": "llama3.1-8b", "scenario": "Interactive", "units": "Queries/s"},
     {"model": "llama3.1-8b", "scenario": "Interactive", "units": "Tokens/s"},
     "units differ (Queries/s against Tokens/s)"),
    ({"accelerator": "B200", "composition": "B200:8"}, {}, "not a partner result: B200 is NVIDIA's, not AMD's"),
], ids=["division", "capped-partner", "capped-reference", "units", "other-vendor"])
def test_excluded_rows_say_why(partner_kw, reference_kw, reason):
    kw = {"system": "D1", **partner_kw}
    report, _ = judged([ref(**reference_kw), partner(kw.pop("system"), 101000.0, **kw)])
    [row] = report.table.to_dict("records")
    assert (row["verdict"], row["reason"]) == ("excluded", reason)
    assert pd.isna(row["deviation_pct"])   # nothing compared
    assert report.summary["excluded"] == 1 and report.findings == []


def test_several_reference_systems_use_the_best_value():
    # AMD v5.1 had two MI325X systems for llama2-70b-99 Offline.
    mi325 = {"round": "v5.1", "accelerator": "MI325X", "composition": "MI325X:8", "scenario": "Offline"}
    _, by_system = judged([ref(system="8xMI325X_2xEPYC_9575F_1", value=34520.4, **mi325),
                           ref(system="8xMI325X_2xEPYC_9575F_2", value=34555.0, **mi325),
                           partner("XE9680_MI325X", 33900.0, **mi325)])
    row = by_system["XE9680_MI325X"]
    assert (row["reference_system"], row["reference_value"]) == ("8xMI325X_2xEPYC_9575F_2", 34555.0)
    assert row["deviation_pct"] == pytest.approx((33900.0 - 34555.0) / 34555.0 * 100, abs=1e-6)
    assert row["reference_rule"] == ("best of 2 (highest value; ties by system id): "
                                     "8xMI325X_2xEPYC_9575F_2, 8xMI325X_2xEPYC_9575F_1")


def test_the_choice_is_deterministic_whatever_the_row_order():
    rows = [ref(system="B_sys", value=100000.0), ref(system="A_sys", value=100000.0), partner("D1", 103000.0)]
    _, first = judged(rows)
    _, second = judged(list(reversed(rows)))
    assert first["D1"]["reference_system"] == second["D1"]["reference_system"] == "A_sys"
    assert first["D1"]["reference_rule"] == second["D1"]["reference_rule"]


def test_for_latency_the_best_reference_is_the_lowest():
    lat = {"model": "llama3.1-8b", "scenario": "SingleStream", "units": "Latency (ms)"}
    _, by_system = judged([ref(system="R_slow", value=12.0, **lat), ref(system="R_fast", value=10.0, **lat),
                           partner("D1", 10.3, **lat)])
    assert by_system["D1"]["reference_system"] == "R_fast"
    assert by_system["D1"]["reference_rule"].startswith("best of 2 (lowest latency")
    assert by_system["D1"]["verdict"] == "agree"


def test_the_reference_submitter_is_a_parameter():
    _, by_system = judged([ref(submitter="Supermicro", value=100000.0), partner("D1", 103000.0)],
                          reference_submitter="Supermicro")
    assert by_system["D1"]["reference_submitter"] == "Supermicro"
    assert by_system["D1"]["verdict"] == "agree"


# ---- verified and post-deadline ---------------------------------------------------------

def test_post_deadline_partner_rows_are_labelled_unverified():
    _, by_system = judged([ref(value=100000.0), partner("Late", 102000.0, status="post-deadline")])
    row = by_system["Late"]
    assert row["verdict"] == "agree"
    assert (row["partner_status"], row["status"], row["label"]) == ("post-deadline", "post-deadline", "unverified")
    assert row["footnote"] == UNVERIFIED_FOOTNOTE


def test_a_post_deadline_reference_makes_the_row_unverified():
    _, by_system = judged([ref(status="post-deadline"), partner("Late", 100500.0, status="post-deadline")])
    assert by_system["Late"]["reference_status"] == "post-deadline"
    assert by_system["Late"]["label"] == "unverified"


def test_a_verified_partner_is_never_compared_with_a_post_deadline_reference():
    _, by_system = judged([ref(status="post-deadline"), partner("D1", 100500.0)])
    assert by_system["D1"]["verdict"] == "no-reference"
    assert by_system["D1"]["reason"].startswith("only post-deadline AMD results match")


def test_a_post_deadline_partner_takes_a_verified_reference_first():
    rows = [ref(system="R_verified", value=100000.0), ref(system="R_late", value=120000.0, status="post-deadline"),
            partner("Late", 101000.0, status="post-deadline")]
    _, by_system = judged(rows)
    assert (by_system["Late"]["reference_system"], by_system["Late"]["reference_status"]) == ("R_verified",
                                                                                               "verified")


# ---- reference.decide: one decision key ----------------------------------------------------

def key(**kw) -> dict:
    row = {"round": "v6.0", "accelerator": "MI355X", "accelerators_per_node": 8, "nodes": 1,
           "model": "llama2-70b-99", "scenario": "Server", "division": "closed", "units": "Tokens/s",
           "total_accelerators": 8, "status": "verified", "capped": False}
    return {**row, **kw}


def candidate(system: str, value: float, **kw) -> dict:
    return {**key(), "system": system, "value": value, "source": f"v6.0/AMD/v1/results.csv:{len(system)}",
            "file": "v6.0/AMD/v1/results.csv", "line": len(system), **kw}


def decide(row: dict, candidates: list[dict]) -> dict:
    return reference.decide(RULES, row, candidates, "AMD", "AMD")


@pytest.mark.parametrize(("accelerator", "reason"), [
    ("MI355X+B200", "mixed vendors: MI355X+B200 combines AMD and NVIDIA parts, not a AMD system"),
    ("XPU-9000", "not a partner result: XPU-9000 is not in schemas/accelerators.yaml (vendor unknown, so not a AMD part)"),
])
def test_a_part_that_is_not_wholly_the_vendors_is_excluded(accelerator, reason):
    out = decide(key(accelerator=accelerator), [candidate("R", 100.0)])
    assert (out["verdict"], out["reason"]) == ("excluded", reason)


def test_an_accelerator_count_that_differs_is_excluded_with_both_counts():
    out = decide(key(total_accelerators=8), [candidate("R", 100.0, total_accelerators=16)])
    assert (out["verdict"], out["reason"]) == ("excluded", "accelerator count differs (8 against 16)")


def test_the_rule_names_five_candidates_and_counts_the_rest():
    out = decide(key(), [candidate(f"R{i}", 100.0 + i) for i in range(7)])
    assert out["reference_system"] == "R6" and out["verdict"] is None   # the verdict is the deviation's
    assert out["reference_rule"] == ("best of 7 (highest value; ties by system id): "
                                     "R6, R5, R4, R3, R2 and 2 more")


def test_the_agreement_status_is_verified_only_when_both_sides_are():
    assert reference.agreement_status("verified", "verified") == "verified"
    assert reference.agreement_status("verified", None) == "verified"
    assert reference.agreement_status("verified", "post-deadline") == "post-deadline"
    assert reference.agreement_status("post-deadline", "verified") == "post-deadline"
