"""`mlrepro compare`, the command: its JSON, text and file outputs, exit codes,
the tolerance option and params.yaml. The rules it applies (the agreement
bound, the reference choice, exclusions, verified and post-deadline) are
tests/test_compare_rules.py, in memory."""

from __future__ import annotations

import json

import pytest

from conftest import UNVERIFIED_FOOTNOTE, canonical_row, read_csv, run, run_json, write_canonical


pytestmark = pytest.mark.usefixtures("no_project_params")


def ref(**kw) -> dict:
    return canonical_row(**kw)


def partner(system: str, value: float, submitter: str = "Dell", **kw) -> dict:
    return canonical_row(submitter=submitter, system=system, value=value,
                         file=f"v6.0/{submitter}/v1/results.csv", line=2 + len(system) % 7, **kw)


def compare_json(tmp_path, rows, *extra, expect=None) -> tuple[dict, dict]:
    results = write_canonical(tmp_path / "results.csv", rows)
    doc = run_json("compare", results, "-o", tmp_path / "agreement.csv", *extra, expect=expect)
    return doc, {r["system"]: r for r in doc["rows"]}


def test_json_holds_the_rows_the_located_findings_and_the_summary_and_a_deviation_exits_1(tmp_path):
    rows = [ref(value=100000.0), partner("P+4.00", 104000.0), partner("P+4.01", 104010.0)]
    doc, by_system = compare_json(tmp_path, rows, expect=1)
    assert [(r["system"], r["verdict"], r["deviation_pct"]) for r in doc["rows"]] == [
        ("P+4.00", "agree", 4.0), ("P+4.01", "deviates", 4.01)]
    assert by_system["P+4.01"]["reference_system"] == "8xMI355X_2xEPYC_9575F"
    s = doc["summary"]
    assert (s["partner_rows"], s["agree"], s["deviates"], s["tolerance_pct"]) == (2, 1, 1, 4.0)
    assert s["partners"]["Dell"]["agreement_rate"] == 0.5
    [f] = doc["findings"]
    assert (f["code"], f["severity"], f["found"]) == ("deviates-from-reference", "error", "104010.0 (+4.01%)")
    assert (f["file"], f["line"], f["column"]) == ("submissions/v6.0/Dell/v1/results.csv", 2 + len("P+4.01") % 7, "value")


def test_text_output_puts_the_footnote_under_unverified_rows(tmp_path):
    results = write_canonical(tmp_path / "results.csv",
                              [ref(), partner("Late", 102000.0, status="post-deadline")])
    result = run("compare", results, expect=0)   # no -o: the table is printed
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["verdict", "deviation_pct", "round", "submitter"]
    assert lines[1].split()[-2] == "unverified"
    assert "unverified: Result not verified by MLCommons Association." in lines


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
                                  "compare:\n  tolerance_pct: .inf\n", "compare:\n  tolerance_pct: 150\n",
                                  "compare:\n  tolerance_pc: 3\n", "compare:\n", "compare: 4.0\n",
                                  "compare: [1\n", "- just a list\n"])
def test_a_broken_params_file_is_a_configuration_error(tmp_path, text):
    params = tmp_path / "params.yaml"
    params.write_text(text)
    results = write_canonical(tmp_path / "results.csv", [ref(), partner("D1", 100000.0)])
    result = run("compare", results, "-o", tmp_path / "a.csv", "--params", params, expect=3)
    assert result.stderr.startswith("configuration error: ")


def test_a_params_file_error_names_the_line_the_key_and_what_is_expected(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("compare:\n  reference_submitter: AMD\n  tolerance_pct: 400\n")
    results = write_canonical(tmp_path / "results.csv", [ref(), partner("D1", 100000.0)])
    stderr = run("compare", results, "-o", tmp_path / "a.csv", "--params", params, expect=3).stderr
    assert f"{params}:3: key compare.tolerance_pct: expected the agreement tolerance in percent" in stderr
    assert "found 400" in stderr and "params.schema.json" in stderr


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
