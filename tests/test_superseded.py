"""No move of a partner takes a result out of the auditor's view: a partner
withdraws its deviating result in a new version; the superseded stage judges
the old version apart (data/superseded.csv), and the report shows the
withdrawal with its reason and the verdict it removed, each superseded
version's verdicts, and a note on the claim about those partners. Through
the pipeline's commands, on a temporary submissions root (the shipped data
holds a superseded version, Dell's v5.1 v1, but no withdrawal)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO, read_csv, results_row, run, submit, write_results_csv

REASON = 'rerun pending <script>alert(1)</script> & "firmware"'
DELL = "PowerEdge_XE9785_8xMI355X"
LEDGER = """round: v6.0
tolerance_pct_points: 1.0
tolerance_ratio: 0.05
claims:
  - id: partners-mi355x
    text: "MI355X partner results stick to ±4% of AMD"
    source: test
    kind: reproducibility
    subject: {accelerator: MI355X, model: llama2-70b-99, nodes: 1}
    claimed_pct: 4
"""


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory) -> Path:
    """AMD's reference; Dell v1 (Server -5.27%, Offline agrees); Dell v2 withdraws Server."""
    tmp = tmp_path_factory.mktemp("superseded")
    subs, data = tmp / "submissions", tmp / "data"
    amd = write_results_csv(tmp / "amd.csv", [results_row(submitter="AMD", system="8xMI355X_2xEPYC_9575F",
                                                          scenario=s, value=v)
                                              for s, v in (("Server", "100282"), ("Offline", "110000"))])
    submit(subs, amd, "AMD")
    v1 = write_results_csv(tmp / "v1.csv", [results_row(system=DELL, scenario="Server", value="95000"),
                                            results_row(system=DELL, scenario="Offline", value="109000")])
    submit(subs, v1, "Dell")
    v2 = write_results_csv(tmp / "v2.csv", [results_row(system=DELL, scenario="Offline", value="109500")])
    submit(subs, v2, "Dell", "verified", "2026-02-20T11:00:00+00:00", "v6.0", "--withdraw",
           f"{DELL}:llama2-70b-99:Server:{REASON}")
    run("ingest-all", subs, "-o", data / "results.parquet", "--rejected-out", data / "rejected.csv",
        "--findings-out", data / "findings.json", "--versions-out", data / "versions.csv", "--exit-zero", expect=0)
    run("superseded", subs, "--results", data / "results.parquet", "--versions", data / "versions.csv",
        "-o", data / "superseded.csv", "--params", REPO / "params.yaml", expect=0)
    run("compare", data / "results.parquet", "-o", data / "agreement.csv", "--params", REPO / "params.yaml",
        "--exit-zero", expect=0)
    (tmp / "claims.yaml").write_text(LEDGER, encoding="utf-8")
    run("claims", tmp / "claims.yaml", data / "results.parquet", "-o", tmp / "claims.json",
        "--params", REPO / "params.yaml", "--exit-zero", expect=0)
    run("report", data / "results.parquet", "--agreement", data / "agreement.csv", "--rejected",
        data / "rejected.csv", "--versions", data / "versions.csv", "--superseded", data / "superseded.csv",
        "--claims", tmp / "claims.json", "--params", REPO / "params.yaml", "-o", tmp / "index.html", expect=0)
    return tmp


def test_the_superseded_version_is_judged_apart_with_each_fate(pipeline):
    rows = {r["scenario"]: r for r in read_csv(pipeline / "data" / "superseded.csv")}
    assert set(rows) == {"Server", "Offline"}
    server, offline = rows["Server"], rows["Offline"]
    assert (server["version"], server["superseded_by"], server["fate"], server["verdict"]) == ("1", "2", "withdrawn",
                                                                                             "deviates")
    assert server["withdrawal_reason"] == REASON and server["deviation_pct"].startswith("-5.26")
    assert (offline["fate"], offline["verdict"], offline["withdrawal_reason"]) == ("replaced", "agree", "")
    # the current verdicts are v2's alone: the withdrawn result is in no current table
    current = read_csv(pipeline / "data" / "agreement.csv")
    assert [(r["submitter"], r["scenario"]) for r in current] == [("Dell", "Offline")]


def test_the_report_shows_the_withdrawal_its_reason_and_the_verdict_it_removed(pipeline):
    html = (pipeline / "index.html").read_text(encoding="utf-8")
    section = html.split('id="v6-0-superseded"', 1)[1].split("</section>", 1)[0]
    withdrawals = section.split("<h4>Withdrawals</h4>", 1)[1].split("<h4>", 1)[0]
    assert "rerun pending &lt;script&gt;alert(1)&lt;/<wbr>script&gt; &amp; &quot;firmware&quot;" in withdrawals
    assert "<script>alert" not in html                                 # escaped, everywhere
    assert ">deviates<" in withdrawals and "-5.27%" in withdrawals and "v2 (of v1)" in withdrawals
    every = section.split("Every result of a superseded version", 1)[1]
    assert every.count("<tr") == 1 + 2 and ">replaced<" in every and ">withdrawn<" in every


def test_a_claim_about_partners_notes_the_withdrawn_deviating_result(pipeline):
    html = (pipeline / "index.html").read_text(encoding="utf-8")
    claims = html.split('id="claims-v6-0"', 1)[1].split("</table>", 1)[0]
    assert "Dell withdrew a deviating result in v2: PowerEdge_<wbr>XE9785_<wbr>8xMI355X llama2-70b-99 Server -5.27%" \
        in claims
    assert ">holds<" in claims        # the claim holds on what is left: the note says why
