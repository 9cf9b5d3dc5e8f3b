"""Every comparison explained: how a partner's system differs from its
reference's, the context of a result with no same-round reference, and a
partner's record across rounds (with its claim)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from conftest import RULES, canonical_row, run, write_canonical
from test_gate import base_repo, repo  # noqa: F401  (fixtures of the gate's journey)

from pipeline.analyses import compare as compare_mod
from pipeline.analyses.claims import check_claims
from pipeline.analyses.differences import Difference, differences_of, setup
from pipeline.analyses.ledger import Claim, Ledger
from pipeline.analyses.record import ALL_ROUNDS, record
from pipeline.core.model import AGREE, DEVIATES, DOES_NOT_HOLD, HOLDS, NO_REFERENCE, POST_DEADLINE, plain
from pipeline.ingest import table
from pipeline.ingest.submissions import ingest

REPO = Path(__file__).resolve().parents[1]
V60 = REPO / "submissions" / "v6.0"

pytestmark = pytest.mark.usefixtures("no_project_params")


def frame(rows):
    return table.to_frame(rows)


def partner(submitter: str, value: float, **kw) -> dict:
    return canonical_row(submitter=submitter, system=kw.pop("system", f"{submitter}_8xMI355X"), value=value,
                         file=f"{kw.get('round', 'v6.0')}/{submitter}/v1/results.csv", line=kw.pop('line', 2), **kw)


# ---- the v6.0 example: gpt-oss-120b Server on 8xMI355X, from the shipped data ---------------

@pytest.fixture(scope="module")
def v60_gpt_oss():
    report = ingest(RULES, [V60 / s / "v1" / "summary.csv" for s in ("AMD", "HPE", "Dell")], status="verified")
    agreement = compare_mod.compare(RULES, report.table).frame()
    rows = agreement[(agreement["model"] == "gpt-oss-120b") & (agreement["scenario"] == "Server")
                     & (agreement["nodes"] == 1)]
    return report, {r["submitter"]: r for r in rows.to_dict("records")}


def test_the_v60_gpt_oss_server_deviations_say_how_the_systems_differ(v60_gpt_oss):
    _, rows = v60_gpt_oss
    hpe, dell = rows["HPE"], rows["Dell"]
    assert (hpe["verdict"], round(hpe["deviation_pct"], 1)) == (DEVIATES, -8.3)
    assert (dell["verdict"], round(dell["deviation_pct"], 1)) == (DEVIATES, -4.3)
    assert hpe["reference_system"] == dell["reference_system"] == "8xMI355X_2xEPYC_9575F"
    assert hpe["differences"] == ("framework vLLM (reference PyTorch 2.9.1, ROCm 7.0.0); "
                                  "operating system Ubuntu 22.04 (reference Ubuntu 22.04.5 LTS)")
    assert hpe["differs_in"] == "framework, os"
    assert dell["differs_in"] == "host, framework, os"
    assert dell["differences"] == (
        "host processor 2× AMD EPYC 9655 (reference 2× AMD EPYC 9575F); "
        "framework vLLM 0.14.0rc3.dev30, Pytorch 2.9.1, ROCm 7.0.0.70000-38~22.04 (reference PyTorch 2.9.1, "
        "ROCm 7.0.0); operating system Ubuntu 24.04.3 LTS (reference Ubuntu 22.04.5 LTS)")


def test_a_host_count_that_contradicts_the_system_id_is_a_located_warning(v60_gpt_oss):
    report, _ = v60_gpt_oss
    found = [f for f in report.findings if f.code == "description-contradicts-system-id"
             and f.where.line == 10]
    [warning] = found
    assert warning.severity == "warning" and warning.file.endswith("submissions/v6.0/AMD/v1/summary.csv")
    assert warning.where.column == "host_processors_per_node" and warning.found == "8"
    assert "2 per node" in warning.expected and "8xMI355X_2xEPYC_9575F" in warning.expected
    # kept: the reference's rows are not lost, and its host count is the id's
    assert not report.dispositions


def test_the_published_table_holds_the_same_contradiction_as_a_warning():
    report = ingest(RULES, [REPO / "published" / "v6.0" / "summary.csv"], status="verified", published=True)
    codes = {(f.code, f.severity) for f in report.findings if f.code == "description-contradicts-system-id"}
    assert codes == {("description-contradicts-system-id", "warning")}


def test_a_trees_system_description_is_the_one_mlcommons_published():
    """The real v5.1 tree's systems/*.json give the host, framework and OS
    that the published summary JSON states for the same results."""
    keys = ["submitter", "system", "model", "scenario"]
    described = ["host_processor", "host_processors_per_node", "framework", "operating_system"]
    tree = ingest(RULES, [REPO / "tests" / "real" / "v5.1-submission-tree"], status="verified").table
    published = ingest(RULES, [REPO / "tests" / "real" / "v5.1-summary_results.json"], status="verified",
                       published=True).table
    both = tree[keys + described].merge(published[keys + described], on=keys, suffixes=("", "_published"))
    assert len(both) == len(tree) == 30
    for column in described:
        assert both[column].notna().all() and (both[column] == both[f"{column}_published"]).all(), column


def test_every_shipped_no_reference_row_has_a_context_or_the_reason_none_exists():
    report = ingest(RULES, [REPO / "submissions"], root=REPO / "submissions")
    agreement = compare_mod.compare(RULES, report.table).frame()
    no_ref = agreement[agreement["verdict"] == NO_REFERENCE]
    assert len(no_ref) and (no_ref["context_note"].str.len() > 0).all()
    in_context = no_ref[no_ref["context_system"].notna()]
    assert len(in_context) and in_context["context_note"].str.startswith("context only, not a verdict").all()
    assert in_context["deviation_pct"].isna().all()   # context never makes a deviation


def test_differences_compare_what_each_side_states():
    mine = {"system": "8xMI355X_2xEPYC_9655", "accelerator_variant": "MI355X 288GB", "nodes": 1,
            "accelerators_per_node": 8, "host_processor": "AMD EPYC 9655", "host_processors_per_node": "2",
            "framework": "vLLM 0.14+gabc", "operating_system": "Ubuntu 24.04 LTS", "weight_data_types": None}
    same = {**mine, "framework": "vLLM 0.14", "operating_system": "Ubuntu 24.04"}
    assert differences_of(setup(mine), setup(same)) == ()   # a local version and "LTS" are not differences
    other = {**mine, "weight_data_types": "fp4", "framework": None, "host_processors_per_node": "8",
             "system": "XE9680"}
    assert differences_of(setup(mine), setup(other)) == (
        Difference("host", "2× AMD EPYC 9655", "8× AMD EPYC 9655"), Difference("framework", "vLLM 0.14", None),
        Difference("weights", None, "fp4"))


def test_a_v2_table_without_a_description_compares_as_before():
    rows = [canonical_row(), partner("Dell", 95000.0)]
    from pipeline.ingest.resolve import DESCRIPTION
    t = frame(rows).drop(columns=list(DESCRIPTION))
    [row] = compare_mod.compare(RULES, t).frame().to_dict("records")
    assert (row["verdict"], row["differences"], row["differs_in"]) == (DEVIATES, "", "")


# ---- context where there is no reference -------------------------------------------------

def test_a_no_reference_row_gets_the_nearest_reference_per_accelerator_as_context():
    rows = [canonical_row(value=80000.0),
            partner("Dell", 150000.0, system="16xMI355X", nodes=2, total_accelerators=16,
                    composition="MI355X:16")]
    report = compare_mod.compare(RULES, frame(rows))
    [row] = report.frame().to_dict("records")
    assert row["verdict"] == NO_REFERENCE and row["deviation_pct"] != row["deviation_pct"]   # NaN: no verdict
    assert row["context_system"] == "8xMI355X_2xEPYC_9575F" and row["context_per_accelerator"] == 10000.0
    assert row["context_deviation_pct"] == pytest.approx(-6.25)   # 9375 against 10000 per accelerator
    assert row["context_note"].startswith("context only, not a verdict: same accelerator")
    assert row["differs_in"] == "nodes"
    assert report.summary[AGREE] == report.summary[DEVIATES] == 0 and report.summary[NO_REFERENCE] == 1


def test_the_previous_generation_is_the_context_when_the_accelerator_has_no_reference():
    rows = [canonical_row(accelerator="MI325X", system="8xMI325X", composition="MI325X:8", value=40000.0),
            partner("Cisco", 50000.0, accelerator="MI350X", system="8xMI350X", composition="MI350X:8")]
    [row] = compare_mod.compare(RULES, frame(rows)).frame().to_dict("records")
    assert row["verdict"] == NO_REFERENCE and row["context_system"] == "8xMI325X"
    assert row["context_note"] == "context only, not a verdict: same model and scenario, previous generation (MI325X)"
    assert row["context_deviation_pct"] == pytest.approx(25.0)


def test_a_row_without_any_near_reference_says_why():
    rows = [canonical_row(model="llama2-70b-99.9"), partner("Cisco", 50000.0)]
    [row] = compare_mod.compare(RULES, frame(rows)).frame().to_dict("records")
    assert row["verdict"] == NO_REFERENCE and pd.isna(row["context_system"])
    assert row["context_note"].startswith("no result of the reference submitter for llama2-70b-99 Server in v6.0")


# ---- the record across rounds, and its claim ---------------------------------------------

def _record_rows():
    return [canonical_row(round="v5.1", accelerator="MI325X", system="8xMI325X", composition="MI325X:8",
                          file="v5.1/AMD/v1/results.csv", line=2),
            partner("Dell", 99000.0, round="v5.1", accelerator="MI325X", composition="MI325X:8", system="D325"),
            canonical_row(), partner("Dell", 97000.0), partner("Dell", 103000.0, scenario="Offline", line=3),
            canonical_row(scenario="Offline", file="v6.0/AMD/v1/results.csv", line=3)]


def _record_ledger() -> Ledger:
    claim = Claim("record", "record", "partners stick to ±4% across generations", {"division": "closed"},
                  None, 4.0, "pct", 1.0, 1)
    return Ledger("claims.yaml", round="v6.0", claims=[claim])


def test_the_record_counts_each_partner_per_generation_and_round():
    kept = record(compare_mod.compare(RULES, frame(_record_rows())).frame())
    by = {(r["accelerator"], r["round"]): r for r in kept.rows}
    assert set(by) == {("MI325X", "v5.1"), ("MI325X", ALL_ROUNDS), ("MI355X", "v6.0"), ("MI355X", ALL_ROUNDS)}
    assert (by["MI355X", "v6.0"]["compared"], by["MI355X", "v6.0"]["agree"]) == (2, 2)
    assert by["MI355X", "v6.0"]["worst_deviation_pct"] == pytest.approx(-3.0)
    assert (by["MI325X", ALL_ROUNDS]["compared"], by["MI325X", ALL_ROUNDS]["worst_round"]) == (1, "v5.1")


def test_a_post_deadline_result_never_changes_the_record_or_its_claim():
    rows = _record_rows()
    late = partner("Dell", 50000.0, scenario="Interactive", status=POST_DEADLINE, line=9)
    late_ref = canonical_row(scenario="Interactive", status=POST_DEADLINE, file="v6.0/AMD/v2/results.csv", line=2)
    before = record(compare_mod.compare(RULES, frame(rows)).frame()).rows
    after = record(compare_mod.compare(RULES, frame(rows + [late, late_ref])).frame()).rows
    assert before == after
    claims_before = check_claims(RULES, _record_ledger(), frame(rows)).rows
    claims_after = check_claims(RULES, _record_ledger(), frame(rows + [late, late_ref])).rows
    assert claims_before[0]["verdict"] == HOLDS and claims_before[0]["computed"] == pytest.approx(3.0)
    assert [r.to_dict() for r in claims_before] == [r.to_dict() for r in claims_after]


def test_the_record_claim_does_not_hold_when_a_verified_result_is_outside():
    rows = _record_rows() + [partner("HPE", 90000.0)]
    [row] = check_claims(RULES, _record_ledger(), frame(rows)).rows
    assert row["verdict"] == DOES_NOT_HOLD and row["computed"] == pytest.approx(10.0)
    assert row["outside"] == [{"submitter": "HPE", "accelerator": "MI355X", "deviates": 1,
                               "worst_deviation_pct": -10.0}]


def test_mlrepro_record_prints_the_record_the_library_computes(tmp_path):
    path = write_canonical(tmp_path / "results.csv", _record_rows())
    printed = run("record", path, expect=0).stdout.splitlines()
    assert printed[0].split() == ["submitter", "accelerator", "round", "compared", "agree", "deviates",
                                  "no_reference", "worst_deviation_pct"]
    assert [line.split() for line in printed[1:5]] == [
        ["Dell", "MI325X", "v5.1", "1", "1", "0", "0", "-1"],
        ["Dell", "MI325X", "all", "rounds", "1", "1", "0", "0", "-1"],
        ["Dell", "MI355X", "v6.0", "2", "2", "0", "0", "-3"],
        ["Dell", "MI355X", "all", "rounds", "2", "2", "0", "0", "-3"]]
    as_json = run("record", path, "--format", "json", expect=0).stdout
    assert json.loads(as_json)["rows"] == plain(record(compare_mod.compare(RULES, frame(_record_rows())).frame()).rows)


# ---- the gate: a failing row says how its system differs (the one journey here) -----------

def _described(submitter: str, system: str, value: str, framework: str, os_: str, host: str) -> str:
    from test_gate import HEADER, MI355X
    return (f"{HEADER},host_processor,host_processors_per_node,framework,operating_system\n"
            f"{submitter},{system},{MI355X},8,1,llama2-70b-99,Server,{value},Tokens/s,closed,available,"
            f"{host},2,{framework},{os_}\n")


def test_the_gate_shows_a_failing_partner_how_its_system_differs(repo):
    from gitrepo import commit, git
    from test_gate import DELL_SYSTEM, gate, submit

    git(repo, "checkout", "-q", "main")
    submit(repo, _described("AMD", "8xMI355X_2xEPYC_9575F", "100282", "PyTorch 2.9.1 + ROCm 7.0.0",
                            "Ubuntu 22.04.5", "AMD EPYC 9575F"), "AMD")
    commit(repo, "AMD v2: the reference states its system")
    git(repo, "checkout", "-q", "-b", "pr-described")
    # a partner's free text: printed as written, never a mention or markup in the pull-request comment
    submit(repo, _described("Dell", DELL_SYSTEM, "90000", "vLLM 0.14 @maintainers <b>", "Ubuntu 24.04.3",
                            "AMD EPYC 9655"), "Dell")
    commit(repo, "Dell v2")
    text = gate(repo)
    assert text.returncode == 1
    said = ("framework {} (reference PyTorch 2.9.1 + ROCm 7.0.0); operating system Ubuntu 24.04.3 "
            "(reference Ubuntu 22.04.5)")
    assert ("  your system differs from the reference's: host processor 2× AMD EPYC 9655 (reference 2× AMD "
            "EPYC 9575F); " + said.format("vLLM 0.14 @maintainers <b>")) in text.stdout.splitlines()
    markdown = gate(repo, "--format", "markdown").stdout
    assert "### How a deviating result's system differs from the reference's" in markdown
    # inside a code span nothing is live: no mention, no markup (core/escape.py)
    line = next(x for x in markdown.splitlines() if "(-10.25%)" in x)
    assert ("(-10.25%): `host processor 2× AMD EPYC 9655 (reference 2× AMD EPYC 9575F); "
            + said.format("vLLM 0.14 @maintainers <b>") + "`") in line
    assert markdown.count("@maintainers") == markdown.count("`host processor 2× AMD EPYC 9655")
