"""`mlrepro report`: one self-contained HTML file whose first screen answers
the auditor's questions; the details in tables that sort and filter offline;
every unverified figure marked beside the MLCommons sentence; the Great
Expectations results rendered in the page. The browser tests open the report
of the shipped submissions, with a post-deadline partner of a long name added,
in headless Chromium at 1366x768 and 1024x768 and keep screenshots (see
`MLREPRO_ARTIFACTS`)."""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import struct
import zlib
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import (LATE, REPO, RULES, UNVERIFIED_FOOTNOTE, canonical_row, chromium, needs_chromium, read_csv,
                      results_row, run, submit, write_canonical, write_results_csv)

TITLE = "mlrepro report: MLPerf Inference partner results against the reference"
HOSTILE = "<img src=x onerror=alert(1)>"


# ---- inputs ----------------------------------------------------------------------------

def _results() -> list[dict]:
    return [
        canonical_row(submitter="AMD", scenario="Server", value=100000.0,
                      file="v6.0/AMD/v1/results.csv", line=2),
        canonical_row(submitter="AMD", scenario="Offline", value=110000.0,
                      file="v6.0/AMD/v1/results.csv", line=3),
        canonical_row(submitter="Dell", system="PowerEdge_XE9785_8xMI355X", scenario="Server",
                      value=98000.0, file="v6.0/Dell/v2/results.csv", line=2, submission_version=2),
        canonical_row(submitter="Dell", system="PowerEdge_XE9785_8xMI355X", scenario="Offline",
                      value=99000.0, file="v6.0/Dell/v2/results.csv", line=3, submission_version=2),
        canonical_row(submitter="Vultr", system=f"Cloud {HOSTILE}", scenario="Server", value=101000.0,
                      status="post-deadline", file="v6.0/Vultr/v1/results.csv", line=2),
        # a partner result with no AMD reference (no AMD MI300X result)
        canonical_row(submitter="Dell", system="PowerEdge_XE9680_8xMI300X", accelerator="MI300X",
                      composition="MI300X:8", scenario="Server", value=24000.0,
                      file="v6.0/Dell/v2/results.csv", line=4, submission_version=2),
        # not a partner result: Lenovo runs NVIDIA's B300 only
        canonical_row(submitter="Lenovo", system="ThinkSystem_SR680a_V4_8xB300", accelerator="B300",
                      composition="B300:8", scenario="Server", value=120000.0,
                      file="v6.0/Lenovo/v1/results.csv", line=2),
    ]


def _doc(rows: list[dict]) -> dict:
    return {"summary": {"rows": len(rows)}, "findings": [], "rows": rows}


SCALING = _doc([
    {"round": "v6.0", "submitter": "AMD", "system": "87xMI355X_22xEPYC_9575F", "model": "llama2-70b-99.9",
     "scenario": "Server", "nodes": 11, "total_accelerators": 87, "value": 1016380.0, "expected": 1090566.75,
     "units": "Tokens/s", "efficiency_pct": 93.197413, "verdict": "sub-linear",
     "reference_rule": "MI355X: same-submitter",
     "references": [{"accelerator": "MI355X", "rule": "same-submitter"}],
     "status": "verified", "label": "verified", "footnote": ""},
    {"round": "v6.0", "submitter": "AMD", "system": "87xMI355X_22xEPYC_9575F", "model": "llama2-70b-99.9",
     "scenario": "Offline", "nodes": 11, "total_accelerators": 87, "value": 1042110.0, "expected": None,
     "efficiency_pct": None, "verdict": "no-reference", "reason": "no single-node reference for MI355X",
     "status": "verified", "label": "verified", "footnote": ""},
    {"round": "v6.0", "submitter": "MangoBoost", "system": "32xMI355X-Cluster", "model": "llama2-70b-99",
     "scenario": "Offline", "nodes": 4, "total_accelerators": 32, "value": 300000.0, "expected": 400000.0,
     "efficiency_pct": 75.0, "verdict": "sub-linear", "status": "post-deadline", "label": "unverified",
     "footnote": UNVERIFIED_FOOTNOTE}])
SUBJECT = {"round": "v6.0", "submitter": "AMD", "system": "8xMI355X_2xEPYC_9575F", "value": 100282.0,
           "units": "Tokens/s", "status": "verified"}
