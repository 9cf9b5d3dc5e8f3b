"""The messages a newcomer meets first, tried as a partner would: each names the
file, the place, expected and found, and the fix."""

from __future__ import annotations

import pytest

from conftest import REPO, run, run_json

TEMPLATE = (REPO / "docs" / "templates" / "results.csv").read_text(encoding="utf-8")
REAL_V60 = REPO / "tests" / "real" / "v6.0-checker-summary.csv"


def test_an_unquoted_thousands_separator_names_its_column_and_the_fix(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(TEMPLATE.replace(",102750,", ",1,234.5,", 1), encoding="utf-8")
    doc = run_json("ingest", path, "--status", "verified", "--round", "v6.0", "-o", tmp_path / "o.csv", expect=1)
    [f] = doc["findings"]
    assert (f["code"], f["line"], f["column"]) == ("format-mismatch", 2, "value")
    assert "the value field probably holds an unquoted comma (1,234.5); write 1234.5" in f["message"]


@pytest.mark.parametrize("command", [
    ("submit", "{csv}", "--submitter", "ExamplePartner", "--dry-run", "--root", "{root}"),
    ("ingest", "{csv}", "--status", "verified", "-o", "{out}"),
    ("validate", "{csv}", "--status", "verified"),
])
def test_a_round_the_registry_lacks_is_a_usage_error_listing_the_rounds_newest_first(tmp_path, command):
    csv = tmp_path / "results.csv"
    csv.write_text(TEMPLATE, encoding="utf-8")
    args = [a.format(csv=csv, root=tmp_path / "submissions", out=tmp_path / "o.csv") for a in command]
    result = run(*args, "--round", "v7.0", expect=2)
    assert result.stderr.startswith(f"Usage: mlrepro {command[0]} ")
    line = next(line for line in result.stderr.splitlines() if line.startswith("Error: "))
    assert line.startswith("Error: --round v7.0: no round of that name in schemas/rounds.yaml; known: v6.1, v6.0, ")
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "submissions").exists()


def test_a_count_mismatch_says_the_names_count_as_expected_and_the_columns_as_found(tmp_path):
    path = tmp_path / "results.csv"
    header, first = TEMPLATE.splitlines()[:2]
    path.write_text(header + "\n" + first.replace("ExampleServer_8xMI355X", "8xMI355X_2xEPYC_9575F")
                    .replace(",8,1,", ",7,1,") + "\n", encoding="utf-8")
    doc = run_json("ingest", path, "--status", "verified", "--round", "v6.0", "-o", tmp_path / "o.csv", expect=1)
    [f] = [f for f in doc["findings"] if f["code"] == "label-mismatch"]
    assert f["column"] == "accelerators_per_node"
    assert f["expected"] == "8 stated in the name '8xMI355X_2xEPYC_9575F': nodes x per node = 8"
    assert f["found"] == "7 (nodes 1 x per node 7)"


def test_a_published_table_read_from_elsewhere_is_told_where_mlcommons_tables_go(tmp_path):
    """The real v6.0 table with one part the registry lacks (a made-up MI999X): refused from a
    temporary folder (with how to read it as MLCommons'), kept from published/v6.0/."""
    text = REAL_V60.read_text(encoding="utf-8").replace("AMD Instinct MI355X 288GB HBM3e (x87)",
                                                         "AMD Instinct MI999X 512GB HBM9 (x87)", 1)
    outside = tmp_path / "summary.csv"
    outside.write_text(text, encoding="utf-8")
    doc = run_json("ingest", outside, "--status", "verified", "-o", tmp_path / "o.csv", expect=1)
    [f] = [f for f in doc["findings"] if f["code"] == "unknown-accelerator"]
    assert "MI999X" in f["found"] and f["line"] == 2
    assert "if the file is MLCommons' published table, read it from published/v6.0/summary.csv" in f["message"]
    inside = tmp_path / "published" / "v6.0" / "summary.csv"
    inside.parent.mkdir(parents=True)
    inside.write_text(text, encoding="utf-8")
    kept = run_json("ingest", inside, "--status", "verified", "-o", tmp_path / "o2.csv", expect=0)
    assert [f["code"] for f in kept["findings"] if "MI999X" in str(f["found"])] == ["unregistered-name"]
    assert len(kept["rows"]) == len(run_json("ingest", REAL_V60, "--status", "verified", "-o",
                                             tmp_path / "o3.csv")["rows"])
