"""The command line as a user meets it: exit codes, JSON output, help, README.

Exit codes: 0 clean, 1 the data failed a check, 2 usage error,
3 configuration or environment problem, 4 internal error (a bug).
"""

from __future__ import annotations

import json
import shutil
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import (DATA, ON_TIME, REPO, canonical_row, read_csv, run, run_json, submit,
                      write_canonical)

from pipeline.ingest import table
from pipeline.cli import cli

COMMANDS = sorted(cli.commands)


pytestmark = pytest.mark.usefixtures("no_project_params")


# ---- exit codes -------------------------------------------------------------------

def test_exit_0_for_clean_data(tmp_path):
    result = run("ingest", DATA / "results-dell.csv", "--status", "verified", "--round", "v6.0",
                 "-o", tmp_path / "out.csv", expect=0)
    assert result.stderr == ""


def test_exit_1_when_the_data_fails_a_check(tmp_path):
    result = run("ingest", DATA / "results-value-with-space.csv", "--status", "verified",
                 "--round", "v6.0", "-o", tmp_path / "out.csv", expect=1)
    assert result.stderr.startswith("error: ")
    assert "[malformed-number]" in result.stderr
    assert (tmp_path / "out.csv").exists()  # outputs are still written: findings are data


@pytest.mark.parametrize("args", [
    ["nosuch"],
    ["ingest", "--bogus"],
    ["ingest", "{data}/results-dell.csv", "--input-format", "bogus", "--status", "verified"],
    ["compare", "{data}/results-dell.csv", "--params", "{data}/nosuch.yaml"],
    ["ingest", "{data}/results-dell.csv", "-o", "out.csv"],      # raw file without --status
    ["ingest", "{data}/results-dell.csv", "-o", "out.csv", "--status", "maybe"],
    ["ingest", "{data}/does-not-exist.csv", "-o", "out.csv", "--status", "verified"],
    ["ingest", "{data}/..", "-o", "out.csv"],                    # not a submissions folder
    ["compare", "{data}/does-not-exist.csv", "-o", "out.csv"],
    ["compare", "{data}/results-dell.csv", "-o", "out.csv", "--tolerance-pct", "four"],
    ["partition", "{data}/results-dell.csv", "--verified-out", "v.csv"],
    ["submit", "{data}/results-dell.csv", "--submitter", "Dell", "--round", "v6.0",
     "--status", "verified", "--submitted-at", "2026-02-20T10:00:00"],
])
def test_exit_2_for_usage_errors(tmp_path, args):
    args = [a.replace("{data}", str(DATA)) for a in args]
    result = run(*args, expect=2)
    assert "Error: " in result.stderr
    assert "Usage: mlrepro" in result.stderr
    assert not (tmp_path / "out.csv").exists()
    assert not (tmp_path / "submissions").exists()


def test_usage_error_for_a_raw_file_without_status_names_the_option(tmp_path):
    result = run("ingest", DATA / "results-dell.csv", "-o", tmp_path / "out.csv", expect=2)
    assert "a raw file needs --status" in result.stderr


def test_exit_3_when_the_schemas_folder_is_empty(broken_schemas, tmp_path):
    result = run("ingest", DATA / "results-dell.csv", "--status", "verified", "--round", "v6.0",
                 "-o", tmp_path / "out.csv", expect=3)
    assert result.stderr.startswith("configuration error: cannot load ")
    assert str(broken_schemas) in result.stderr
    assert result.stdout == ""


def test_exit_3_when_submitting_without_schemas_writes_nothing(broken_schemas, root):
    result = submit(root, DATA / "results-dell.csv", expect=3)
    assert result.stderr.startswith("configuration error: ")
    assert list(root.iterdir()) == []


def test_exit_3_when_the_schemas_folder_does_not_exist(monkeypatch, tmp_path):
    monkeypatch.setenv("MLREPRO_SCHEMAS", str(tmp_path / "nowhere"))
    result = run("validate", DATA / "results-dell.csv", "--round", "v6.0", expect=3)
    assert "schemas folder not found" in result.stderr
    monkeypatch.delenv("MLREPRO_SCHEMAS")
    result = run("--schemas", tmp_path / "nowhere", "validate", DATA / "results-dell.csv", "--round", "v6.0",
                 expect=3)
    assert "schemas folder not found" in result.stderr