CLAIMS = _doc([
    {"id": "generation-gain", "kind": "ratio", "measure": "ratio", "text": "3.1x MI325X", "claimed": 3.1,
     "computed": 3.131112, "holds": True, "verdict": "holds", "subject": SUBJECT,
     "comparator": {**SUBJECT, "round": "v5.1", "system": "8xMI325X", "value": 32027.6},
     "label": "verified", "footnote": "", "notes": ["round (version) differs from the comparator"]},
    {"id": "post-deadline-parity", "kind": "ratio", "measure": "pct", "text": f"parity {HOSTILE}",
     "claimed": 100, "computed": 100.878161, "holds": False, "verdict": "does-not-hold",
     "subject": {**SUBJECT, "status": "post-deadline"}, "label": "unverified", "footnote": UNVERIFIED_FOOTNOTE,
     "cherry_picked": False},
    {"id": "best-of-many", "kind": "ratio", "measure": "ratio", "claimed": 3.3, "computed": 3.305339,
     "computed_vs_best": 3.12022, "holds": True, "verdict": "cherry-picked", "cherry_picked": True,
     "subject": SUBJECT, "label": "verified", "footnote": ""},
    # a reproducibility claim names no subject: its round comes from the partner results it lists
    {"id": "partners-within-4", "kind": "reproducibility", "measure": "max_abs_deviation_pct",
     "claimed": 4.0, "computed": 10.0, "holds": False, "verdict": "does-not-hold", "subject": None,
     "comparator": {"submitter": "AMD", "system": None, "value": None}, "compared": 2, "within": 1,
     "outside": [{"submitter": "Dell", "system": "PowerEdge_XE9785_8xMI355X", "model": "llama2-70b-99",
                  "scenario": "Offline", "value": 99000.0, "deviation_pct": -10.0}],
     "label": "verified", "footnote": "", "notes": ["1 of 2 partner results within ±4% of AMD"]}])


def _expectation(check: str, kind: str, column: str, ok: bool, unexpected: list | None = None) -> dict:
    detail = {"element_count": 4, "unexpected_count": len(unexpected or []),
              "partial_unexpected_list": unexpected or []}
    return {"success": ok, "expectation_config": {"type": kind, "kwargs": {"column": column, "batch_id": "b"},
                                                  "meta": {"check": check}}, "result": detail}


VALIDATION = {
    "summary": {"suites": 2, "failed_suites": 1, "expectations": 3, "failed_expectations": 1, "success": False,
                "findings": 1},
    "suites": [{"suite": "mlrepro-verified", "file": "schemas/expectations/verified.json", "runs_on": "verified",
                "rows": 4, "expectations_in_file": 2, "expectations_loaded": 2, "success": False, "failed": 1},
               {"suite": "mlrepro-post-deadline", "file": "schemas/expectations/post_deadline.json",
                "runs_on": "post-deadline", "rows": 1, "expectations_in_file": 1, "expectations_loaded": 1,
                "success": True, "failed": 0}],
    "findings": [{"code": "expectation-failed", "file": "results/verified/results.csv", "place": "line 3, column value",
                  "expected": "expect_column_values_to_be_between {'min_value': 0.0}", "found": "[-5.0]",
                  "message": "mlrepro-verified: values are positive", "severity": "error"}],
    "results": {
        "mlrepro-verified": {"success": False, "results": [
            _expectation("every row has a status", "expect_column_values_to_not_be_null", "status", True),
            _expectation("values are positive", "expect_column_values_to_be_between", "value", False, [-5.0])]},
        "mlrepro-post-deadline": {"success": True, "results": [
            _expectation("every row is labelled unverified", "expect_column_values_to_be_in_set", "label", True)]}},
}


@pytest.fixture
def inputs(tmp_path) -> dict[str, Path]:
    data = tmp_path / "data"
    results = write_canonical(data / "results.parquet", _results())
    agreement = data / "agreement.csv"
    run("compare", results, "-o", agreement, "--exit-zero", expect=0)
    rejected = data / "rejected.csv"
    rejected.write_text("source,outcome,codes,reason\n"
                        "v6.0/Dell/v1/results.csv:4,rejected,malformed-number,the value is not a plain "
                        "finite number\n", encoding="utf-8")
    versions = data / "versions.csv"
    versions.write_text(
        "round,submitter,version,path,used,status_declared,status,submitted_at,supersedes\n"
        "v6.0,AMD,1,v6.0/AMD/v1,True,verified,verified,2026-02-20T10:00:00+00:00,\n"
        "v6.0,Dell,1,v6.0/Dell/v1,False,verified,verified,2026-02-19T10:00:00+00:00,\n"
        "v6.0,Dell,2,v6.0/Dell/v2,True,verified,verified,2026-02-21T10:00:00+00:00,1\n"
        "v6.0,Vultr,1,v6.0/Vultr/v1,True,post-deadline,post-deadline,2026-03-20T10:00:00+00:00,\n"
        "v6.0,Lenovo,1,v6.0/Lenovo/v1,True,verified,verified,2026-02-20T10:00:00+00:00,\n",
        encoding="utf-8")
    scaling, claims, validation = data / "scaling.json", data / "claims.json", data / "validation.json"
    scaling.write_text(json.dumps(SCALING), encoding="utf-8")
    claims.write_text(json.dumps(CLAIMS), encoding="utf-8")
    validation.write_text(json.dumps(VALIDATION), encoding="utf-8")
    docs = tmp_path / "audit" / "data_docs" / "index.html"
    docs.parent.mkdir(parents=True)
    docs.write_text("<html></html>", encoding="utf-8")
    return {"results": results, "agreement": agreement, "rejected": rejected, "versions": versions,
            "scaling": scaling, "claims": claims, "validation": validation, "data_docs": docs,
            "out": tmp_path / "reports" / "index.html"}


