"""`mlrepro compare`: each partner result against AMD's reference (±4 %)."""

from __future__ import annotations

import json

import pytest

from conftest import UNVERIFIED_FOOTNOTE, canonical_row, read_csv, run, run_json, write_canonical


pytestmark = pytest.mark.usefixtures("no_project_params")


def ref(**kw) -> dict:
    return canonical_row(**kw)


def partner(system: str, value: float, submitter: str = "Dell", **kw) -> dict:
    return canonical_row(submitter=submitter, system=system, value=value,
                         source=f"v6.0/{submitter}/v1/results.csv:{2 + len(system) % 7}", **kw)


def compare_json(tmp_path, rows, *extra, expect=None) -> tuple[dict, dict]:
    results = write_canonical(tmp_path / "results.csv", rows)
    doc = run_json("compare", results, "-o", tmp_path / "agreement.csv", *extra, expect=expect)
    return doc, {r["system"]: r for r in doc["rows"]}


BOUNDARY = [  # system, value against a 100000 reference, expected deviation %, verdict
    ("P+3.99", 103990.0, 3.99, "agree"),
    ("P+4.00", 104000.0, 4.00, "agree"),
    ("P+4.01", 104010.0, 4.01, "deviates"),
    ("P-4.00", 96000.0, -4.00, "agree"),
    ("P-4.01", 95990.0, -4.01, "deviates"),
]


def test_verdicts_at_the_tolerance_boundary(tmp_path):
    rows = [ref(value=100000.0)] + [partner(s, v) for s, v, _, _ in BOUNDARY]
    doc, by_system = compare_json(tmp_path, rows, expect=1)
    for system, _, deviation, verdict in BOUNDARY:
        row = by_system[system]
        assert row["verdict"] == verdict, system
        assert row["deviation_pct"] == pytest.approx(deviation, abs=1e-6), system
        assert row["reference_system"] == "8xMI355X_2xEPYC_9575F"
        assert row["reference_value"] == 100000.0
        assert row["reference_rule"] == "only candidate"
        assert row["tolerance_pct"] == 4.0
        assert row["label"] == "verified" and row["footnote"] == ""
    s = doc["summary"]
    assert (s["partner_rows"], s["agree"], s["deviates"]) == (5, 3, 2)
    assert s["partners"]["Dell"]["agreement_rate"] == 0.6
    # each deviating row is a finding with the partner's file and line
    assert sorted(f["found"] for f in doc["findings"]) == ["104010.0 (+4.01%)", "95990.0 (-4.01%)"]
    assert {f["code"] for f in doc["findings"]} == {"deviates-from-reference"}


def test_the_reference_rows_are_not_compared_with_themselves(tmp_path):
    doc, by_system = compare_json(tmp_path, [ref(), partner("D1", 100000.0)], expect=0)
    assert list(by_system) == ["D1"]
    assert {r["submitter"] for r in doc["rows"]} == {"Dell"}


def test_a_real_reference_at_exactly_plus_four_percent_agrees(tmp_path):
    # AMD v5.1 8xMI300X llama2-70b-99 Server: 24593.8 tokens/s.
    amd = ref(round="v5.1", system="8xMI300X_2xEPYC_9575F", accelerator="MI300X",
              composition="MI300X:8", value=24593.8)
    rows = [amd, partner("Edge", 24593.8 * 1.04, round="v5.1", accelerator="MI300X",
                         composition="MI300X:8")]
    _, by_system = compare_json(tmp_path, rows, expect=0)
    assert by_system["Edge"]["verdict"] == "agree"
    assert by_system["Edge"]["deviation_pct"] == pytest.approx(4.0)


def test_no_reference(tmp_path):
    rows = [ref(scenario="Offline"), partner("D1", 100000.0, scenario="Server"),
            partner("D2", 100000.0, nodes=2, total_accelerators=16)]
    doc, by_system = compare_json(tmp_path, rows, expect=0)
    for system in ("D1", "D2"):
        assert by_system[system]["verdict"] == "no-reference"
        assert by_system[system]["reference_system"] is None
        assert by_system[system]["deviation_pct"] is None
    assert doc["summary"]["no-reference"] == 2


