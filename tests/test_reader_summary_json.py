"""``mlcommons-summary-json``: the published summary_results.json of v4.1 and v5.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline import readers
from pipeline.core.model import Source
from pipeline.ingest.submissions import ingest
from pipeline.readers import summary_json
from conftest import RULES

SHARED = Path(__file__).resolve().parent / "real"   # tests/real/PROVENANCE.md
PUBLISHED = {"v4.1": SHARED / "v4.1-summary_results.json", "v5.1": SHARED / "v5.1-summary_results.json"}


@pytest.fixture(scope="module", params=sorted(PUBLISHED))
def published(request):
    path = PUBLISHED[request.param]
    return request.param, path, json.loads(path.read_text(encoding="utf-8"))


def test_detected_from_its_head():
    for path in PUBLISHED.values():
        assert readers.detect(RULES, path) == summary_json.NAME
    assert readers.detect(RULES, SHARED / "v5.1-checker-summary.csv") == "mlcommons-summary-csv"


def test_not_claimed_without_performance_results(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('[{"ID": 1}]')
    assert readers.detect(RULES, path) is None


def test_the_file_states_its_round(published):
    round_, path, records = published
    result = readers.read(RULES, path, path.name)
    assert result.round == round_
    assert len(result.records) + len(result.dispositions) == len(records)


def test_every_record_is_accepted_excluded_or_rejected_with_a_finding(published):
    round_, path, records = published
    report = ingest(RULES, [path], status="verified", published=True)
    outcomes = report.dispositions_frame()["outcome"].value_counts().to_dict()
    assert len(report.table) + outcomes.get("rejected", 0) + outcomes.get("set-aside", 0) == len(records)
    assert len(report.table) > 500
    finding_files = {(f.file, f.place.split(",")[0]) for f in report.findings}
    for d in report.dispositions:
        if d.outcome == "rejected":
            assert d.codes and d.reason
            assert any(file == path.as_posix() for file, _ in finding_files)
        else:
            assert d.reason
    assert set(report.table["round"]) == {round_}
    assert report.table["result_id"].notna().all()


def test_known_published_values():
    report = ingest(RULES, [PUBLISHED["v5.1"]], status="verified", published=True)
    t = report.table
    row = t[(t.result_id == "5.1-0001") & (t.model == "llama2-70b-99") & (t.scenario == "Interactive")]
    assert len(row) == 1
    row = row.iloc[0]
    assert (row.submitter, row.system, row.accelerator, row.total_accelerators) == \
        ("AMD", "8xMI300X_2xEPYC_9575F", "MI300X", 8)
    assert (row.value, row.units, row.division, row.availability) == (8840.42, "Tokens/s", "closed", "available")
    assert row.system_name == "Supermicro AS-8125GS-TNMR2"
    old = ingest(RULES, [PUBLISHED["v4.1"]], status="verified", published=True).table
    first = old[(old.result_id == "v4.1-0001") & (old.scenario == "Offline")
                & (old.model == "llama2-70b-99")].iloc[0]
    assert (first.system, first.value, first.accelerators_per_node) == ("1xMI300X_2xEPYC-9374F", 3062.72, 1)


def test_cpu_only_and_power_rows_are_excluded_not_rejected():
    result = readers.read(RULES, PUBLISHED["v5.1"], "v5.1.json")
    cpu = [r for r in result.records if not r.fields.get("accelerator")]
    power = [r for r in result.records if r.fields.get("power") == "true"]
    assert cpu and power
    report = ingest(RULES, [PUBLISHED["v5.1"]], status="verified", published=True)
    reasons = {d.reason for d in report.dispositions if d.outcome == "set-aside"}
    assert any("CPU-only" in r for r in reasons) and any("power" in r for r in reasons)


def test_places_name_record_id_and_key(tmp_path):
    records = json.loads(PUBLISHED["v5.1"].read_text())[:2]
    records[1]["Performance_Result"] = "12,5"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(records, indent=2))
    report = ingest(RULES, [path], status="verified")
    bad = [f for f in report.findings if f.code == "malformed-number"]
    assert len(bad) == 1
    start = 2 + 35 + 1   # the line where record 2 starts
    assert bad[0].where == Source(path.as_posix(), start, key="Performance_Result", row=2)
    assert bad[0].found == "12,5"
    assert report.dispositions[0].source == f"{path.as_posix()}:{start}"


def test_deep_nesting_is_a_finding_not_a_recursion_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('[{"Performance_Result": ' + "[" * 500_000 + "]" * 500_000 + "}]")
    assert readers.detect(RULES, path) == summary_json.NAME
    result = readers.read(RULES, path, "deep.json")
    assert [f.code for f in result.findings] == ["too-deeply-nested"]
    assert result.findings[0].place == "line 1"
    assert not result.records


@pytest.mark.parametrize("text, code", [
    ('[{"Performance_Result": 1,}', "format-mismatch"),
    ('{"Performance_Result": 1}', "format-mismatch"),
])
def test_broken_or_wrong_shaped_json(tmp_path, text, code):
    path = tmp_path / "x.json"
    path.write_text(text)
    result = summary_json.read(path, "x.json", RULES)
    assert [f.code for f in result.findings] == [code] and not result.records


def test_a_record_that_is_not_an_object_is_rejected(tmp_path):
    good = json.loads(PUBLISHED["v5.1"].read_text())[0]
    path = tmp_path / "x.json"
    path.write_text(json.dumps([good, 7]))
    result = summary_json.read(path, "x.json", RULES)
    assert len(result.records) == 1
    assert [(d.outcome, d.codes) for d in result.dispositions] == [("rejected", "format-mismatch")]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=30)


@given(st.lists(st.dictionaries(st.sampled_from(sorted(summary_json.KEY_MAP.values()) + ["has_power", "x"]),
                                JSON_VALUES, max_size=8), max_size=5))
def test_any_list_of_records_is_read_without_raising(tmp_path_factory, records):
    path = tmp_path_factory.mktemp("h") / "s.json"
    path.write_text(json.dumps(records))
    result = summary_json.read(path, "s.json", RULES)
    if result.findings:     # a value nested past MAX_DEPTH refuses the whole file, with a finding
        assert [f.code for f in result.findings] == ["too-deeply-nested"] and not result.records
    else:
        assert len(result.records) == len(records)


# ---- every distinct published result is kept (tables shipped in the project) ----

SHIPPED_TABLES = {"v4.1": Path(__file__).resolve().parent / "real" / "v4.1-summary_results.json",
                  "v5.1": Path(__file__).resolve().parents[1] / "published" / "v5.1" / "summary_results.json"}


@pytest.fixture(scope="module", params=sorted(SHIPPED_TABLES))
def shipped_table(request):
    path = SHIPPED_TABLES[request.param]
    return request.param, json.loads(path.read_text(encoding="utf-8")), ingest(RULES, [path], status="verified",
                                                                               published=True)


def test_every_distinct_published_result_is_kept(shipped_table):
    """No record rejected; each accepted row is a distinct (ID, used model,
    scenario); the rest are CPU-only or power rows, excluded with a reason."""
    round_, records, report = shipped_table
    outcomes = report.dispositions_frame()["outcome"].value_counts().to_dict()
    assert outcomes.get("rejected", 0) == 0, round_
    assert not [f for f in report.findings if f.severity == "error"]
    t = report.table
    assert len(t) + outcomes.get("set-aside", 0) == len(records)
    assert not t.duplicated(["result_id", "used_model", "model", "scenario"]).any()
    # computed independently: the records that are neither power nor CPU-only results
    kept = [r for r in records if not r.get("has_power") and r.get("Accelerator") not in (None, "", "N/A")
            and str(r.get("a#", "")) not in ("0",)]
    assert len(t) == len(kept)
    assert sorted(t["value"]) == sorted(float(r["Performance_Result"]) for r in kept)


def test_v51_results_that_share_a_system_model_and_scenario_are_all_kept():
    report = ingest(RULES, [SHIPPED_TABLES["v5.1"]], status="verified")
    t = report.table
    amd = t[t["result_id"].isin(["5.1-0100", "5.1-0101"])]
    assert sorted(zip(amd["result_id"], amd["used_model"], amd["value"])) == [
        ("5.1-0100", "llama3_1-405b_finetuned", 2019.04), ("5.1-0101", "llama3_1-405b_pruned", 1942.15)]
    krai = t[t["result_id"].isin(["5.1-0380", "5.1-0381", "5.1-0382", "5.1-0383"])]
    assert len(krai) == 8 and set(krai["accelerator_variant"]) == {"H200 SXM 141GB"}
    assert not [f for f in report.findings if f.code == "duplicate-row"]


def test_a_published_count_wins_over_a_count_in_the_system_name():
    report = ingest(RULES, [SHIPPED_TABLES["v5.1"]], status="verified")
    t = report.table
    redhat = t[t["system"] == "XE8640_4xH100_vLLM"]
    assert len(redhat) == 2 and set(redhat["total_accelerators"]) == {1}
    assert set(redhat["accelerator_variant"]) == {"H100 SXM 80GB"}
    [warning] = [f for f in report.findings if f.code == "accelerator-count-disagrees"]
    assert warning.severity == "warning" and "XE8640_4xH100_vLLM" in warning.found
    assert (warning.where.row, warning.where.key) == (537, "a#")   # the record of ID 5.1-0083


def test_whose_names_a_table_holds_is_decided_by_where_it_lives(tmp_path):
    """The same published records: under a published/ folder they are
    MLCommons' (a count that disagrees is noted, the row kept); anywhere else
    (a partner's copy) the same label is refused."""
    records = json.loads(SHIPPED_TABLES["v5.1"].read_text(encoding="utf-8"))
    redhat = [r for r in records if r["Platform"] == "XE8640_4xH100_vLLM"]
    text = json.dumps(redhat, indent=2)
    kept = tmp_path / "published" / "v5.1" / "summary_results.json"
    partner = tmp_path / "submissions" / "summary_results.json"
    for path in (kept, partner):
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
    mlcommons = ingest(RULES, [kept], status="verified")
    assert len(mlcommons.table) == 2 and not mlcommons.dispositions
    assert {(f.code, f.severity) for f in mlcommons.findings} == {("accelerator-count-disagrees", "warning")}
    partners = ingest(RULES, [partner], status="verified")
    assert partners.table.empty and {d.codes for d in partners.dispositions} == {"label-mismatch"}
    assert {(f.code, f.severity, f.where.key) for f in partners.findings} == {("label-mismatch", "error", "a#")}