def report(inputs: dict, *extra: object, with_docs: bool = True, expect: int = 0):
    args = ["report", inputs["results"], "--agreement", inputs["agreement"],
            "--rejected", inputs["rejected"], "--versions", inputs["versions"], "-o", inputs["out"]]
    if with_docs:
        args += ["--scaling", inputs["scaling"], "--claims", inputs["claims"],
                 "--validation", inputs["validation"], "--data-docs", inputs["data_docs"]]
    return run(*args, *extra, expect=expect)


class Page(HTMLParser):
    """Tags with their attributes, all text, and for each section (by id, or
    class when it has none) its text; ``marks`` lists, for each unverified
    mark, the text of the innermost section around it."""

    VOID = {"br", "wbr", "meta", "input", "img", "hr", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.title = ""
        self._in_title = False
        self._open: list[tuple[str, dict]] = []
        self._sections: list[list[str]] = []
        self.sections: dict[str, list[str]] = {}
        self._marks: list[list[str]] = []
        self.marks: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag in self.VOID:
            return
        self._open.append((tag, attrs))
        if tag == "section":
            self._sections.append([attrs.get("id") or attrs.get("class") or ""])
        if tag == "span" and "unv" in (attrs.get("class") or "").split() and self._sections:
            self._marks.append(self._sections[-1])
        self._in_title = tag == "title" and not self.title

    def handle_endtag(self, tag):
        if tag in self.VOID or not self._open:
            return
        while self._open:
            name, _ = self._open.pop()
            if name == "section" and self._sections:
                done = self._sections.pop()
                self.sections.setdefault(done[0], []).extend(done[1:])
                for i, mark in enumerate(self._marks):
                    if mark is done:
                        self.marks.append(" ".join(done[1:]))
                self._marks = [m for m in self._marks if m is not done]
            if name == tag:
                break
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_title:
            self.title += data
        for section in self._sections:
            section.append(data)

    def section_text(self, key: str) -> str:
        return "".join(self.sections.get(key, []))

    def classes(self, cls: str) -> list[dict]:
        return [a for _, a in self.tags if cls in (a.get("class") or "").split()]


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


# ---- the file --------------------------------------------------------------------------

def test_the_report_is_one_offline_html_file(inputs):
    result = report(inputs)
    out = inputs["out"]
    assert result.stdout.strip() == f"wrote {out} and {out.parent / 'deviation.csv'}"
    html = out.read_text(encoding="utf-8")
    page = parse(out)
    assert page.title == TITLE
    names = [t for t, _ in page.tags]
    assert names.count("table") >= 8
    assert "img" not in names and "iframe" not in names and "object" not in names
    assert names.count("script") == 1                     # sorting and filtering, inline
    for tag, attrs in page.tags:
        assert "src" not in attrs or tag != "script", attrs
        for key in ("src", "href", "xlink:href", "srcset", "data", "action"):
            value = attrs.get(key) or ""
            assert not re.match(r"\s*([a-z]+:)?//", value), (tag, key, value)
        if tag == "link":
            assert "stylesheet" not in (attrs.get("rel") or ""), attrs
    assert not re.search(r"url\(", html)
    assert "@import" not in html and "fetch(" not in html and "XMLHttpRequest" not in html
    assert "@media print" in html and "@page" in html


def test_the_same_inputs_give_the_same_bytes(inputs):
    report(inputs)
    first = inputs["out"].read_bytes()
    report(inputs)
    assert inputs["out"].read_bytes() == first


def test_the_first_screen_answers(inputs):
    report(inputs)
    page = parse(inputs["out"])
    answers = page.section_text("answers")
    # per round (one table each) and partner: results, agree, deviate, no-reference, excluded, worst
    # deviation (signed; its model and scenario in the tooltip), the deviating partners first
    html = inputs["out"].read_text()
    first = html.split('id="answers"')[1].split('<nav>')[0]
    tables = dict(re.findall(r'data-round="([^"]+)">(.*?)</table>', first))
    assert list(tables) == ["v6.0"], list(tables)
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", tables["v6.0"])
    cells = [[unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r)]
             for r in rows]
    cells = [c for c in cells if c]
    assert cells[0] == ["Dell", "3", "1", "1", "1", "0", "-10.00%"], cells
    assert '<span title="llama2-70b-99 Offline">-10.00%</span>' in rows[1]
    vultr = [c for c in cells if c[0].startswith("Vultr")]
    assert vultr and vultr[0][0] == "Vultr post-deadline" and vultr[0][6].startswith("+1.00%")
    assert "unverified" in vultr[0][6]
    # the claims that do not hold, and the one that holds only against a weaker comparator
    assert "Claims that do not hold: 2" in answers
    assert "partners-within-4" in answers and "post-deadline-parity" in answers
    assert "Claims that hold only against a weaker comparator: 1" in answers and "best-of-many" in answers
    picked = first.split('data-answer="cherry-picked"')[1].split("</table>")[0]
    assert re.search(r"best-of-many.*?<td>3\.12×</td></tr>", picked), picked
    # how many results are unverified, with the MLCommons sentence
    assert "Unverified results: 1 of 7" in answers
    assert UNVERIFIED_FOOTNOTE in answers
    assert "1 failed" in answers                         # the validation, in one line


