"""Scaling efficiency: the formulas (efficiency, ratio), the reference lookup,
and the figures recomputed from published MLPerf data.

Real rows come from tests/real/v5.1-summary_results.json (read in
place) and from AMD's v6.0 summary: 1016380 tokens/s on 87
MI355X (11 nodes) against 100282 on one 8-GPU node is 93.2 %.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pandas as pd
import pytest
from hypothesis import given, strategies as st

from conftest import REAL, UNVERIFIED_FOOTNOTE, canonical_row, run, run_json, write_canonical

from pipeline.ingest import table
from pipeline.core.formulas import efficiency_pct, linear_expectation, ratio
from pipeline.ingest.composition import parts_in_system_id
from conftest import RULES
from pipeline.analyses.scaling import LOOKUP, scaling

SUMMARY_V51 = REAL / "v5.1-summary_results.json"


# ---- formulas: boundary tables --------------------------------------------------------

EFFICIENCY = [  # value, expected, efficiency %
    (1016380.0, 87 * 100282.0 / 8, 93.197413),   # the seed's 87-GPU Server cluster
    (1016380.0, 88 * 100282.0 / 8, 92.138352),   # what nodes x per node (88) would wrongly give
    (47561.7, 2 * 24532.7, 96.935315),            # Dell_MangoBoost 2 nodes against its own node
    (100.0, 100.0, 100.0),
    (100.0, 200.0, 50.0),
    (250.0, 200.0, 125.0),
]


@pytest.mark.parametrize(("value", "expected", "pct"), EFFICIENCY)
def test_efficiency_boundary_table(value, expected, pct):
    assert efficiency_pct(value, expected) == pytest.approx(pct, abs=1e-6)


def test_linear_expectation_sums_per_accelerator_references_over_node_types():
    # MangoBoost v5.1: 32 MI300X at 24860.5/8 plus 16 MI325X at 31671.9/8 (Server)
    assert linear_expectation([(32, 24860.5, 8), (16, 31671.9, 8)]) == pytest.approx(162785.8)
    # a 4-GPU reference node counts per accelerator too
    assert linear_expectation([(16, 50000.0, 4)]) == pytest.approx(200000.0)
    assert linear_expectation([]) == 0


RATIOS = [  # subject, comparator, lower is better, ratio
    (100282.0, 32027.6, False, 3.131112),   # rates: subject / comparator
    (32027.6, 100282.0, False, 0.319375),
    (27.374, 25.458, True, 0.930007),        # latencies: comparator / subject (slower subject < 1)
    (23.572, 25.458, True, 1.080010),        # faster subject > 1
    (10.0, 10.0, True, 1.0),
    (10.0, 10.0, False, 1.0),
]


@pytest.mark.parametrize(("subject", "comparator", "latency", "expected"), RATIOS)
def test_ratio_boundary_table_both_directions(subject, comparator, latency, expected):
    assert ratio(subject, comparator, lower_is_better=latency) == pytest.approx(expected, abs=1e-6)


positive = st.floats(min_value=1e-3, max_value=1e7, allow_nan=False, allow_infinity=False)


@given(positive, positive)
def test_ratio_above_one_always_means_the_subject_is_better(a, b):
    assert (ratio(a, b) > 1) == (a > b)                           # a higher rate is better
    assert (ratio(a, b, lower_is_better=True) > 1) == (a < b)     # a lower latency is better
    assert ratio(a, b) * ratio(b, a) == pytest.approx(1.0)


@given(positive, st.integers(min_value=2, max_value=128), positive)
def test_a_cluster_that_scales_exactly_is_100_percent(per_accelerator, count, _):
    reference_node = per_accelerator * 8
    expected = linear_expectation([(count, reference_node, 8)])
    assert efficiency_pct(per_accelerator * count, expected) == pytest.approx(100.0)


# ---- rows built from the published v5.1 table -----------------------------------------

@lru_cache(maxsize=None)
def _published() -> tuple:
    return tuple(json.loads(SUMMARY_V51.read_text(encoding="utf-8")))


def published_rows(*ids: str, models=("llama2-70b-99.9",)) -> list[dict]:
    """Canonical rows for published v5.1 records (by ID), figures as published."""
    rows = []
    for rec in _published():
        if rec["ID"] not in ids or rec["Model"] not in models:
            continue
        counts = ({n: c for n, c in parts_in_system_id(RULES, rec["Platform"]).items() if c is not None}
                  or {RULES.canonical_accelerator(rec["Accelerator"]): rec["Nodes"] * rec["a#"]})
        rows.append(canonical_row(
            round="v5.1", submitter=rec["Submitter"], system=rec["Platform"], system_name=rec["System"],
            accelerator="+".join(counts), composition=",".join(f"{k}:{v}" for k, v in counts.items()),
            accelerators_per_node=rec["a#"], nodes=rec["Nodes"], total_accelerators=sum(counts.values()),
            model=rec["Model"], scenario=rec["Scenario"], value=float(rec["Performance_Result"]),
            units=rec["Performance_Units"], division=rec["Category"], result_id=rec["ID"],
            file="v5.1-summary_results.json", line=len(rows) + 1))
    assert rows, ids
    return rows


def frame(rows: list[dict]) -> pd.DataFrame:
    return table.to_frame(rows)


def by_key(report) -> dict:
    return {(r["submitter"], r["system"], r["scenario"]): r for r in report.rows}


def test_dell_mangoboost_two_nodes_against_its_own_single_node():
    # 5.1-0030: 16xMI300X on 2 nodes; 5.1-0031: the same submitter's 8xMI300X node
    report = scaling(RULES, frame(published_rows("5.1-0030", "5.1-0031")))
    rows = by_key(report)
    server = rows[("Dell_MangoBoost", "16xMI300X_4xXeon_8460Y", "Server")]
    assert server["value"] == 47561.7
    assert server["expected"] == pytest.approx(2 * 24532.7)
    assert server["efficiency_pct"] == pytest.approx(96.935315, abs=1e-6)
    assert server["verdict"] == "sub-linear"
    (ref,) = server["references"]
    assert (ref["rule"], ref["submitter"], ref["system"], ref["value"], ref["accelerators"]) == (
        "same-submitter", "Dell_MangoBoost", "8xMI300X_2xXeon_8460Y", 24532.7, 8)
    offline = rows[("Dell_MangoBoost", "16xMI300X_4xXeon_8460Y", "Offline")]
    assert offline["efficiency_pct"] == pytest.approx(53572.2 / (2 * 27678.1) * 100)
    assert report.summary["multi_node_rows"] == 2


def test_mangoboost_heterogeneous_cluster_against_its_own_mi300x_and_mi325x_nodes():
    # 5.1-0065: 32xMI300X + 16xMI325X on 6 nodes; 5.1-0066 (8xMI300X) and 5.1-0067 (8xMI325X)
    rows = by_key(scaling(RULES, frame(published_rows("5.1-0065", "5.1-0066", "5.1-0067"))))
    system = "32xMI300X_2xEPYC_9534_16xMI325X_2xEPYC_9655"
    server = rows[("MangoBoost", system, "Server")]
    assert server["composition"] == "MI300X:32,MI325X:16"
    assert server["expected"] == pytest.approx(32 * 24860.5 / 8 + 16 * 31671.9 / 8)
    assert server["efficiency_pct"] == pytest.approx(153076.0 / 162785.8 * 100)
    assert [(r["accelerator"], r["count"], r["system"], r["rule"]) for r in server["references"]] == [
        ("MI300X", 32, "8xMI300X_2xEPYC_9534", "same-submitter"),
        ("MI325X", 16, "8xMI325X_2xEPYC_9655", "same-submitter")]
    assert "MI300X: same-submitter" in server["reference_rule"]
    offline = rows[("MangoBoost", system, "Offline")]
    assert offline["efficiency_pct"] == pytest.approx(169197.0 / (32 * 27854.4 / 8 + 16 * 34454.4 / 8) * 100)


def test_a_partner_without_its_own_node_falls_back_to_the_reference_submitter():
    # Supermicro_MangoBoost (5.1-0091, 16xMI325X + 8xMI300X) has no single node of its own:
    # AMD's v5.1 nodes are used, the best per accelerator when AMD has two (MI325X _1 and _2)
    rows = published_rows("5.1-0091", "5.1-0001", "5.1-0002", "5.1-0003")
    out = by_key(scaling(RULES, frame(rows), reference_submitter="AMD"))
    system = "16xMI325X_8xMI300X_2xEPYC_9575F"
    offline = out[("Supermicro_MangoBoost", system, "Offline")]
    assert {r["accelerator"]: (r["rule"], r["system"], r["value"]) for r in offline["references"]} == {
        "MI325X": ("reference-submitter", "8xMI325X_2xEPYC_9575F_2", 34555.0),   # > _1's 34520.4
        "MI300X": ("reference-submitter", "8xMI300X_2xEPYC_9575F", 27803.9)}
    assert offline["efficiency_pct"] == pytest.approx(92158.2 / (2 * 34555.0 + 27803.9) * 100)


def test_lookup_order_same_submitter_then_reference_submitter_then_any():
    assert LOOKUP == ("same-submitter", "reference-submitter", "any-submitter")
    cluster = canonical_row(submitter="Dell", system="16xMI355X", nodes=2, total_accelerators=16,
                            composition="MI355X:16", value=150000.0)
    amd = canonical_row(system="amd-node", value=100000.0)
    dell = canonical_row(submitter="Dell", system="dell-node", value=80000.0)
    other = canonical_row(submitter="Other", system="other-node", value=120000.0)

    def rule(rows):
        (row,) = scaling(RULES, frame(rows)).rows
        return row["references"][0]["rule"], row["references"][0]["system"]

    assert rule([cluster, amd, dell, other]) == ("same-submitter", "dell-node")
    assert rule([cluster, amd, other]) == ("reference-submitter", "amd-node")
    assert rule([cluster, other]) == ("any-submitter", "other-node")


def test_references_must_match_round_model_scenario_division_and_not_be_power_capped():
    cluster = canonical_row(system="16xMI355X", nodes=2, total_accelerators=16, composition="MI355X:16",
                            value=150000.0)
    unfit = [canonical_row(system="capped_Power_Cap_1000W", value=1.0),
             canonical_row(system="open-node", division="open"),
             canonical_row(system="old-node", round="v5.1"),
             canonical_row(system="offline-node", scenario="Offline"),
             canonical_row(system="other-model", model="llama2-70b-99.9")]
    (row,) = scaling(RULES, frame([cluster] + unfit)).rows
    assert row["verdict"] == "no-reference" and row["missing"] == ["MI355X"]
    assert row["efficiency_pct"] is None
    assert "MI355X (v6.0 llama2-70b-99 Server closed)" in row["reason"]


def test_a_heterogeneous_cluster_names_every_node_type_without_a_reference():
    # the v6.0 Dell_MangoBoost cluster (seed): only AMD's MI355X node is shipped for Server
    cluster = canonical_row(
        submitter="Dell_MangoBoost", system="8xMI300X_2xEPYC_9534_8xMI325X_2xEPYC_9655_8xMI355X_2xEPYC_9965",
        accelerator="MI300X+MI325X+MI355X", composition="MI300X:8,MI325X:8,MI355X:8", nodes=3,
        total_accelerators=24, model="llama2-70b-99.9", value=141521.0)
    node = canonical_row(model="llama2-70b-99.9", value=100282.0)
    (row,) = scaling(RULES, frame([cluster, node])).rows
    assert row["verdict"] == "no-reference"
    assert row["missing"] == ["MI300X", "MI325X"]
    assert "MI300X" in row["reason"] and "MI325X" in row["reason"]
    assert [r["accelerator"] for r in row["references"]] == ["MI355X"]


def test_latency_metrics_are_not_scaled():
    cluster = canonical_row(system="16xMI355X", nodes=2, total_accelerators=16, composition="MI355X:16",
                            model="wan-2.2-t2v-a14b", scenario="SingleStream", units="Latency (s)",
                            value=20.0, division="open")
    node = canonical_row(model="wan-2.2-t2v-a14b", scenario="SingleStream", units="Latency (s)",
                         value=27.374, division="open")
    (row,) = scaling(RULES, frame([cluster, node])).rows
    assert row["verdict"] == "not-applicable"
    assert "latency" in row["reason"] and row["efficiency_pct"] is None


def test_a_post_deadline_input_makes_the_row_unverified():
    cluster = canonical_row(system="16xMI355X", nodes=2, total_accelerators=16, composition="MI355X:16",
                            value=190000.0)
    late_node = canonical_row(value=100000.0, status="post-deadline")
    (row,) = scaling(RULES, frame([cluster, late_node])).rows
    assert row["efficiency_pct"] == pytest.approx(95.0)
    assert (row["status"], row["label"], row["footnote"]) == ("post-deadline", "unverified", UNVERIFIED_FOOTNOTE)
    # a verified node of the same step wins over a post-deadline one
    (row,) = scaling(RULES, frame([cluster, late_node, canonical_row(system="b", value=90000.0)])).rows
    assert row["references"][0]["system"] == "b" and row["label"] == "verified"


# ---- property: scaling every value by one factor changes no verdict ---------------------

node_value = st.floats(min_value=1.0, max_value=1e6, allow_nan=False)


@given(cluster_value=node_value, mi300x=node_value, mi325x=node_value, homogeneous=node_value,
       factor=st.floats(min_value=1e-3, max_value=1e3), late=st.booleans())
def test_scaling_every_value_by_one_factor_changes_no_verdict(cluster_value, mi300x, mi325x, homogeneous,
                                                              factor, late):
    rows = [
        canonical_row(submitter="MangoBoost", system="hetero", accelerator="MI300X+MI325X",
                      composition="MI300X:32,MI325X:16", nodes=6, total_accelerators=48,
                      value=cluster_value * 6),
        canonical_row(submitter="MangoBoost", system="n300", accelerator="MI300X", composition="MI300X:8",
                      value=mi300x),
        canonical_row(submitter="MangoBoost", system="n325", accelerator="MI325X", composition="MI325X:8",
                      value=mi325x, status="post-deadline" if late else "verified"),
        canonical_row(system="87xMI355X", composition="MI355X:87", nodes=11, total_accelerators=87,
                      value=cluster_value * 11),
        canonical_row(system="8xMI355X", value=homogeneous),
    ]
    scaled = [{**r, "value": r["value"] * factor} for r in rows]
    before, after = scaling(RULES, frame(rows)).rows, scaling(RULES, frame(scaled)).rows
    assert [r["verdict"] for r in before] == [r["verdict"] for r in after]
    assert [r["label"] for r in before] == [r["label"] for r in after]
    for b, a in zip(before, after):
        assert a["efficiency_pct"] == pytest.approx(b["efficiency_pct"], rel=1e-9)


# ---- the seed's cluster, through ingest of the shipped submissions ---------------------

@pytest.fixture(scope="module")
def shipped_table(tmp_path_factory):
    from conftest import REPO

    out = tmp_path_factory.mktemp("shipped") / "results.csv"
    run("ingest", REPO / "submissions" / "v6.0" / "AMD", "--root", REPO / "submissions", "-o", out, expect=0)
    return out


def test_the_87_gpu_server_cluster_is_93_2_percent_with_the_true_count(shipped_table):
    doc = run_json("scaling", shipped_table, expect=0)
    rows = {(r["system"], r["model"], r["scenario"]): r for r in doc["rows"]}
    server = rows[("87xMI355X_22xEPYC_9575F", "llama2-70b-99.9", "Server")]
    assert server["total_accelerators"] == 87 and server["nodes"] == 11
    assert server["expected"] == pytest.approx(87 * 100282 / 8)
    assert round(server["efficiency_pct"], 1) == 93.2
    assert server["references"][0]["rule"] == "same-submitter"
    # the official v6.0 results hold AMD's single-node Offline and Interactive too
    for scenario, single in (("Offline", 103480), ("Interactive", 73608.2)):
        row = rows[("87xMI355X_22xEPYC_9575F", "llama2-70b-99.9", scenario)]
        assert row["expected"] == pytest.approx(87 * single / 8)
    gpt = rows[("94xMI355X_24xEPYC_9575F", "gpt-oss-120b", "Server")]
    assert gpt["total_accelerators"] == 94 and gpt["expected"] == pytest.approx(94 * 82136.1 / 8)
    for key in ("submitter", "system", "model", "scenario", "nodes", "total_accelerators", "value",
                "expected", "efficiency_pct", "references", "reference_rule", "verdict", "status", "label"):
        assert key in server, key
    assert doc["summary"]["multi_node_rows"] == 8 and doc["findings"] == []


def test_scaling_text_output_and_json_file(shipped_table, tmp_path):
    out = tmp_path / "scaling.json"
    result = run("scaling", shipped_table, expect=0)
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["verdict", "efficiency_pct", "round"]
    assert any(line.startswith("sub-linear") and "87xMI355X_22xEPYC_9575F" in line for line in lines)
    assert lines[-1].startswith("summary: reference_submitter=AMD, multi_node_rows=8")
    written = run("scaling", shipped_table, "-o", out, expect=0)
    assert written.stdout.splitlines()[0] == f"wrote {out}"
    doc = json.loads(out.read_text())
    assert doc == run_json("scaling", shipped_table)
    assert set(doc) == {"summary", "findings", "rows"} and len(doc["rows"]) == 8


def test_scaling_of_a_missing_file_is_a_usage_error(tmp_path):
    run("scaling", tmp_path / "nope.csv", expect=2)


def test_scaling_reads_the_reference_submitter_from_params(tmp_path):
    cluster = canonical_row(submitter="Dell", system="16x", nodes=2, total_accelerators=16,
                            composition="MI355X:16", value=150000.0)
    rows = [cluster, canonical_row(system="amd", value=100000.0),
            canonical_row(submitter="Vendor", system="vendor", value=80000.0)]
    results = write_canonical(tmp_path / "r.csv", rows)
    params = tmp_path / "params.yaml"
    params.write_text("compare: {reference_submitter: Vendor, tolerance_pct: 4.0}\n")
    doc = run_json("scaling", results, "--params", params, expect=0)
    assert doc["rows"][0]["references"][0]["system"] == "vendor"
    doc = run_json("scaling", results, "--params", params, "--reference-submitter", "AMD", expect=0)
    assert doc["rows"][0]["references"][0]["system"] == "amd"
