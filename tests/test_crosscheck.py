"""`mlrepro crosscheck`: results declared verified, looked up in the table
MLCommons published for their round (published/<round>/)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import RULES, LATE, ON_TIME, REPO, run, run_json, submit, write_results_csv, results_row

from pipeline.analyses import crosscheck
from pipeline.ingest import submissions as ingest_mod
from pipeline.core.formulas import deviation_pct

V60 = REPO / "published" / "v6.0" / "summary.csv"
V51 = REPO / "published" / "v5.1" / "summary_results.json"
DELL = REPO / "submissions" / "v6.0" / "Dell" / "v1" / "summary.csv"


def _table(tmp_path, *sources, status="verified", extra=()):
    out = tmp_path / "results.csv"
    run("ingest", *sources, "--status", status, *extra, "-o", out, expect=0)
    return out


def test_the_official_partner_rows_match(tmp_path):
    results = _table(tmp_path, DELL)
    doc = run_json("crosscheck", results, "--published", V60, expect=0)
    assert doc["summary"]["checked"] == 18 and doc["summary"]["matches"] == 18
    assert doc["findings"] == []
    row = doc["rows"][0]
    assert row["deviation_pct"] == 0 and row["published_value"] == row["value"]


def test_a_changed_partner_row_differs_with_both_values_and_the_deviation(tmp_path):
    lines = DELL.read_text(encoding="utf-8").splitlines()
    [index] = [i for i, line in enumerate(lines) if '"8xMI355X_2xEPYC_9655"' in line
               and '"llama2-70b-99","llama2-70b-99","Server"' in line]
    lines[index] = lines[index].replace('"96734.4"', '"99734.4"')
    changed = tmp_path / "summary.csv"
    changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    results = _table(tmp_path, changed)
    out = tmp_path / "crosscheck.json"
    doc = run_json("crosscheck", results, "--published", V60, "-o", out, expect=1)
    assert json.loads(out.read_text()) == doc
    [differs] = [r for r in doc["rows"] if r["verdict"] == "differs"]
    assert (differs["value"], differs["published_value"]) == (99734.4, 96734.4)
    assert differs["deviation_pct"] == pytest.approx((99734.4 - 96734.4) / 96734.4 * 100, abs=1e-6)
    [f] = doc["findings"]
    assert f["code"] == "published-value-differs" and f["file"] == changed.as_posix()
    assert f["place"] == f"line {index + 1}, column value"
    assert "96734.4" in f["expected"] and "99734.4" in f["found"]
    assert doc["summary"]["differs"] == 1 and doc["summary"]["matches"] == 17
    # within a tolerance it matches
    doc = run_json("crosscheck", results, "--published", V60, "--tolerance-pct", "3.2", expect=0)
    assert doc["summary"]["differs"] == 0


def test_an_invented_partner_row_is_not_published(tmp_path, root):
    invented = write_results_csv(tmp_path / "r.csv", [results_row(system="PowerEdge_XE9785_8xMI355X")])
    submit(root, invented)
    results = tmp_path / "results.csv"
    run("ingest", root, "--root", root, "-o", results, expect=0)
    doc = run_json("crosscheck", results, "--published", V60, expect=1)
    [row] = doc["rows"]
    assert row["verdict"] == "not-published" and row["published_value"] is None
    [f] = doc["findings"]
    assert (f["code"], f["file"], f["place"]) == ("not-published", "v6.0/Dell/v1/r.csv",
                                                  "line 2, column value")
    assert run("crosscheck", results, "--published", V60, "--exit-zero", expect=0)


def test_post_deadline_rows_and_rounds_without_a_table_are_not_looked_up(tmp_path, root):
    late = write_results_csv(tmp_path / "late.csv", [results_row(system="Invented_1")])
    submit(root, late, "Dell", "post-deadline", LATE)
    other = write_results_csv(tmp_path / "v51.csv", [results_row(system="Invented_2", model="llama2-70b-99")])
    submit(root, other, "Dell", "verified", "2025-07-01T00:00:00+00:00", "v5.1")
    results = tmp_path / "results.csv"
    run("ingest", root, "--root", root, "-o", results, expect=0)
    doc = run_json("crosscheck", results, "--published", V60, expect=0)
    assert doc["rows"] == []
    assert doc["summary"]["not_checked_post_deadline"] == 1
    assert doc["summary"]["not_checked_no_published_table"] == 1


def test_the_result_id_and_used_model_tell_published_results_apart(tmp_path):
    """v5.1 AMD 5.1-0100 (finetuned) and 5.1-0101 (pruned): one system, model and
    scenario, two published results."""
    published, _ = crosscheck.load_published(RULES, [V51])
    rows = [results_row(submitter="AMD", system="8xMI355X_2xEPYC_9575F", model="llama3.1-405b",
                        scenario="Offline", value=v, result_id=rid, division="open", round="v5.1")
            for v, rid in ((2019.04, "5.1-0100"), (1942.15, "5.1-0101"), (1942.15, "5.1-0100"))]
    both = write_results_csv(tmp_path / "amd.csv", rows[:2], header=tuple(rows[0]))
    wrong = write_results_csv(tmp_path / "wrong.csv", rows[2:], header=tuple(rows[0]))
    tables = [ingest_mod.ingest(RULES, [p], status="verified").table for p in (both, wrong)]
    assert [len(t) for t in tables] == [2, 1]    # two distinct results, no duplicate
    report = crosscheck.check(pd.concat(tables, ignore_index=True), published)
    assert [r["verdict"] for r in report.rows] == ["matches", "matches", "differs"]
    assert report.rows[2]["published_value"] == 2019.04
    assert report.rows[2]["deviation_pct"] == pytest.approx(deviation_pct(1942.15, 2019.04), abs=1e-6)
    assert [f.code for f in report.findings] == ["published-value-differs"]


def test_the_library_report_is_what_the_cli_prints(tmp_path):
    results = _table(tmp_path, DELL)
    from pipeline.ingest import table as table_mod

    published, _ = crosscheck.load_published(RULES, [V60])
    report = crosscheck.check(table_mod.read(results), published)
    doc = run_json("crosscheck", results, "--published", V60, expect=0)
    assert doc == json.loads(json.dumps(report.to_dict(), default=str))


def test_every_shipped_verified_result_is_published(tmp_path):
    results = tmp_path / "results.csv"
    run("ingest", REPO / "submissions", "--root", REPO / "submissions", "-o", results, expect=0)
    doc = run_json("crosscheck", results, "--published", V60, "--published", V51, expect=0)
    s = doc["summary"]
    assert s["checked"] > 200 and s["matches"] == s["checked"], s
    assert s["not_checked_post_deadline"] == 2    # AMD's post-deadline Wan-2.2


def test_text_output_and_usage_errors(tmp_path):
    results = _table(tmp_path, DELL)
    result = run("crosscheck", results, "--published", V60, expect=0)
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["verdict", "deviation_pct", "round"]
    assert lines[-1].startswith("summary: tolerance_pct=0, published_rounds=") is False
    assert lines[-1].startswith("summary: tolerance_pct=0, checked=18, matches=18")
    run("crosscheck", results, expect=2)                                   # --published is required
    run("crosscheck", results, "--published", V60, "--tolerance-pct", "-1", expect=2)