def test_partners_are_the_submitters_with_results_on_the_reference_vendors_accelerators(inputs):
    report(inputs)
    html = inputs["out"].read_text(encoding="utf-8")
    first = html.split('id="answers"')[1].split("<nav>")[0]
    partners = re.search(r'data-round="v6.0">(.*?)</div>', first, re.S).group(1)
    assert "v6.0</a>: 2 partners</h3>" in partners                   # Dell and Vultr (MI355X)
    assert "Lenovo" not in re.sub(r'title="[^"]*"', "", partners)    # B300 only: counted apart
    assert re.search(r'<a class="others" href="#v6-0-verified-other-vendors" title="Lenovo">'
                     r"and 1 submitter on other vendors' accelerators</a>", partners), partners
    lead = re.search(r'<p class="lead">(.*?)</p>', html).group(1)
    assert "partners: submitters with results on AMD accelerators" in lead


def test_each_round_lists_the_deviating_rows_first_and_folds_the_rest_by_reason(inputs):
    report(inputs)
    html = inputs["out"].read_text(encoding="utf-8")
    verified = html.split('id="v6-0-verified"')[1].split("</section>")[0]
    compared = re.search(r'<table id="agreement-v6-0-verified".*?<tbody>(.*?)</tbody>', verified, re.S).group(1)
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", compared)
    assert [re.search(r">(agree|deviates)<", r).group(1) for r in rows] == ["deviates", "agree"]
    assert "PowerEdge_<wbr>XE9680" not in compared and "Lenovo" not in compared      # compared rows only
    assert ("<p>6 accepted verified results; 3 partner results of 1 partner on AMD accelerators: 2 compared "
            "with the reference (1 agree, 1 deviate), 1 not compared. 1 result of 1 submitter on other vendors' "
            "accelerators: not partner results.</p>") in verified
    # the rows not compared: folded (no script: <details>), one group per reason, counted
    groups = re.findall(r'<details class="nc noprint"><summary>(.*?)</summary>(.*?)</details>', verified, re.S)
    summaries = [unescape(re.sub(r"<[^>]+>", "", summary)) for summary, _ in groups]
    assert summaries == [
        "1 no reference no AMD result for this round, accelerator, accelerators per node, nodes, model and "
        "scenario (Dell)",
        "1 excluded not a partner result: B300 is NVIDIA's, not AMD's (Lenovo)"], summaries
    assert "PowerEdge_<wbr>XE9680_<wbr>8xMI300X" in groups[0][1] and "ThinkSystem_" in groups[1][1]
    assert '<h4 class="noprint" id="v6-0-verified-other-vendors">Results on other vendors\' accelerators: 1' \
        in verified
    assert ("Not printed: 1 partner result not compared (1 no reference) and 1 result on other vendors' "
            "accelerators; each row, with its reason, is in the report on screen") in verified


def test_figures_are_rounded_and_carry_their_units():
    from pipeline.output import figures

    cases = [(figures.readable(1016380.0), "1,016,380"), (figures.readable(123.456), "123.5"),
             (figures.readable(23.5726), "23.57"), (figures.readable(8.0), "8"),
             (figures.readable(0.0515486), "0.0515"),
             (figures.readable(0), "0"), (figures.readable(None), ""), (figures.readable("n/a"), "n/a"),
             (figures.quantity(26006.2, "Tokens/s"), "26,006 Tokens/s"), (figures.quantity(5, None), "5"),
             (figures.quantity(23.5726, "Latency (s)"), "23.57 Latency (s)"),
             (figures.pct(93.197413), "93.2%"), (figures.signed_pct(-6.98989), "-6.99%"),
             (figures.signed_pct(2.0), "+2.00%"), (figures.ratio(3.131112), "3.13×"), (figures.stated(93.0), "93"),
             (figures.tolerance(4.0), "±4%"), (figures.axis_pct(-5.0), "-5%"), (figures.axis_pct(0.0), "0%"),
             (figures.count(1, "partner"), "1 partner"), (figures.count(7, "submitter"), "7 submitters"),
             (figures.pct(float("nan")), ""), (figures.signed_pct(True), "")]
    for got, expected in cases:
        assert got == expected, (got, expected)


def test_every_unverified_figure_sits_beside_the_mlcommons_sentence(inputs):
    report(inputs)
    page = parse(inputs["out"])
    assert len(page.marks) >= 6
    for section_text in page.marks:
        assert UNVERIFIED_FOOTNOTE in section_text, section_text[:300]
    verified, post = page.section_text("v6-0-verified"), page.section_text("v6-0-post-deadline")
    assert "PowerEdge_" in verified and "Vultr" not in verified
    assert "Vultr" in post and "PowerEdge_" not in post and UNVERIFIED_FOOTNOTE in post
    html = inputs["out"].read_text(encoding="utf-8")
    assert re.search(r'101,000 <span class=small>Tokens/s</span><br><span class="unv">unverified<sup>1</sup>', html)


