"""`mlrepro audit`: Great Expectations suites (files under
schemas/expectations) over the verified and post-deadline sets.

GX is slow to start, so the sets are built once per module (ingest and
partition of the shipped submissions) and each audit run is reused.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from html import unescape
from pathlib import Path

import pytest

from conftest import RULES, REPO, chromium, needs_chromium, read_csv, run, run_json

from pipeline.analyses import audit
from pipeline.core.errors import ConfigError

SUITES = REPO / "schemas" / "expectations"


@pytest.fixture(scope="module")
def sets(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("sets")
    table, versions = folder / "results.csv", folder / "versions.csv"
    run("ingest", REPO / "submissions", "--root", REPO / "submissions", "-o", table,
        "--versions-out", versions, expect=0)
    verified, post = folder / "verified.csv", folder / "post_deadline.csv"
    run("partition", table, "--verified-out", verified, "--post-deadline-out", post, expect=0)
    return {"verified": verified, "post": post, "folder": folder, "versions": versions}


@pytest.fixture(scope="module")
def clean_audit(sets):
    out = sets["folder"] / "audit"
    result = run("audit", sets["verified"], sets["post"], "-o", out, "--versions", sets["versions"],
                 "--format", "json", expect=0)
    return json.loads(result.stdout), result, out


def write_rows(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.fixture(scope="module")
def broken_audit(sets):
    """The shipped sets with deliberately wrong rows."""
    folder = sets["folder"] / "broken"
    folder.mkdir()
    verified = read_csv(sets["verified"])
    post = read_csv(sets["post"])
    verified[2]["value"] = "-5"                      # line 4: not positive
    verified[3]["units"] = "Samples/s"               # line 5: units do not fit llama2 Interactive/Offline/Server
    verified[4]["status"] = "post-deadline"          # line 6: a post-deadline row in the verified set
    post.append(dict(verified[0]))                   # a verified row also in the post-deadline set
    v = write_rows(folder / "verified.csv", verified)
    p = write_rows(folder / "post_deadline.csv", post)
    out = folder / "audit"
    result = run("audit", v, p, "-o", out, "--format", "json", "--no-data-docs")
    return json.loads(result.stdout), result, out


# ---- suites are files, counted after loading -------------------------------------------

def test_each_suite_file_loads_with_every_expectation():
    files = audit.read_suite_files(RULES, SUITES)
    assert {f.runs_on for f in files} == {"verified", "post-deadline", "both"}
    context = audit._context(None)
    for suite_file in files:
        raw = json.loads(suite_file.path.read_text())
        suite = audit.load_suite(context, suite_file, [])
        assert len(suite.expectations) == len(raw["expectations"]) > 0, suite_file.path.name


def test_the_clean_audit_reports_counts_from_the_files(clean_audit):
    doc, _, _ = clean_audit
    counts = {s["suite"]: (s["expectations_in_file"], s["expectations_loaded"]) for s in doc["rows"]}
    for path in SUITES.glob("*.json"):
        raw = json.loads(path.read_text())
        assert counts[raw["name"]] == (len(raw["expectations"]), len(raw["expectations"]))


def copy_suites(tmp_path: Path) -> Path:
    folder = tmp_path / "suites"
    shutil.copytree(SUITES, folder)
    return folder


def test_a_suite_that_loses_an_expectation_on_loading_is_exit_3(tmp_path, sets):
    folder = copy_suites(tmp_path)
    path = folder / "verified.json"
    raw = json.loads(path.read_text())
    raw["expectations"].append({"type": "expect_column_values_to_be_positive_please", "kwargs": {"column": "value"}})
    path.write_text(json.dumps(raw))
    result = run("audit", sets["verified"], sets["post"], "-o", tmp_path / "a",
                 "--suites", folder, "--no-data-docs", expect=3)
    message = result.stderr
    assert "verified.json" in message and "10 expectations in the file, 9 after loading" in message
    assert "expect_column_values_to_be_positive_please" in message
    assert not (tmp_path / "a" / "validation.json").exists()


@pytest.mark.parametrize("broken", [
    {"type": "expect_column_values_to_be_between", "kwargs": {"column": "value", "min_value": "x", "bogus": 1}},
    {"kwargs": {"column": "value"}},
    "not an expectation",
])
def test_a_suite_with_an_invalid_expectation_is_exit_3(tmp_path, sets, broken):
    folder = copy_suites(tmp_path)
    path = folder / "sets.json"
    raw = json.loads(path.read_text())
    raw["expectations"].append(broken)
    path.write_text(json.dumps(raw))
    result = run("audit", sets["verified"], sets["post"], "-o", tmp_path / "a",
                 "--suites", folder, "--no-data-docs", expect=3)
    assert "sets.json" in result.stderr


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "cannot read suite"),
    (json.dumps({"name": "x", "expectations": [], "meta": {}}), "runs_on"),
    (json.dumps({"name": "x", "expectations": [], "meta": {"mlrepro": {"runs_on": "both"}}, "extra": 1}),
     "unknown suite keys"),
])
def test_a_malformed_suite_file_is_a_config_error(tmp_path, content, message):
    (tmp_path / "s.json").write_text(content)
    with pytest.raises(ConfigError, match=message):
        audit.read_suite_files(RULES, tmp_path)
    with pytest.raises(ConfigError, match="no expectation suites"):
        audit.read_suite_files(RULES, tmp_path / "empty")


# ---- the audit on the shipped sets -----------------------------------------------------

def test_the_shipped_sets_pass_every_suite(clean_audit, sets):
    doc, result, out = clean_audit
    assert doc["summary"]["success"] is True and doc["findings"] == []
    assert {s["suite"]: s["rows"] for s in doc["rows"]} == {
        "mlrepro-verified": len(read_csv(sets["verified"])),
        "mlrepro-post-deadline": len(read_csv(sets["post"])),
        "mlrepro-sets": len(read_csv(sets["verified"])) + len(read_csv(sets["post"]))}
    validation = json.loads((out / "validation.json").read_text())
    assert validation["summary"]["success"] is True
    assert set(validation["results"]) == {"mlrepro-verified", "mlrepro-post-deadline", "mlrepro-sets"}
    assert all(r["success"] for r in validation["results"].values())
    assert (out / "data_docs" / "index.html").is_file()
    assert "Calculating Metrics" not in result.output + result.stderr    # progress bars off


def test_the_data_docs_site_is_byte_identical_across_runs(sets, clean_audit, tmp_path):
    """GX stamps the clock into its logo's URL and its batch's ge_load_time and
    gives collapsible blocks random ids: all pinned, so two runs give the same bytes."""
    _, _, first = clean_audit
    run("audit", sets["verified"], sets["post"], "-o", tmp_path, "--versions", sets["versions"], expect=0)
    files = sorted(p.relative_to(first).as_posix() for p in (first / "data_docs").rglob("*") if p.is_file())
    again = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "data_docs").rglob("*") if p.is_file())
    assert files == again and len([f for f in files if f.endswith(".html")]) >= 7, files
    for name in files:
        assert (first / name).read_bytes() == (tmp_path / name).read_bytes(), name
    index = (first / "data_docs" / "index.html").read_text(encoding="utf-8")
    assert "logo-long.png\"" in index and "?d=" not in index


# ---- the Data Docs: offline, with the time of the data -----------------------------------

# The newest submitted_at of the versions the shipped sets hold (the v6.1 versions, at the
# round's estimated deadline 2026-07-31T13:00:00-07:00).
DATA_TIME = "2026-07-31 20:00:00 UTC"


def _validations_table(index: str) -> str:
    return re.search(r'<table\s+id="[^"]+"\s+class="table-sm ge-index-page-validation-results-table"[^>]*>'
                     r"(.*?)</table>", index, re.S).group(1)


def test_the_data_docs_index_lists_the_validations_without_scripts(clean_audit):
    """GX's index builds its list with scripts from CDNs; the list is also in
    the HTML, so a browser with no network (and no script) shows it."""
    _, _, out = clean_audit
    site = out / "data_docs"
    static = re.sub(r"<script\b.*?</script>", "", (site / "index.html").read_text(encoding="utf-8"), flags=re.S)
    table = _validations_table(static)
    rows = [[re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("Success", DATA_TIME, "mlrepro-post-deadline", "post-deadline"),
        ("Success", DATA_TIME, "mlrepro-sets", "both"),
        ("Success", DATA_TIME, "mlrepro-verified", "verified")]
    links = re.findall(r'href="([^"]+)"', table)
    assert len(links) == 6 and all((site / link).is_file() for link in links), links
    assert f"Data as of {DATA_TIME}: the newest submission time (submitted_at)" in static


def test_the_data_docs_show_the_time_of_the_data_and_validation_json_stays_pinned(clean_audit, sets, tmp_path):
    _, _, out = clean_audit
    pages = sorted((out / "data_docs" / "validations").rglob("*.html"))
    assert len(pages) == 3 and all("/20260731T200000.000000Z/" in p.as_posix() for p in pages)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert re.search(r">Run Time</div></td><td[^>]*><div[^>]*>2026-07-31T20:00:00Z<", text), page
    for page in (out / "data_docs").rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "2000-01-01" not in text and "20000101" not in text, page
    # validation.json does not depend on the Data Docs: the same bytes without them
    run("audit", sets["verified"], sets["post"], "-o", tmp_path, "--no-data-docs", expect=0)
    assert (tmp_path / "validation.json").read_bytes() == (out / "validation.json").read_bytes()


@needs_chromium
def test_chromium_shows_the_data_docs_list_offline(clean_audit, tmp_path):
    _, _, out = clean_audit
    probed = out / "data_docs" / "probed-index.html"
    probe = ("<script>var t = document.querySelector('.ge-index-page-validation-results-table');"
             "var rows = Array.from(t.querySelectorAll('tbody tr')).filter(function (r) {"
             "  var b = r.getBoundingClientRect(); return b.height > 0 && b.width > 0; });"
             "var p = document.createElement('pre'); p.id = 'probe';"
             "p.textContent = JSON.stringify(rows.map(function (r) { return r.innerText"
             "  + (r.querySelector('.fa-check-circle, .text-success') ? ' Success' : ''); }));"
             "document.body.appendChild(p);</script>")
    probed.write_text((out / "data_docs" / "index.html").read_text(encoding="utf-8")
                      .replace("</body>", probe + "</body>"), encoding="utf-8")
    try:
        dom = chromium(tmp_path, "--window-size=1366,768", "--dump-dom", probed.as_uri())
    finally:
        probed.unlink()
    assert dom.returncode == 0, dom.stderr[-2000:]
    shown = json.loads(unescape(re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S).group(1)))
    # GX's scripts load (local copies, vendor/npm) and draw their list over the static one
    # (a status icon instead of the word); either way every validation shows, with the data's time
    assert len(shown) == 3 and all(DATA_TIME in row and "Success" in row for row in shown), shown
    assert sorted(next(s for s in ("mlrepro-post-deadline", "mlrepro-sets", "mlrepro-verified") if s in row)
                  for row in shown) == ["mlrepro-post-deadline", "mlrepro-sets", "mlrepro-verified"]


def test_the_data_time_is_the_newest_submission_the_sets_hold(tmp_path):
    versions = tmp_path / "versions.csv"
    versions.write_text(
        "round,submitter,version,path,used,status_declared,status,submitted_at,supersedes,withdraws\n"
        "v6.0,Dell,1,v6.0/Dell/v1,False,verified,verified,2026-02-19T10:00:00+00:00,,\n"
        "v6.0,Dell,2,v6.0/Dell/v2,True,verified,verified,2026-02-27T13:00:00-08:00,1,\n"
        "v6.0,Vultr,1,v6.0/Vultr/v1,True,post-deadline,post-deadline,2026-05-01T00:00:00+00:00,,\n",
        encoding="utf-8")
    import pandas as pd
    verified = pd.DataFrame({"round": ["v6.0"], "submitter": ["Dell"], "submission_version": ["2"]})
    post = pd.DataFrame({"round": ["v6.0"], "submitter": ["Dell"], "submission_version": [2.0]})
    # Vultr's version is newer but holds no row of the sets; Dell's v2 is given in its own offset
    assert audit.validated_at([verified, post], versions).isoformat() == "2026-02-27T21:00:00+00:00"
    with pytest.raises(ConfigError, match="no version there holds a row of the two sets"):
        audit.validated_at([verified.assign(submitter="Lenovo")], versions)
    versions.write_text("round,submitter,version,submitted_at\nv6.0,Dell,2,yesterday\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"line 2, column submitted_at: expected an ISO 8601 time, found 'yesterday'"):
        audit.validated_at([verified], versions)
    versions.write_text("round,submitter,version\nv6.0,Dell,2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no column submitted_at"):
        audit.validated_at([verified], versions)


def test_the_data_docs_need_the_versions_table(sets, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)            # no data/versions.csv here
    result = run("audit", sets["verified"], sets["post"], "-o", tmp_path / "out", expect=2)
    assert "data/versions.csv is not a file; give --versions" in result.stderr and "--no-data-docs" in result.stderr
    assert not (tmp_path / "out").exists()


def test_audit_refuses_a_dash_for_its_folder(sets):
    result = run("audit", sets["verified"], sets["post"], "-o", "-", expect=2)
    assert "audit writes a folder" in result.stderr


def test_the_audit_text_output(sets, tmp_path):
    result = run("audit", sets["verified"], sets["post"], "-o", tmp_path,
                 "--no-data-docs", expect=0)
    lines = result.stdout.splitlines()
    assert lines[0] == f"wrote {tmp_path / 'validation.json'}"
    assert lines[1].split() == ["suite", "runs_on", "success", "expectations_loaded", "failed", "rows"]
    assert lines[2].split()[:3] == ["mlrepro-post-deadline", "post-deadline", "True"]
    assert lines[-1].startswith("summary: suites=3, failed_suites=0, expectations=22")
    assert not (tmp_path / "data_docs").exists()


def test_a_deliberately_wrong_row_is_a_finding_not_a_crash(broken_audit):
    doc, result, out = broken_audit
    assert result.exit_code == 1 and "Traceback" not in result.output + result.stderr
    assert doc["summary"]["success"] is False
    found = {(f["file"].rsplit("/", 1)[-1], f["place"]) for f in doc["findings"]}
    assert ("verified.csv", "line 4, column value") in found
    assert ("verified.csv", "line 5, column model_scenario_units") in found
    assert ("verified.csv", "line 6, column status") in found
    assert ("post_deadline.csv", "line 4, column status") in found
    both = [f for f in doc["findings"] if f["message"].startswith("mlrepro-sets: no row appears in both sets")]
    assert len(both) == 1 and "verified.csv:2" in both[0]["message"] and "post_deadline.csv:4" in both[0]["message"]
    assert {f["code"] for f in doc["findings"]} == {"expectation-failed"}
    validation = json.loads((out / "validation.json").read_text())
    assert validation["summary"]["failed_expectations"] == len(doc["findings"])


def test_the_dvc_stage_option_exit_zero_records_findings_and_exits_0(sets, tmp_path):
    verified = read_csv(sets["verified"])
    verified[0]["value"] = "0"
    v = write_rows(tmp_path / "v.csv", verified)
    result = run("audit", v, sets["post"], "-o", tmp_path / "out",
                 "--no-data-docs", "--exit-zero", expect=0)
    assert "[expectation-failed]" in result.stderr
    validation = json.loads((tmp_path / "out" / "validation.json").read_text())
    assert [f["place"] for f in validation["findings"]] == ["line 2, column value"]


def test_audit_refuses_to_overwrite_a_folder_that_is_not_data_docs(sets, tmp_path):
    (tmp_path / "data_docs").mkdir()
    (tmp_path / "data_docs" / "mine.txt").write_text("keep me")
    result = run("audit", sets["verified"], sets["post"], "-o", tmp_path, "--versions", sets["versions"], expect=2)
    assert "is not a GX Data Docs site" in result.stderr
    assert (tmp_path / "data_docs" / "mine.txt").exists()


def test_units_keys_come_from_the_round_rules():
    keys = audit.units_keys(RULES)
    assert "llama2-70b-99.9|Server|Tokens/s" in keys
    assert "wan-2.2-t2v-a14b|SingleStream|Latency (s)" in keys
    assert "llama2-70b-99.9|Server|Samples/s" not in keys


def test_great_expectations_is_imported_by_the_audit_module_only():
    imports = re.compile(r"^\s*(import|from)\s+great_expectations\b", re.MULTILINE)
    users = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "pipeline").rglob("*.py")
                   if imports.search(p.read_text(encoding="utf-8")))
    assert users == ["pipeline/analyses/audit.py"]


# ---- scipy.stats and altair: imported by GX for expectations our suites do not use -----------

def _fresh(code: str) -> str:
    """``code`` run by a new interpreter in the project folder: its stdout."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_shipped_suites_run_without_scipy_stats_or_altair_and_an_expectation_that_uses_scipy_loads_it(
        sets, tmp_path):
    """In one new interpreter: the shipped suites run and leave every module
    GX imports for expectations they do not use (scipy.stats, altair)
    unloaded; then a suite with GX's KL-divergence expectation (scipy.stats)
    loads scipy when the expectation uses it, and the result is evaluated."""
    (tmp_path / "kl.json").write_text(json.dumps({
        "name": "kl", "meta": {"mlrepro": {"runs_on": "verified"}},
        "expectations": [{"type": "expect_column_kl_divergence_to_be_less_than",
                          "kwargs": {"column": "value", "threshold": 0.1,
                                     "partition_object": {"bins": [0, 1e12], "weights": [1.0]}}},
                         {"type": "expect_column_kl_divergence_to_be_less_than",
                          "kwargs": {"column": "value", "threshold": 0.1,
                                     "partition_object": {"bins": [0, 1, 1e12], "weights": [0.99, 0.01]}}}]}))
    out = _fresh(f"""
import json, sys
from pipeline.analyses import audit
from pipeline.core.rules import Rules
report = audit.audit(Rules.load(), {str(sets['verified'])!r}, {str(sets['post'])!r})
assert report.summary["success"] and report.rows
print(*(type(sys.modules.get(name)).__name__ for name in audit.GX_DEFERRED))
report = audit.audit(Rules.load(), {str(sets['verified'])!r}, {str(sets['post'])!r}, suites_folder={str(tmp_path)!r})
results = report.extra["results"]["kl"]["results"]
print(json.dumps([[r["success"], r["exception_info"]["raised_exception"]] for r in results]))
print(type(sys.modules["scipy.stats"]).__name__)
""")
    deferred, outcomes, loaded = out.splitlines()
    assert deferred.split() == ["_LazyModule"] * len(audit.GX_DEFERRED)
    assert json.loads(outcomes) == [[True, False], [False, False]]
    assert loaded == "module"


def test_deferred_modules_run_on_first_use_only(tmp_path):
    (tmp_path / "heavy.py").write_text("import sys\nsys.heavy_ran = True\nVALUE = 42\n")
    out = _fresh(f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
from pipeline.core.imports import deferred
with deferred("heavy"):
    import heavy
before = getattr(sys, "heavy_ran", False)
print(before, heavy.VALUE, getattr(sys, "heavy_ran", False))
""")
    assert out.split() == ["False", "42", "True"]