@pytest.mark.parametrize(("partner_kw", "reference_kw", "reason"), [
    ({"division": "open"}, {}, "division differs (open against closed)"),
    ({"system": "8xMI355X_Power_Cap_1000W"}, {}, "power-capped configuration"),
    ({}, {"system": "8xMI355X_Power_Cap_1000W"}, "reference 8xMI355X_Power_Cap_1000W is power-capped"),
    ({"model": "llama3.1-8b", "scenario": "Interactive", "units": "Queries/s"},
     {"model": "llama3.1-8b", "scenario": "Interactive", "units": "Tokens/s"},
     "units differ (Queries/s against Tokens/s)"),
    ({"accelerator": "B200", "composition": "B200:8"}, {},
     "not a partner result: B200 is NVIDIA's, not AMD's"),
])
def test_excluded_rows_say_why(tmp_path, partner_kw, reference_kw, reason):
    kw = {"system": "D1", **partner_kw}
    rows = [ref(**reference_kw), partner(kw.pop("system"), 101000.0, **kw)]
    doc, _ = compare_json(tmp_path, rows, expect=0)
    [row] = doc["rows"]
    assert row["verdict"] == "excluded"
    assert row["reason"] == reason
    assert row["deviation_pct"] is None
    assert doc["summary"]["excluded"] == 1 and doc["findings"] == []


def test_several_reference_systems_use_the_best_value(tmp_path):
    # AMD v5.1 had two MI325X systems for llama2-70b-99 Offline.
    mi325 = {"round": "v5.1", "accelerator": "MI325X", "composition": "MI325X:8",
             "scenario": "Offline"}
    rows = [ref(system="8xMI325X_2xEPYC_9575F_1", value=34520.4, **mi325),
            ref(system="8xMI325X_2xEPYC_9575F_2", value=34555.0, **mi325),
            partner("XE9680_MI325X", 33900.0, **mi325)]
    _, by_system = compare_json(tmp_path, rows, expect=0)
    row = by_system["XE9680_MI325X"]
    assert row["reference_system"] == "8xMI325X_2xEPYC_9575F_2"
    assert row["reference_value"] == 34555.0
    assert row["deviation_pct"] == pytest.approx((33900.0 - 34555.0) / 34555.0 * 100, abs=1e-6)
    assert row["reference_rule"] == (
        "best of 2 (highest value; ties by system id): "
        "8xMI325X_2xEPYC_9575F_2, 8xMI325X_2xEPYC_9575F_1")


def test_the_rule_is_deterministic_whatever_the_row_order(tmp_path):
    rows = [ref(system="B_sys", value=100000.0), ref(system="A_sys", value=100000.0),
            partner("D1", 103000.0)]
    _, first = compare_json(tmp_path, rows, expect=0)
    _, second = compare_json(tmp_path, list(reversed(rows)), expect=0)
    assert first["D1"]["reference_system"] == second["D1"]["reference_system"] == "A_sys"
    assert first["D1"]["reference_rule"] == second["D1"]["reference_rule"]


def test_for_latency_the_best_reference_is_the_lowest(tmp_path):
    lat = {"model": "llama3.1-8b", "scenario": "SingleStream", "units": "Latency (ms)"}
    rows = [ref(system="R_slow", value=12.0, **lat), ref(system="R_fast", value=10.0, **lat),
            partner("D1", 10.3, **lat)]
    _, by_system = compare_json(tmp_path, rows, expect=0)
    assert by_system["D1"]["reference_system"] == "R_fast"
    assert by_system["D1"]["reference_rule"].startswith("best of 2 (lowest latency")
    assert by_system["D1"]["verdict"] == "agree"


def test_post_deadline_partner_rows_are_labelled_unverified(tmp_path):
    rows = [ref(value=100000.0), partner("Late", 102000.0, status="post-deadline")]
    doc, by_system = compare_json(tmp_path, rows, expect=0)
    row = by_system["Late"]
    assert row["verdict"] == "agree"
    assert row["partner_status"] == "post-deadline"
    assert row["status"] == "post-deadline"
    assert row["label"] == "unverified"
    assert row["footnote"] == UNVERIFIED_FOOTNOTE


def test_text_output_puts_the_footnote_under_unverified_rows(tmp_path):
    results = write_canonical(tmp_path / "results.csv",
                              [ref(), partner("Late", 102000.0, status="post-deadline")])
    result = run("compare", results, expect=0)   # no -o: the table is printed
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["verdict", "deviation_pct", "round", "submitter"]
    assert lines[1].split()[-2] == "unverified"
    assert "unverified: Result not verified by MLCommons Association." in lines


def test_a_post_deadline_reference_makes_the_row_unverified(tmp_path):
    rows = [ref(status="post-deadline"), partner("Late", 100500.0, status="post-deadline")]
    _, by_system = compare_json(tmp_path, rows, expect=0)
    assert by_system["Late"]["reference_status"] == "post-deadline"
    assert by_system["Late"]["label"] == "unverified"