def test_numbers_are_rounded_for_reading_and_claims_have_one_verdict_column(inputs):
    report(inputs)
    page = parse(inputs["out"])
    claims = page.section_text("v6-0-claims")
    assert "3.13×" in claims and "100.9%" in claims and "max |deviation| 10.00%" in claims
    assert not re.search(r"\d\.\d{4,}", "".join(page.text)), re.findall(r"\S*\d\.\d{4,}\S*", "".join(page.text))
    html = inputs["out"].read_text(encoding="utf-8")
    header = re.search(r'<table id="claims-v6-0".*?<thead>(.*?)</thead>', html).group(1)
    heads = re.findall(r"<th[^>]*>(.*?)</th>", header)
    assert heads == ["claim", "kind", "claimed", "computed", "verdict", "against", "label"]
    for verdict in ("does not hold", "holds only against a weaker comparator", "holds"):
        assert verdict in claims
    # the reproducibility claim (no subject) sits under its round, found from its partner results
    assert "partners-within-4" in claims
    assert "round not stated" not in "".join(page.text) and "without a round" not in "".join(page.text)


def test_tables_sort_and_filter_offline(inputs):
    report(inputs)
    html = inputs["out"].read_text(encoding="utf-8")
    script = re.search(r"<script>(.*?)</script>", html, re.S).group(1)
    assert "sortable" in script and "input.filter" in script
    assert len(re.findall(r'<table id="[^"]+" class="sortable"', html)) >= 8
    assert re.search(r'<td data-sort="-10(\.0)?" class="num">', html)     # numbers sort by value


def test_scaling_bars_are_labelled_by_model_and_scenario_under_their_system(inputs):
    report(inputs)
    page = parse(inputs["out"])
    scaling = page.section_text("v6-0-scaling")
    assert "87xMI355X_22xEPYC_9575F (AMD, 11 nodes, 87 accelerators)" in scaling
    assert "llama2-70b-99.9 · Server" in scaling and "llama2-70b-99.9 · Offline" in scaling
    assert "93.2%" in scaling and "no reference" in scaling and "75.0%" in scaling
    assert "1,016,380 Tokens/s" in scaling and "1,090,567 Tokens/s" in scaling    # value and expected, in units
    assert UNVERIFIED_FOOTNOTE in scaling                  # the MangoBoost row is unverified


def test_the_validation_results_are_rendered(inputs):
    report(inputs)
    page = parse(inputs["out"])
    text = page.section_text("validation")
    assert "2 of 3 expectations met in 2 suite(s); 1 failed." in text
    for expected in ("mlrepro-verified", "schemas/expectations/verified.json", "values are positive",
                     "expect_column_values_to_be_between", "1 of 4 rows unexpected: -5.0",
                     "results/verified/results.csv", "line 3, column value", "every row has a status"):
        assert expected in text, expected
    assert "../audit/data_docs/index.html" in [a.get("href") for t, a in page.tags if t == "a"]


def test_the_deviation_data_for_dvc_plots(inputs):
    report(inputs)
    rows = read_csv(inputs["out"].parent / "deviation.csv")
    assert list(rows[0]) == ["round", "partner", "model", "scenario", "system", "case", "status", "label",
                             "deviation_pct", "tolerance", "verdict"]
    got = {(r["partner"], r["scenario"], r["status"]): (round(float(r["deviation_pct"]), 2), r["verdict"])
           for r in rows}
    assert got == {("Dell", "Server", "verified"): (-2.0, "agree"),
                   ("Dell", "Offline", "verified"): (-10.0, "deviates"),
                   ("Vultr", "Server", "post-deadline"): (1.0, "agree")}


def test_all_text_is_escaped(inputs):
    report(inputs)
    html = inputs["out"].read_text(encoding="utf-8")
    assert HOSTILE not in html and "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_missing_inputs_are_said(inputs):
    report(inputs, with_docs=False)
    text = " ".join(parse(inputs["out"]).text)
    assert "No scaling input was given (option --scaling)." in text
    assert "No claims input was given (option --claims)." in text
    assert "No validation input was given (option --validation)." in text
    assert "The GX Data Docs are optional" in text

    result = report(inputs, "--scaling", inputs["out"].parent / "nope.json", with_docs=False)
    assert "warning: --scaling" in result.stderr
    assert "is missing" in " ".join(parse(inputs["out"]).text)


# ---- in a browser, on the shipped submissions and a late partner ------------------------