def test_exit_3_through_the_console_script(tmp_path):
    """The installed `mlrepro` script, a fresh process (no cached rules)."""
    script = Path(sys.executable).parent / "mlrepro"
    if not script.exists():
        pytest.skip("console script not installed")
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**os.environ, "MLREPRO_SCHEMAS": str(empty)}
    env.pop("MLREPRO_DEBUG", None)
    proc = subprocess.run([str(script), "ingest", str(DATA / "results-dell.csv"), "--status",
                           "verified", "--round", "v6.0", "-o", str(tmp_path / "out.csv")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("configuration error: ")
    assert "Traceback" not in proc.stderr + proc.stdout


def test_exit_3_when_an_output_cannot_be_written(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder\n")
    result = run("ingest", DATA / "results-dell.csv", "--status", "verified", "--round", "v6.0",
                 "-o", blocker / "out.csv", expect=3)
    assert result.stderr.startswith("environment error: ")


def test_exit_1_when_compare_gets_a_table_that_is_not_canonical(tmp_path):
    doc = run_json("compare", DATA / "results-dell.csv", expect=1)
    [f] = doc["findings"]
    assert (f["code"], f["file"], f["place"]) == ("missing-column", f"{DATA.as_posix()}/results-dell.csv",
                                                  "line 1")


@pytest.mark.parametrize("command", ["compare", "scaling"])
def test_an_empty_table_is_data_failing_a_check(tmp_path, command):
    empty = tmp_path / "results.csv"
    empty.write_text(",".join(table.COLUMNS) + "\n")
    doc = run_json(command, empty, expect=1)
    assert [f["code"] for f in doc["findings"]] == ["empty-table"]
    assert doc["findings"][0]["file"] == empty.as_posix()


@pytest.mark.parametrize("depth", ["SCHEMA_ONLY", "DATA_ONLY", ""])
def test_every_table_read_is_validated_whatever_pandera_validation_depth(tmp_path, monkeypatch, depth):
    monkeypatch.setenv("PANDERA_VALIDATION_DEPTH", depth)
    results = write_canonical(tmp_path / "results.csv", [
        canonical_row(), canonical_row(submitter="Dell", system="D1", value=-5.0),
        canonical_row(submitter="Dell", system="D2", scenario="Bogus",
                      file="v6.0/Dell/v1/results.csv", line=3)])
    doc = run_json("compare", results, expect=1)
    found = {(f["code"], f["place"].split(", ")[-1]) for f in doc["findings"]}
    # a value out of the plausible range fails the schema's range check: invalid-value
    assert found == {("invalid-value", "column value"), ("schema-violation", "column scenario")}
    assert doc["rows"] == []          # the two bad rows are not compared; AMD's is the reference


def test_a_bad_row_without_a_source_is_named_by_its_line_in_the_table(tmp_path):
    results = write_canonical(tmp_path / "results.csv", [
        canonical_row(), canonical_row(submitter="Dell", system="D1", value=-5.0, file="", line=None)])
    doc = run_json("compare", results, expect=1)
    [f] = [f for f in doc["findings"] if f["code"] == "invalid-value" and f["column"] == "value"]
    assert (f["file"], f["place"]) == (results.as_posix(), "line 3, column value")

def test_exit_4_for_a_crash_with_no_traceback(tmp_path, monkeypatch):
    import pipeline.analyses.compare

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(pipeline.analyses.compare, "compare", boom)
    results = write_canonical(tmp_path / "results.csv", [canonical_row()])
    result = run("compare", results, "-o", tmp_path / "a.csv", expect=4)
    assert result.stderr == "internal error (a bug, please report): RuntimeError: boom\n"


# ---- --format json ----------------------------------------------------------------

def _json_cases(tmp_path: Path, root: Path) -> dict[str, list]:
    table = write_canonical(tmp_path / "table.csv", [
        canonical_row(), canonical_row(submitter="Dell", system="D1", value=101000.0)])
    return {
        "submit": ["submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0",
                   "--status", "auto", "--submitted-at", ON_TIME, "--root", root],
        "ingest": ["ingest", DATA / "results-dell.csv", "--status", "verified", "--round", "v6.0",
                   "-o", tmp_path / "out.csv"],
        "validate": ["validate", DATA / "results-dell.csv", "--round", "v6.0"],
        "compare": ["compare", table, "-o", tmp_path / "agreement.csv"],
        "partition": ["partition", table, "--verified-out", tmp_path / "v.csv",
                      "--post-deadline-out", tmp_path / "p.csv"],
    }


@pytest.mark.parametrize("command", ["submit", "ingest", "validate", "compare", "partition"])
def test_json_output_is_one_object_with_summary_and_rows(tmp_path, root, command):
    args = _json_cases(tmp_path, root)[command]
    result = run(*args, "--format", "json", expect=0)
    doc = json.loads(result.stdout)  # the whole stdout, nothing else printed
    assert set(doc) == {"summary", "findings", "rows"}
    assert isinstance(doc["summary"], dict) and isinstance(doc["rows"], list)
    assert doc["summary"]["errors"] == 0
    assert result.stderr == ""


def test_json_output_carries_findings_instead_of_printing_them(tmp_path):
    result = run("ingest", DATA / "results-value-with-space.csv", "--status", "verified",
                 "--round", "v6.0", "-o", tmp_path / "out.csv", "--format", "json", expect=1)
    doc = json.loads(result.stdout)
    assert result.stderr == ""
    assert doc["summary"]["errors"] == 1
    [f] = doc["findings"]
    assert set(f) == {"code", "file", "line", "row", "column", "key", "place", "expected", "found",
                      "message", "severity"}
    assert (f["code"], f["line"], f["column"], f["place"], f["found"]) == (
        "malformed-number", 2, "value", "line 2, column value", "100 282")


def test_submit_input_format_is_a_choice_and_format_the_output(tmp_path):
    a = run("submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0",
            "--status", "post-deadline", "--submitted-at", ON_TIME, "--root", tmp_path / "a",
            "--input-format", "results-csv", "--format", "json", expect=0)
    assert json.loads(a.stdout)["summary"]["created"] == "v6.0/Dell/v1"
    bad = run("submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0",
              "--status", "verified", "--root", tmp_path / "a", "--input-format", "json", expect=2)
    assert "--input-format" in bad.stderr and "results-csv" in bad.stderr
    assert "results-csv" in run("submit", "--help", expect=0).stdout   # the choices are listed


def test_a_refused_submit_says_so_and_prints_no_none(tmp_path):
    result = run("submit", DATA / "results-value-with-space.csv", "--submitter", "Dell", "--round", "v6.0",
                 "--status", "verified", "--root", tmp_path / "a", expect=1)
    assert "None" not in result.stdout + result.stderr
    assert "refused: nothing written" in result.stdout
    assert "[malformed-number]" in result.stderr


# ---- the pipeline end to end ------------------------------------------------------

def test_submit_ingest_compare_partition_metrics(tmp_path, root):
    amd = tmp_path / "amd.csv"
    amd.write_text((DATA / "results-dell.csv").read_text()
                   .replace("Dell,PowerEdge_XE9785_8xMI355X", "AMD,8xMI355X_2xEPYC_9575F"))
    late = tmp_path / "dell-late.csv"
    late.write_text((DATA / "results-dell.csv").read_text().replace("88000", "95000"))
    submit(root, amd, submitter="AMD")
    submit(root, DATA / "results-dell.csv")
    submit(root, late, status="post-deadline", submitted_at="2026-03-20T10:00:00+00:00")

    results, rejected = tmp_path / "results.csv", tmp_path / "rejected.csv"
    run("ingest", root, "-o", results, "--rejected-out", rejected, expect=0)
    agreement = tmp_path / "agreement.csv"
    doc = run_json("compare", results, "-o", agreement, expect=1)
    assert json.loads(run("compare", results, "-o", tmp_path / "agreement.json", expect=1)
                      .stdout and (tmp_path / "agreement.json").read_text()) == doc
    verdicts = {(r["status"], r["scenario"]): (r["verdict"], r["label"]) for r in doc["rows"]}
    assert verdicts == {
        ("verified", "Server"): ("agree", "verified"),
        ("verified", "Interactive"): ("agree", "verified"),
        ("post-deadline", "Server"): ("agree", "unverified"),
        ("post-deadline", "Interactive"): ("deviates", "unverified"),  # 95000 vs 88000: +7.95 %
    }
    run("partition", agreement, "--verified-out", tmp_path / "v.csv",
        "--post-deadline-out", tmp_path / "p.csv", expect=0)
    assert len(read_csv(tmp_path / "v.csv")) == 2 and len(read_csv(tmp_path / "p.csv")) == 2

    metrics = tmp_path / "metrics.json"
    run("metrics", results, "--agreement", agreement, "--rejected", rejected,
        "-o", metrics, expect=0)
    assert json.loads(metrics.read_text()) == {"results": 6, "rejected": 0, "set_aside": 0}
    verified = json.loads((tmp_path / "metrics" / "verified.json").read_text())
    post = json.loads((tmp_path / "metrics" / "post_deadline.json").read_text())
    assert (verified["results"], verified["compared"], verified["agree"]) == (4, 2, 2)
    assert (post["results"], post["compared"], post["agree"]) == (2, 2, 1)


# ---- help and documentation -------------------------------------------------------

def test_top_level_help_lists_every_command():
    result = run("--help", expect=0)
    for name in COMMANDS:
        assert f"  {name} " in result.stdout


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help(name):
    result = run(name, "--help", expect=0)
    assert result.stdout.startswith(f"Usage: mlrepro {name} ")
    assert cli.commands[name].help, f"{name} has no docstring"
    assert run(name, "-h", expect=0).stdout == result.stdout


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_its_section_in_the_command_reference(name):
    assert f"### `mlrepro {name}`" in (REPO / "docs" / "cli.md").read_text(encoding="utf-8")


def test_version():
    assert run("--version", expect=0).stdout == "mlrepro, version 0.1.0\n"


def test_text_output_is_capped_and_says_how_much_more_there_is(tmp_path):
    """250 bad rows: text shows 200 findings and 200 lines, then the counts of
    the rest; the JSON output holds every one of them."""
    src = tmp_path / "many.csv"
    header = ("submitter,system,accelerator,accelerators_per_node,nodes,model,scenario,value,units,"
              "division,availability")
    rows = [f"Dell,sys{i},AMD Instinct MI300X 192GB HBM3,8,1,llama2-70b-99,Offline,1 0{i},Tokens/s,"
            "closed,available" for i in range(250)]
    src.write_text("\n".join([header, *rows]) + "\n")
    args = ("ingest", src, "--status", "verified", "--round", "v6.0", "-o", tmp_path / "out.csv")
    text = run(*args[:-2], expect=1).stderr.splitlines()     # no -o: printed
    errors = [line for line in text if line.startswith("error: ")]
    assert len(errors) == 200
    assert "... and 50 more findings (all of them with --format json or -o FILE)" in text
    assert len([line for line in run(*args[:-2], "-v", expect=1).stderr.splitlines()
                if line.startswith("error: ")]) == 250
    assert len(run_json(*args, expect=1)["findings"]) == 250
    quiet = run(*args, "-q", expect=1)
    assert quiet.stdout == quiet.stderr == ""


@pytest.mark.parametrize("command", ["compare", "partition", "scaling", "report"])
def test_a_corrupt_table_is_data_failing_a_check_not_a_crash(tmp_path, command):
    bad = tmp_path / "results.parquet"
    bad.write_bytes(b"not a parquet file")
    csv_ok = tmp_path / "empty.csv"
    csv_ok.write_text("source,outcome,codes,reason\n")
    args = {"compare": ["compare", bad, "-o", tmp_path / "a.csv"],
            "partition": ["partition", bad, "--verified-out", tmp_path / "v.csv",
                          "--post-deadline-out", tmp_path / "p.csv"],
            "scaling": ["scaling", bad],
            "report": ["report", bad, "--agreement", csv_ok, "--rejected", csv_ok,
                       "--versions", csv_ok, "-o", tmp_path / "r.html"]}[command]
    result = run(*args, expect=1)
    assert "[file-unreadable]" in result.stdout + result.stderr
    assert bad.as_posix() in result.stdout + result.stderr


# ---- outputs never overwrite inputs -------------------------------------------

def _raw(tmp_path: Path) -> Path:
    src = tmp_path / "ok.csv"
    src.write_bytes((DATA / "results-dell.csv").read_bytes())
    return src


@pytest.mark.parametrize("args", [
    ["ingest", "ok.csv", "--status", "verified", "--round", "v6.0", "-o", "ok.csv"],
    ["ingest", "ok.csv", "--status", "verified", "--round", "v6.0", "-o", "t.csv", "--rejected-out", "t.csv"],
    ["partition", "table.csv", "--verified-out", "same.csv", "--post-deadline-out", "same.csv"],
    ["partition", "table.csv", "--verified-out", "table.csv", "--post-deadline-out", "p.csv"],
    ["compare", "table.csv", "-o", "table.csv"],
    ["compare", "table.csv", "-o", "a.csv", "--summary-out", "a.csv"],
    ["scaling", "table.csv", "-o", "params.yaml"],
    ["gate", "--output", "params.yaml"],
    ["gate", "-o", "dvc.yaml"],
    ["claims", "ledger.yaml", "table.csv", "-o", "ledger.yaml"],
])
def test_an_output_equal_to_an_input_or_another_output_is_refused_before_writing(tmp_path, args):
    _raw(tmp_path)
    write_canonical(tmp_path / "table.csv", [canonical_row()])
    (tmp_path / "ledger.yaml").write_text("claims: []\n")
    (tmp_path / "params.yaml").write_text("compare: {tolerance_pct: 4.0}\n")
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    result = run(*args, expect=2)
    assert "refusing to overwrite" in result.stderr or "never an output" in result.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before   # nothing written


def test_outputs_get_the_users_umask_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        run("ingest", _raw(tmp_path), "--status", "verified", "--round", "v6.0", "-o", "t.csv",
            "--findings-out", "f.json", expect=0)
    finally:
        os.umask(old)
    assert (tmp_path / "t.csv").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "f.json").stat().st_mode & 0o777 == 0o644


def test_dash_is_stdout_not_a_file_named_dash(tmp_path):
    table_path = write_canonical(tmp_path / "table.csv", [canonical_row()])
    result = run("compare", table_path, "-o", "-", "--format", "json", expect=0)
    assert json.loads(result.stdout)["summary"]["partner_rows"] == 0
    assert not (tmp_path / "-").exists()


def test_validate_of_a_folder_with_no_results_is_exit_1_no_results(tmp_path):
    (tmp_path / "empty").mkdir()
    doc = run_json("validate", tmp_path / "empty", expect=1)
    assert [f["code"] for f in doc["findings"]] == ["no-results"]


def test_compare_prints_without_o_and_filters_rows(tmp_path):
    results = write_canonical(tmp_path / "results.csv", [
        canonical_row(), canonical_row(submitter="Dell", system="D1", value=101000.0,
                                       file="v6.0/Dell/v1/results.csv", line=2),
        canonical_row(submitter="HPE", system="H1", value=90000.0, file="v6.0/HPE/v1/results.csv", line=2)])
    full = run_json("compare", results, expect=1)
    assert {r["submitter"] for r in full["rows"]} == {"Dell", "HPE"}
    only = run_json("compare", results, "--verdict", "agree", expect=0)
    assert [r["submitter"] for r in only["rows"]] == ["Dell"] and only["findings"] == []
    assert run_json("compare", results, "--submitter", "HPE", expect=1)["summary"]["shown"] == 1
    text = run("compare", results, expect=1).stdout.splitlines()
    assert text[0].split()[:6] == ["verdict", "deviation_pct", "round", "submitter", "accelerator", "system"]


def test_the_json_document_is_the_same_on_stdout_and_in_a_file(tmp_path):
    results = write_canonical(tmp_path / "results.csv", [
        canonical_row(), canonical_row(submitter="Dell", system="D1", value=101000.0)])
    for command in (["compare", results], ["scaling", results]):
        printed = run_json(*command)
        run(*command, "-o", tmp_path / "doc.json")
        assert json.loads((tmp_path / "doc.json").read_text()) == printed


def test_claims_filtered_by_verdict_keep_their_findings(tmp_path):
    table_path = tmp_path / "results.csv"
    run("ingest", REPO / "submissions", "--root", REPO / "submissions", "-o", table_path, expect=0)
    failing = run_json("claims", REPO / "claims.yaml", table_path, "--verdict", "does-not-hold", expect=1)
    assert failing["rows"] and {r["verdict"] for r in failing["rows"]} == {"does-not-hold"}
    assert {f["code"] for f in failing["findings"]} == {"claim-not-supported"}
    assert run_json("claims", REPO / "claims.yaml", table_path, "--verdict", "holds", expect=0)["rows"]


def test_compare_names_files_from_the_repository_root_as_the_gate_does(tmp_path):
    """Run where submissions/ is: a finding names submissions/<round>/... like the gate's."""
    table_path = tmp_path / "results.csv"
    run("ingest", REPO / "submissions", "--root", REPO / "submissions", "-o", table_path, expect=0)
    shutil.copytree(REPO / "submissions", tmp_path / "submissions")
    doc = run_json("compare", table_path, "--verdict", "deviates", expect=1)
    assert doc["findings"] and all(f["file"].startswith("submissions/v") for f in doc["findings"])
    assert {f["place"] for f in doc["findings"]} <= {f"line {n}, column value" for n in range(2, 100)}


def _as_program(*args) -> "subprocess.CompletedProcess":
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", "from pipeline.cli import main; main()", *map(str, args)],
                          cwd=REPO, capture_output=True, text=True)


def test_a_stage_command_run_as_the_program_ends_with_its_report_and_exit_code(tmp_path):
    """A DVC stage's command run as the program (what bin/mlrepro runs): the
    report is all printed, the files all written, the exit code kept."""
    import shutil

    root = tmp_path / "submissions"
    for folder in ("v5.1/AMD", "v5.1/Dell"):
        shutil.copytree(REPO / "submissions" / folder, root / folder)
    out = tmp_path / "out"
    done = _as_program("ingest-all", root, "-o", out / "results.parquet", "--rejected-out", out / "rejected.csv",
                       "--findings-out", out / "findings.json", "--versions-out", out / "versions.csv")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().splitlines()[-1].startswith("summary: accepted=")
    assert {p.name for p in out.iterdir()} == {"results.parquet", "rejected.csv", "findings.json", "versions.csv"}
    assert len(pd.read_parquet(out / "results.parquet")) > 10
    usage = _as_program("compare", tmp_path / "missing.parquet")
    assert usage.returncode == 2 and "missing.parquet" in usage.stderr, usage.stderr


# ---- a CLI dialect without surprises ------------------------------------------------------

def _agreement_table(tmp_path: Path) -> Path:
    return write_canonical(tmp_path / "results.csv", [
        canonical_row(), canonical_row(submitter="Dell", system="D1", value=101000.0,
                                       file="v6.0/Dell/v1/results.csv", line=2)])


@pytest.mark.parametrize(("command", "value", "listed"), [
    ("compare", "deviate", "'agree', 'deviates', 'no-reference', 'excluded'"),
    ("scaling", "linear-ish", "'sub-linear', 'linear', 'super-linear'"),
    ("crosscheck", "match", "'matches', 'differs', 'not-published'"),
    ("claims", "hold", "'holds', 'does-not-hold', 'cherry-picked'"),
])
def test_a_verdict_filter_takes_only_the_commands_verdicts(tmp_path, command, value, listed):
    table_path = _agreement_table(tmp_path)
    (tmp_path / "ledger.yaml").write_text("claims: []\n")
    args = {"compare": [table_path], "scaling": [table_path], "claims": [tmp_path / "ledger.yaml", table_path],
            "crosscheck": [table_path, "--published", REPO / "published" / "v6.0" / "summary.csv"]}[command]
    result = run(command, *args, "--verdict", value, expect=2)
    assert f"'{value}' is not one of {listed}" in result.stderr
    assert run(command, *args, "--verdict", listed.split("'")[1].upper(), expect=None).exit_code != 2


@pytest.mark.parametrize("command", ["compare", "scaling", "crosscheck"])
def test_an_unknown_submitter_is_a_usage_error_listing_the_known_ones(tmp_path, command):
    table_path = _agreement_table(tmp_path)
    extra = ["--published", REPO / "published" / "v6.0" / "summary.csv"] if command == "crosscheck" else []
    result = run(command, table_path, *extra, "--submitter", "dell", expect=2)
    assert result.stderr.splitlines()[0] == f"Usage: mlrepro {command} [OPTIONS] RESULTS"
    assert ("Error: --submitter dell: no submitter of that name in the input; did you mean Dell? "
            "known: AMD, Dell") in result.stderr
    assert result.stdout == ""


def test_an_unknown_round_is_a_usage_error_and_a_registered_one_is_not(tmp_path):
    table_path = _agreement_table(tmp_path)
    result = run("compare", table_path, "--round", "v6", expect=2)
    assert "--round v6: no round of that name in the input; known: v6.1, v6.0, v5.1, v5.0, v4.1" in result.stderr
    # a round of schemas/rounds.yaml with no row in the input filters to nothing, quietly
    assert run_json("compare", table_path, "--round", "v5.1", expect=0)["summary"]["shown"] == 0


@pytest.mark.parametrize("command", ["ingest", "validate", "compare", "scaling", "claims", "crosscheck",
                                     "partition", "ingest-all", "submit", "metrics", "report"])
def test_o_dash_writes_to_standard_output_never_a_file_named_dash(tmp_path, command):
    table_path = _agreement_table(tmp_path)
    (tmp_path / "ledger.yaml").write_text("claims: []\n")
    root = tmp_path / "submissions"
    for folder in ("v5.1/AMD", "v5.1/Dell"):
        shutil.copytree(REPO / "submissions" / folder, root / folder)
    made = tmp_path / "made"
    run("ingest", root, "-o", made / "results.csv", "--rejected-out", made / "rejected.csv",
        "--versions-out", made / "versions.csv", expect=0)
    run("compare", made / "results.csv", "-o", made / "agreement.csv", expect=None)
    tables = [made / "results.csv", "--agreement", made / "agreement.csv", "--rejected", made / "rejected.csv"]
    args = {
        "ingest": ["ingest", DATA / "results-dell.csv", "--status", "verified", "--round", "v6.0"],
        "validate": ["validate", DATA / "results-dell.csv", "--round", "v6.0"],
        "compare": ["compare", table_path],
        "scaling": ["scaling", table_path],
        "claims": ["claims", tmp_path / "ledger.yaml", table_path],
        "crosscheck": ["crosscheck", table_path, "--published", REPO / "published" / "v6.0" / "summary.csv"],
        "partition": ["partition", table_path, "--verified-out", "v.csv", "--post-deadline-out", "p.csv"],
        "ingest-all": ["ingest-all", root, "--rejected-out", "r.csv", "--findings-out", "f.json",
                       "--versions-out", "v.csv"],
        "submit": ["submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0",
                   "--root", root, "--dry-run"],
        "metrics": ["metrics", *tables],
        "report": ["report", *tables, "--versions", made / "versions.csv"],
    }[command]
    fmt = [] if command in ("metrics", "report") else ["--format", "json"]
    result = run(*args, "-o", "-", *fmt, expect=None)
    assert result.exit_code in (0, 1), result.output
    assert not (tmp_path / "-").exists()
    assert not (tmp_path / "deviation.csv").exists()
    if command == "report":
        assert result.stdout.startswith("<!DOCTYPE html>") and result.stdout.rstrip().endswith("</html>")
    else:
        assert json.loads(result.stdout)


@pytest.mark.parametrize("args", [
    ["audit", "{t}", "{t}", "-o", "-"],
    ["compare", "{t}", "--verified-dir", "-", "--post-deadline-dir", "p"],
    ["ingest", "{data}/results-dell.csv", "--status", "verified", "--round", "v6.0", "--rejected-out", "-"],
    ["partition", "{t}", "--verified-out", "-", "--post-deadline-out", "p.csv"],
    ["report-all", "{t}", "--agreement", "{t}", "--rejected", "{t}", "--versions", "{t}", "--ledger", "{t}",
     "--claims-out", "c.json", "--scaling-out", "s.json", "--metrics-out", "m.json", "-o", "-"],
    ["report-all", "{t}", "--agreement", "{t}", "--rejected", "{t}", "--versions", "{t}", "--ledger", "{t}",
     "--claims-out", "c.json", "--scaling-out", "s.json", "--metrics-out", "m.json", "-o", "r.html",
     "--crosscheck", "{t}", "-"],
])
def test_dash_where_it_cannot_be_standard_output_is_a_usage_error(tmp_path, args):
    table_path = _agreement_table(tmp_path)
    args = [a.replace("{t}", str(table_path)).replace("{data}", str(DATA)) for a in args]
    result = run(*args, expect=2)
    assert "Error: Invalid value for " in result.stderr and "'-' " in result.stderr
    assert "is not accepted here: " in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv"]      # nothing written


@pytest.mark.parametrize("name", [None, *COMMANDS])
def test_every_help_ends_with_the_exit_codes(name):
    result = run(*([name] if name else []), "--help", expect=0)
    assert result.stdout.rstrip().endswith(
        "Exit codes:\n"
        "    0  clean: every check held\n"
        "    1  the data failed a check (the findings say where and why)\n"
        "    2  usage error (an option, a path or a filter value)\n"
        "    3  configuration or environment problem (schemas/, params, a file not writable)\n"
        "    4  internal error: a bug, please report it")


def test_the_top_level_help_lists_the_users_commands_first_and_the_stages_apart():
    text = run("--help", expect=0).stdout
    commands, stages = text.split("\nCommands:\n", 1)[1].split("\nPipeline stages", 1)
    assert [line.split()[0] for line in commands.strip().splitlines()] == [
        "submit", "validate", "gate", "compare", "claims", "record", "scaling", "crosscheck", "report", "audit",
        "ingest"]
    listed = [line.split()[0] for line in stages.split("Exit codes:")[0].splitlines()[1:] if line.strip()]
    assert listed == ["ingest-all", "compare", "superseded", "audit", "report-all", "partition", "metrics"]
    assert set(COMMANDS) <= set(listed) | {line.split()[0] for line in commands.strip().splitlines()}


@pytest.mark.parametrize("name", [c for c in COMMANDS if c != "gate"])
def test_o_names_one_thing_said_the_same_way(name):
    [option] = [p for p in cli.commands[name].params if "-o" in getattr(p, "opts", [])]
    assert option.help.startswith("Write ") and (" to FILE" in option.help or " the folder DIR" in option.help)
    assert "report" not in option.help.split(" to FILE")[0] or name in ("submit", "validate", "partition",
                                                                        "report", "report-all", "audit")


def test_ingest_help_calls_its_output_the_table():
    text = " ".join(run("ingest", "--help", expect=0).stdout.split())
    assert "-o, --output FILE Write the canonical results table to FILE" in text


def test_a_refused_submit_prints_no_empty_fragment(tmp_path):
    result = run("submit", DATA / "results-value-with-space.csv", "--submitter", "Dell", "--round", "v6.0",
                 "--root", tmp_path / "a", expect=1)
    assert result.stdout.splitlines() == ["refused: nothing written", "summary: findings=1, errors=1"]
    markdown = run("submit", DATA / "results-value-with-space.csv", "--submitter", "Dell", "--round", "v6.0",
                   "--root", tmp_path / "a", "--format", "markdown", expect=1).stdout
    assert "| |" not in markdown and "||" not in markdown.replace("|---|", "")


def test_figures_on_a_terminal_are_rounded_and_carry_units(tmp_path):
    results = write_canonical(tmp_path / "results.csv", [
        canonical_row(), canonical_row(submitter="Dell", system="D1", value=101234.5678,
                                       file="v6.0/Dell/v1/results.csv", line=2)])
    lines = run("compare", results, expect=0).stdout.splitlines()
    [row] = [line for line in lines if line.startswith("agree")]
    assert "+1.23%" in row and "101,235 Tokens/s" in row and "100,000 Tokens/s" in row
    assert "1.23457" not in row and "101234" not in row
    doc = run_json("compare", results, expect=0)      # the raw figures stay in the data outputs
    assert doc["rows"][0]["value"] == 101234.5678


def test_the_pipeline_stages_options_are_listed_apart():
    text = run("compare", "--help", expect=0).stdout
    options, stage = text.split("\nOptions:\n")[1].split("\nPipeline stage options (dvc.yaml):\n")
    for name in ("--verified-dir", "--post-deadline-dir", "--summary-out", "--exit-zero"):
        assert f"  {name} " in stage and f"  {name} " not in options
    assert "--verdict" in options and "--verdict" not in stage