def test_a_verified_partner_is_never_compared_with_a_post_deadline_reference(tmp_path):
    rows = [ref(status="post-deadline"), partner("D1", 100500.0)]
    _, by_system = compare_json(tmp_path, rows, expect=0)
    assert by_system["D1"]["verdict"] == "no-reference"
    assert by_system["D1"]["reference_system"] is None


def test_tolerance_option_overrides_the_default(tmp_path):
    rows = [ref(value=100000.0), partner("P+4.01", 104010.0), partner("P+4.50", 104500.0)]
    _, default = compare_json(tmp_path, rows, expect=1)
    assert default["P+4.01"]["verdict"] == "deviates"
    doc, wider = compare_json(tmp_path, rows, "--tolerance-pct", "4.5", expect=0)
    assert wider["P+4.01"]["verdict"] == wider["P+4.50"]["verdict"] == "agree"
    assert wider["P+4.01"]["tolerance_pct"] == 4.5 and doc["summary"]["tolerance_pct"] == 4.5


def test_params_file_sets_the_defaults_and_the_option_wins(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("compare:\n  tolerance_pct: 3.5\n")
    rows = [ref(value=100000.0), partner("P+3.99", 103990.0)]
    _, by_params = compare_json(tmp_path, rows, "--params", params, expect=1)
    assert by_params["P+3.99"]["verdict"] == "deviates"
    assert by_params["P+3.99"]["tolerance_pct"] == 3.5
    _, by_option = compare_json(tmp_path, rows, "--params", params, "--tolerance-pct", "4",
                                expect=0)
    assert by_option["P+3.99"]["verdict"] == "agree"


def test_params_yaml_in_the_working_folder_is_read_by_default(tmp_path):
    (tmp_path / "params.yaml").write_text("compare:\n  tolerance_pct: 3.5\n")
    _, by_system = compare_json(tmp_path, [ref(), partner("P+3.99", 103990.0)], expect=1)
    assert by_system["P+3.99"]["tolerance_pct"] == 3.5


def test_params_file_sets_the_reference_submitter(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("compare:\n  reference_submitter: Supermicro\n")
    rows = [ref(submitter="Supermicro", value=100000.0), partner("D1", 103000.0)]
    doc, by_system = compare_json(tmp_path, rows, "--params", params, expect=0)
    assert by_system["D1"]["reference_submitter"] == "Supermicro"
    assert by_system["D1"]["verdict"] == "agree"
    assert doc["summary"]["reference_submitter"] == "Supermicro"


@pytest.mark.parametrize("tolerance", ["-1", "nan", "inf"])
def test_a_tolerance_that_is_no_bound_is_a_usage_error(tmp_path, tolerance):
    results = write_canonical(tmp_path / "results.csv", [ref(), partner("D1", 100000.0)])
    run("compare", results, "-o", tmp_path / "a.csv", "--tolerance-pct", tolerance, expect=2)
    assert not (tmp_path / "a.csv").exists()


@pytest.mark.parametrize("text", ["compare:\n  tolerance_pct: -2\n", "compare:\n  tolerance_pct: .nan\n",
                                  "compare: [1\n", "- just a list\n"])
def test_a_broken_params_file_is_a_configuration_error(tmp_path, text):
    params = tmp_path / "params.yaml"
    params.write_text(text)
    results = write_canonical(tmp_path / "results.csv", [ref(), partner("D1", 100000.0)])
    result = run("compare", results, "-o", tmp_path / "a.csv", "--params", params, expect=3)
    assert result.stderr.startswith("configuration error: ")


def test_outputs_agreement_table_and_summary(tmp_path):
    rows = [ref(), partner("D1", 103000.0), partner("H1", 105000.0, submitter="HPE")]
    results = write_canonical(tmp_path / "results.csv", rows)
    out, summary = tmp_path / "agreement.csv", tmp_path / "summary.json"
    run("compare", results, "-o", out, "--summary-out", summary, "--exit-zero", expect=0)
    table = read_csv(out)
    assert [(r["submitter"], r["verdict"]) for r in table] == [("Dell", "agree"), ("HPE", "deviates")]
    data = json.loads(summary.read_text())
    assert data["partners"]["Dell"]["agreement_rate"] == 1.0
    assert data["partners"]["HPE"]["agreement_rate"] == 0.0