# A partner added after the deadline, with a long name: the first screen must still fit.
LATE_PARTNER = "Quanta_Cloud_Technology_Advanced_Systems_Laboratory"
SHOWN_LATE_PARTNER = LATE_PARTNER[:27] + "…"      # the first screen shortens a long name (whole in its tooltip)


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Path:
    """The report of the shipped submissions and one post-deadline partner
    (one result deviating, one agreeing), built by the pipeline's commands."""
    tmp = tmp_path_factory.mktemp("shipped")
    subs, data, audit = tmp / "submissions", tmp / "data", tmp / "audit"
    shutil.copytree(REPO / "submissions", subs)
    late = write_results_csv(tmp / "late.csv", [
        results_row(submitter=LATE_PARTNER, system="8xMI355X_2xEPYC_9575F", scenario="Server", value="90000"),
        results_row(submitter=LATE_PARTNER, system="8xMI355X_2xEPYC_9575F", scenario="Offline", value="102000")])
    submit(subs, late, LATE_PARTNER, "post-deadline", LATE)
    results, agreement = data / "results.parquet", data / "agreement.csv"
    run("ingest", subs, "--root", subs, "-o", results, "--rejected-out", data / "rejected.csv",
        "--versions-out", data / "versions.csv", "--exit-zero", expect=0)
    run("compare", results, "-o", agreement, "--params", REPO / "params.yaml", "--exit-zero", expect=0)
    run("partition", results, "--verified-out", tmp / "verified.csv", "--post-deadline-out", tmp / "post.csv",
        "--exit-zero", expect=0)
    run("claims", REPO / "claims.yaml", results, "-o", audit / "claims.json", "--params", REPO / "params.yaml",
        "--exit-zero", expect=0)
    run("scaling", results, "-o", audit / "scaling.json", "--params", REPO / "params.yaml", expect=0)
    run("audit", tmp / "verified.csv", tmp / "post.csv", "-o", audit,
        "--no-data-docs", "--exit-zero", expect=0)
    out = tmp / "reports" / "index.html"
    run("report", results, "--agreement", agreement, "--rejected", data / "rejected.csv",
        "--versions", data / "versions.csv", "--claims", audit / "claims.json", "--scaling", audit / "scaling.json",
        "--validation", audit / "validation.json", "--params", REPO / "params.yaml", "-o", out, expect=0)
    return out


# Appended to a copy of the report: where each first-screen answer is in the
# window, its text, the partner rows of each round (text and the partner's
# whole name), any label cut by its box, and the rows of the report's tables
# that are more than three lines tall (every folded group unfolded), as JSON
# in #probe.
PROBE = """<script>
var out = {height: innerHeight, width: innerWidth, answers: {}, cut: [], tall: []};
document.querySelectorAll("#answers [data-answer]").forEach(function (e) {
  var r = e.getBoundingClientRect();
  out.answers[e.dataset.answer] = {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
                                   text: e.innerText};
});
out.rounds = {}; out.names = {};
document.querySelectorAll("#answers [data-answer=partners] [data-round]").forEach(function (e) {
  var rows = Array.from(e.querySelectorAll("tbody tr"));
  out.rounds[e.dataset.round] = rows.map(function (r) { return r.innerText; });
  out.names[e.dataset.round] = rows.map(function (r) { return r.querySelector("a.pname").title; });
});
document.querySelectorAll(".clab, th, td, #answers [data-answer]").forEach(function (e) {
  if (e.scrollWidth > e.clientWidth + 1) out.cut.push(e.innerText.slice(0, 80));
});
document.querySelectorAll("details.nc").forEach(function (d) { d.open = true; });
document.querySelectorAll("table").forEach(function (t) {
  if (!/^(answers|agreement|notcompared|others|results)-/.test(t.id)) return;
  Array.from(t.rows).forEach(function (r) {
    var line = parseFloat(getComputedStyle(r.cells[0]).lineHeight);
    if (r.getBoundingClientRect().height > 3.5 * line) out.tall.push(t.id + ": " + r.innerText.slice(0, 80));
  });
});
// a word (a run of letters, digits, "." and "%": a name breaks only at "_", "/", "-" or a space)
// drawn on two lines is a name broken mid-word
out.broken = [];
var walker = document.createTreeWalker(document.querySelector("main"), NodeFilter.SHOW_TEXT);
for (var node = walker.nextNode(); node; node = walker.nextNode()) {
  var re = /[A-Za-z0-9.%]{2,}/g, m;
  while ((m = re.exec(node.data)) !== null) {
    var range = document.createRange(); range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
    var tops = new Set(Array.from(range.getClientRects()).map(function (r) { return Math.round(r.top); }));
    if (tops.size > 1) out.broken.push(m[0]);
  }
}
// the page in a window with a classic 17 px scrollbar (headless hides them): no horizontal scroll
document.documentElement.style.width = (innerWidth - 17) + "px";
out.overflow = document.documentElement.scrollWidth - document.documentElement.clientWidth;
var p = document.createElement("pre"); p.id = "probe"; p.textContent = JSON.stringify(out);
document.body.appendChild(p);
</script>"""


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def png_first_rows(path: Path, limit: int) -> list[bytes]:
    """The first ``limit`` unfiltered pixel rows of an 8-bit RGB(A) PNG."""
    data, pos, idat, header = path.read_bytes(), 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        header = struct.unpack(">IIBBBBB", chunk) if kind == b"IHDR" else header
        idat += chunk if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytes(width * bpp)
    for y in range(min(limit, height)):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a, b, c = (line[i - bpp] if i >= bpp else 0), prev[i], (prev[i - bpp] if i >= bpp else 0)
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return rows


def test_print_keeps_what_an_auditor_needs_and_says_where_the_rest_is(shipped):
    html = shipped.read_text(encoding="utf-8")
    assert ".noprint { display: none !important; }" in html
    first_screen = html.split('<section id="answers"', 1)[1].split("<nav>", 1)[0]
    assert "noprint" not in first_screen                 # the first screen prints whole
    tables = dict(re.findall(r'<table id="([^"]+)"[^>]*>(.*?)</table>', html, re.S))
    for ident in ("agreement-v6-0-verified", "agreement-v5-1-verified"):
        rows = re.findall(r"<tr( class=\"[^\"]*\")?>(.*?)</tr>", tables[ident].split("<tbody>")[1], re.S)
        printed = [body for cls, body in rows if "noprint" not in cls]
        assert printed and all(">deviates<" in body for body in printed), ident
        assert all(">deviates<" not in body for cls, body in rows if "noprint" in cls), ident
        assert f"Printed: {len(printed)} of {len(rows)} rows; all {len(rows)} are in the report on screen " \
               "and in the agreement table (data/agreement.csv)." in html
    claims = re.findall(r"<tr[^>]*>", tables["claims-v6-0"])
    # a reproducibility claim with nothing compared sits under its round, found from its notes
    assert "partners-mi350x-v6.0" in tables["claims-v6-0"] and "round not stated" not in html
    assert len(claims) == 1 + 26 and not any("noprint" in tr for tr in claims)     # every claim prints
    scaling = re.findall(r"<tr[^>]*>", tables["scaling-v6-0"])
    assert len(scaling) > 10 and not any("noprint" in tr for tr in scaling)     # every cluster prints


def test_partners_are_ordered_by_their_worst_deviation_in_every_round(shipped):
    """v5.1 is no longer on the first screen (a line of its own), but its table
    in the details keeps the order: ASUSTeK (-15.43%) above Quanta (-5.19%)."""
    from pipeline.output.report import answers
    from pipeline.output.report.html import macro
    report_load = importlib.import_module("pipeline.output.report.load")
    tmp = shipped.parents[1]
    data = report_load.load(RULES, report_load.Inputs(tmp / "data" / "results.parquet", tmp / "data" / "agreement.csv",
                                 tmp / "data" / "rejected.csv", tmp / "data" / "versions.csv"))
    html = str(macro("answers.html.j2", "partners")(answers.partner_rounds(data, ["v5.1"])[0]))
    names = re.findall(r'class="pname"[^>]*title="([^"]+)"', html)
    assert names.index("ASUSTeK") < names.index("Quanta_Cloud_Technology"), names
    assert names[:2] == ["ASUSTeK", "Vultr"], names


@needs_chromium
@pytest.mark.parametrize("width", [1366, 1024])
def test_chromium_shows_the_answers_on_the_first_screen(shipped, tmp_path, width):
    probed = tmp_path / "probed.html"
    probed.write_text(shipped.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = chromium(tmp_path, f"--window-size={width},768", "--dump-dom", probed.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    probe = json.loads(unescape(re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S).group(1)))
    # headless Chromium keeps room for a browser's bars: the page gets 625 px of the 768,
    # about what a laptop screen of that size shows of a page
    assert probe["width"] == width and 600 <= probe["height"] <= 768, probe
    answers = probe["answers"]
    assert set(answers) >= {"partners", "does-not-hold", "cherry-picked", "unverified", "checks"}
    for name, box in answers.items():                   # all of it on the first screen
        assert 0 <= box["top"] and box["bottom"] <= probe["height"] and box["right"] <= width, (name, box)
    # the partners left, the unverified results under them, the claims right (the checks under the
    # unverified results, or under the claims where the rounds stack)
    claims = [n for n in answers if n not in ("partners", "unverified", "checks")]
    assert max(answers[n]["right"] for n in ("partners", "unverified")) <= \
        min(answers[n]["left"] for n in claims), answers
    assert answers["partners"]["bottom"] <= answers["unverified"]["top"]
    assert probe["overflow"] <= 0, probe["overflow"]     # no horizontal scroll
    assert probe["broken"] == [], probe["broken"]         # no name broken mid-word
    assert probe["cut"] == []                           # no label or cell cut by its box
    assert probe["tall"] == []                          # no row of the report's tables over three lines

    # partners: submitters with results on AMD accelerators; the others counted apart
    rounds = probe["rounds"]
    # the newest two rounds have their tables; the older ones a line each
    assert sorted(rounds) == ["v6.0", "v6.1"] and (len(rounds["v6.1"]), len(rounds["v6.0"])) == (10, 11), rounds
    partners = answers["partners"]["text"]
    assert "v6.0: 11 partners" in partners and "and 7 submitters on other vendors' accelerators" in partners
    assert "v6.1: 10 partners" in partners
    assert "Earlier rounds (their tables in the details): v5.1: 12 partners, 4 deviating." in partners
    names = probe["names"]["v6.0"]
    for other in ("NVIDIA", "Nebius", "Lambda_SIT", "Lenovo", "Inventec", "ASUSTeK", "RedHat"):
        assert other not in names, (other, names)
    for rows in rounds.values():      # the deviating partners first, each group by |worst deviation|
        deviating = [int(row.split("\t")[3]) > 0 for row in rows]
        assert deviating == sorted(deviating, reverse=True), rows
        worst = [abs(float(row.split("\t")[6].split("%")[0])) if row.split("\t")[6].strip() else 0.0
                 for row in rows]
        n = deviating.count(True)
        assert worst[:n] == sorted(worst[:n], reverse=True) and worst[n:] == sorted(worst[n:], reverse=True), rows
    assert names[:5] == [LATE_PARTNER, "HPE", "Dell_MangoBoost", "ORACLE", "Dell"], names
    assert names[:1] == [LATE_PARTNER]
    late = rounds["v6.0"][0]
    assert re.match(rf"{SHOWN_LATE_PARTNER}\s*post-deadline\s+2\s+1\s+1\s+0\s+0\s+-10\.25%\s*unverified1$", late), late
    for round_, pattern in (("v6.1", r"Oracle\s+10\s+5\s+2\s+3\s+0\s+-5\.13%$"),
                            ("v6.1", r"Dell_\s*MangoBoost\s+8\s+3\s+1\s+4\s+0\s+-5\.36%$"),
                            ("v6.1", r"Dell_\s*AMD\s+12\s+0\s+0\s+12\s+0\s*$"),   # MI350P: no AMD result
                            ("v6.0", r"Dell_MangoBoost\s+12\s+0\s+4\s+4\s+4\s+-6\.99%$"),
                            ("v6.0", r"Dell\s+12\s+5\s+3\s+4\s+0\s+-4\.30%$"),    # its 6 B300 results apart
                            ("v6.0", r"Cisco\s+6\s+0\s+0\s+6\s+0\s*$")):
        assert any(re.match(pattern, row) for row in rounds[round_]), (round_, pattern, rounds[round_])

    fails = answers["does-not-hold"]["text"]
    assert "Claims that do not hold: 5" in fails and "every round partners-record" in fails   # the record's claim
    assert "partners-mi325x-v5.1" in fails and "max |deviation| 15.43%" in fails and "partners-mi300x-v5.1" in fails
    assert "partners-mi355x-llama2-v6.0" in fails and "13 of 17 within" in fails
    picked = answers["cherry-picked"]["text"]
    assert "Claims that hold only against a weaker comparator: 8" in picked
    # each claim names its scope under its id: the model variant, the scenarios, the accelerator
    assert re.search(r"llama2-server-vs-b300\s+llama2-70b-99 Server · MI355X\s+93%\s+93\.4%\s+87\.6%", picked), picked
    assert re.search(r"partners-mi355x-llama2-v6\.0\s+llama2-70b-99\.9 Interactive, Offline, Server · MI355X\s+"
                     r"within ±4%\s+max \|deviation\| 6\.99%\s+\(13 of 17 within\)", fails), fails
    unverified = answers["unverified"]["text"]
    assert "Unverified results: 4 of 347" in unverified and "v6.0: AMD 2, " in unverified
    assert UNVERIFIED_FOOTNOTE in unverified
    assert "22 expectations in 3 suites, all met" in answers["checks"]["text"]

    shot = tmp_path / f"report-first-screen-{width}.png"
    done = chromium(tmp_path, f"--screenshot={shot}", f"--window-size={width},768", shipped.as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    if os.environ.get("MLREPRO_ARTIFACTS"):             # CI keeps it (README: Outputs)
        target = Path(os.environ["MLREPRO_ARTIFACTS"])
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, target / shot.name)
    assert png_size(shot) == (width, 768)
    rows = png_first_rows(shot, 300)
    values = [v for row in rows for v in row[::7]]
    mean = sum(values) / len(values)
    assert sum((v - mean) ** 2 for v in values) / len(values) > 100      # text and tables, not a flat page


@needs_chromium
def test_chromium_prints_the_report_in_a_few_pages(shipped, tmp_path):
    pdf = tmp_path / "report.pdf"
    done = chromium(tmp_path, "--no-pdf-header-footer", f"--print-to-pdf={pdf}", shipped.as_uri())
    assert done.returncode == 0 and pdf.is_file(), done.stderr[-2000:]
    pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf.read_bytes()))
    # the printed report keeps what an auditor needs: the first screen whole, every claim, every scaling
    # row, the deviating partner rows and how each deviating system differs from its reference, every
    # post-deadline row, the rejected inputs, the versions not used and the failed expectations; the
    # agreeing rows, the rows not compared and the results on other vendors' accelerators (counted in a
    # printed line), the context comparisons, the record's rows, the used versions and the met
    # expectations stay on screen and in the CSVs. The shipped submissions (three rounds) and the
    # added partner print in at most 9 A4 landscape pages, about three a round.
    assert 1 <= pages <= 9, pages
