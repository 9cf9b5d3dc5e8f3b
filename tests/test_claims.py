"""The claims ledger: reading it (every error a finding with the claim id and
line), recomputing ratio, scaling and reproducibility claims, and the shipped
ledger (claims.yaml) against the shipped submissions."""

from __future__ import annotations

import json
import textwrap

import pytest
from hypothesis import given, strategies as st

from conftest import RULES, REPO, UNVERIFIED_FOOTNOTE, canonical_row, run, run_json, write_canonical
from test_scaling import frame, published_rows

from pipeline.analyses import claims, ledger as claims_ledger
from pipeline.core.formulas import within
from pipeline.core.model import COMPARISON_DISCLAIMER
pytestmark = pytest.mark.usefixtures("no_project_params")


def ledger_file(tmp_path, text: str):
    path = tmp_path / "claims.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def claims_json(tmp_path, ledger: str, rows: list[dict], expect=None) -> dict:
    results = write_canonical(tmp_path / "results.csv", rows)
    return run_json("claims", ledger_file(tmp_path, ledger), results, expect=expect)


# AMD v6.0 MI355X against two B200 systems (figures illustrative, around the seed's Wan-2.2 ones)
def wan(system, value, **kw):
    base = dict(model="wan-2.2-t2v-a14b", scenario="SingleStream", units="Latency (s)", system=system,
                value=value, file="v6.0/x/v1/results.csv", line=len(system))
    return canonical_row(**{**base, **kw})


WAN_ROWS = [wan("8xMI355X", 27.374, division="open"),
            wan("8xMI355X", 23.572, division="open", status="post-deadline", file="v6.0/AMD/v2/results.csv", line=2),
            wan("8xB200_a", 25.458, submitter="NVIDIA", accelerator="B200", composition="B200:8"),
            wan("8xB200_b", 24.0, submitter="NVIDIA", accelerator="B200", composition="B200:8")]


# ---- reading the ledger: every problem is a finding ----------------------------------

GOOD = """
    round: v6.0
    claims:
      - id: wan-vs-b200
        kind: ratio
        subject:    {submitter: AMD, model: wan-2.2-t2v-a14b, status: verified}
        comparator: {accelerator: B200}
        claimed_pct: 93
"""

LEDGER_ERRORS = [
    # (name, ledger text, finding code, text the place must contain)
    ("bad-yaml", "round: v6.0\nclaims:\n  - id: a\n    kind: [ratio\n", "ledger-invalid", "line "),
    ("not-a-mapping", "- just a list\n", "ledger-invalid", "line 1"),
    ("no-claims", "round: v6.0\nclaims: []\n", "ledger-invalid", "key claims"),
    ("unknown-top-key", GOOD + "    rounds: v5.1\n", "unknown-key", "key rounds"),
    ("unknown-claim-key", GOOD.replace("claimed_pct: 93", "claimd_pct: 93"), "unknown-key",
     "line 7, key claims.wan-vs-b200.claimd_pct"),
    ("unknown-selector-key", GOOD.replace("{accelerator: B200}", "{accel: B200}"), "unknown-key",
     "line 6, key claims.wan-vs-b200.comparator"),
    ("bad-kind", GOOD.replace("kind: ratio", "kind: speedup"), "ledger-invalid", "key claims.wan-vs-b200.kind"),
    ("no-claimed", GOOD.replace("        claimed_pct: 93\n", ""), "ledger-invalid", "key claims.wan-vs-b200"),
    ("both-claimed", GOOD + "        claimed_ratio: 0.93\n", "ledger-invalid", "key claims.wan-vs-b200"),
    ("negative-tolerance", GOOD + "        tolerance_pct_points: -1\n", "ledger-invalid",
     "key claims.wan-vs-b200.tolerance_pct_points"),
    ("nodes-as-text", GOOD.replace("{accelerator: B200}", "{accelerator: B200, nodes: '1'}"), "ledger-invalid",
     "key claims.wan-vs-b200.comparator"),
    ("bad-status", GOOD.replace("status: verified", "status: official"), "ledger-invalid",
     "key claims.wan-vs-b200.subject"),
    ("comparator-on-scaling", GOOD.replace("kind: ratio", "kind: scaling"), "ledger-invalid",
     "key claims.wan-vs-b200.comparator"),
    ("duplicate-id", GOOD + GOOD.split("claims:\n")[1], "ledger-invalid", "key claims.wan-vs-b200"),
    ("duplicate-key", GOOD + "        claimed_pct: 94\n", "ledger-invalid", "line 8, key claims.wan-vs-b200"),
    ("no-id", GOOD.replace("id: wan-vs-b200", "text: no id"), "ledger-invalid", "key claims.#1"),
    ("subject-matches-nothing", GOOD.replace("submitter: AMD", "submitter: Nobody"), "selector-unmatched",
     "line 5, key claims.wan-vs-b200.subject"),
    ("subject-matches-several", GOOD.replace("submitter: AMD", "division: closed"), "selector-ambiguous",
     "line 5, key claims.wan-vs-b200.subject"),
    ("comparator-matches-nothing", GOOD.replace("{accelerator: B200}", "{accelerator: B300}"),
     "selector-unmatched", "line 6, key claims.wan-vs-b200.comparator"),
]


@pytest.mark.parametrize(("name", "text", "code", "place"), LEDGER_ERRORS, ids=[c[0] for c in LEDGER_ERRORS])
def test_every_ledger_problem_is_a_finding_with_the_claim_and_line(tmp_path, name, text, code, place):
    doc = claims_json(tmp_path, text, WAN_ROWS, expect=1)
    codes = [f["code"] for f in doc["findings"]]
    assert code in codes, doc["findings"]
    f = doc["findings"][codes.index(code)]
    assert place in f["place"], f
    assert f["file"].endswith("claims.yaml")
    assert f["severity"] == "error"


def test_the_ledger_format_is_a_valid_json_schema_speaking_the_project_vocabulary():
    import jsonschema

    from pipeline.core.model import STATUSES

    jsonschema.Draft202012Validator.check_schema(claims_ledger.SCHEMA)
    status = claims_ledger.SCHEMA["$defs"]["selector"]["properties"]["status"]["enum"]
    assert status == [s.code for s in STATUSES]
    assert claims_ledger.INT_KEYS == ("nodes", "accelerators_per_node", "total_accelerators")


def test_a_ledger_claim_with_a_problem_is_kept_invalid_and_the_others_are_read(tmp_path):
    text = GOOD + """\
      - id: scaling-bad
        kind: scaling
        subject: {submitter: AMD}
        claimed_ratio: 0.9
    """
    ledger = claims_ledger.read_ledger(RULES, ledger_file(tmp_path, text))
    assert [c.id for c in ledger.claims] == ["wan-vs-b200"] and [i for i, _ in ledger.invalid] == ["scaling-bad"]
    (f,) = ledger.findings
    assert (f.code, f.where.key, f.line) == ("ledger-invalid", "claims.scaling-bad.claimed_ratio", 11)
    claim = ledger.claims[0]
    assert (claim.measure, claim.claimed, claim.tolerance) == ("pct", 93.0, 1.0)


def test_a_good_ledger_has_no_findings_and_exits_0(tmp_path):
    doc = claims_json(tmp_path, GOOD, WAN_ROWS[:3], expect=0)   # one B200 only
    assert doc["findings"] == [] and [r["id"] for r in doc["rows"]] == ["wan-vs-b200"]


def test_the_ambiguous_subject_names_its_candidates(tmp_path):
    rows = WAN_ROWS + [wan("8xMI355X_b", 26.0, division="open")]
    doc = claims_json(tmp_path, GOOD.replace(", status: verified", ""), rows, expect=1)
    (row,) = doc["rows"]
    assert row["verdict"] == "ambiguous"
    assert len(row["candidates"]) == 2 and all("8xMI355X" in c for c in row["candidates"])
    assert "27.374" in doc["findings"][0]["found"] and "26" in doc["findings"][0]["found"]


def test_a_subject_without_a_status_is_the_verified_result_and_ignores_its_post_deadline_twin(tmp_path):
    """A claim that names no status is a claim about verified results: the
    post-deadline twin of the subject neither makes it ambiguous nor changes it."""
    verified = claims_json(tmp_path, GOOD, WAN_ROWS, expect=0)["rows"][0]
    doc = claims_json(tmp_path, GOOD.replace(", status: verified", ""), WAN_ROWS, expect=0)
    (row,) = doc["rows"]
    assert row["subject"]["status"] == "verified" and row["subject"]["value"] == 27.374
    assert {k: v for k, v in row.items() if k != "line"} == {k: v for k, v in verified.items() if k != "line"}


def test_invalid_claims_still_appear_as_rows_and_the_others_are_checked(tmp_path):
    text = GOOD + GOOD.split("claims:\n")[1].replace("wan-vs-b200", "broken").replace("kind: ratio", "kind: x")
    doc = claims_json(tmp_path, text, WAN_ROWS, expect=1)
    assert [(r["id"], r["verdict"]) for r in doc["rows"]] == [("wan-vs-b200", "cherry-picked"), ("broken", "invalid")]


def test_an_unreadable_ledger_is_a_finding_not_a_traceback(tmp_path):
    results = write_canonical(tmp_path / "results.csv", WAN_ROWS)
    (tmp_path / "bad.yaml").write_bytes(b"round: v6.0\nclaims: \xff\xfe\n")
    doc = run_json("claims", tmp_path / "bad.yaml", results, expect=1)
    assert doc["findings"][0]["code"] == "file-unreadable"
    assert run("claims", tmp_path / "missing.yaml", results, expect=2)


# ---- ratio claims ------------------------------------------------------------------------

def test_latency_ratio_comparator_over_subject_best_match_strongest_and_range(tmp_path):
    doc = claims_json(tmp_path, GOOD, WAN_ROWS, expect=0)   # cherry-picked is a warning
    (row,) = doc["rows"]
    # against B200_a (25.458 s): 25.458 / 27.374 = 93.0 % -> the best match of the claimed 93
    assert row["comparator"]["system"] == "8xB200_a"
    assert row["computed"] == pytest.approx(25.458 / 27.374 * 100, abs=1e-6)
    assert row["holds"] is True
    # the strongest B200 is the one with the lowest latency (24.0 s): 87.7 %, outside 93 ± 1
    assert row["best_comparator"]["system"] == "8xB200_b"
    assert row["computed_vs_best"] == pytest.approx(24.0 / 27.374 * 100, abs=1e-6)
    assert (row["range_min"], row["range_max"]) == (row["computed_vs_best"], row["computed"])
    assert row["cherry_picked"] is True and row["verdict"] == "cherry-picked"
    assert row["eligible_comparators"] == 2
    assert [f["code"] for f in doc["findings"]] == ["claim-cherry-picked"]
    assert doc["findings"][0]["severity"] == "warning"
    assert "division differs from the comparator: open against closed" in row["notes"]
    assert row["label"] == "verified" and row["footnote"] == "" and row["verified"] is True


def test_rate_ratio_is_subject_over_comparator(tmp_path):
    rows = [canonical_row(value=100282.0, model="llama2-70b-99.9"),
            canonical_row(round="v5.1", system="8xMI325X_1", accelerator="MI325X", composition="MI325X:8",
                          value=32027.6, model="llama2-70b-99.9")]
    ledger = """
        round: v6.0
        claims:
          - id: generation
            kind: ratio
            subject:    {submitter: AMD, accelerator: MI355X, model: llama2-70b-99.9, scenario: Server, nodes: 1}
            comparator: {submitter: AMD, accelerator: MI325X, round: v5.1}
            claimed_ratio: 3.1
            tolerance_ratio: 0.05
    """
    (row,) = claims_json(tmp_path, ledger, rows, expect=0)["rows"]
    assert row["computed"] == pytest.approx(100282 / 32027.6, abs=1e-6)
    assert row["measure"] == "ratio" and row["holds"] is True and row["cherry_picked"] is False
    assert row["notes"] == ["round (version) differs from the comparator: v6.0 against v5.1"]


HOLDS = [  # computed %, claimed %, tolerance, holds (inclusive bound)
    (94.0, 93.0, 1.0, True), (92.0, 93.0, 1.0, True), (94.0001, 93.0, 1.0, False),
    (91.9999, 93.0, 1.0, False), (93.0, 93.0, 0.0, True)]


@pytest.mark.parametrize(("computed", "claimed", "tol", "holds"), HOLDS)
def test_a_claim_holds_within_its_tolerance_inclusive(computed, claimed, tol, holds):
    subject = canonical_row(value=computed)
    comparator = canonical_row(submitter="NVIDIA", system="b200", accelerator="B200", composition="B200:8",
                               value=100.0)
    claim = claims_ledger.Claim("c", "ratio", "", {"submitter": "AMD"}, {"accelerator": "B200"}, claimed, "pct", tol, 1)
    (row,) = claims.check_claims(RULES, claims_ledger.Ledger("l.yaml", "v6.0", [claim]), frame([subject, comparator])).rows
    assert row["holds"] is holds


def test_eligible_comparators_verified_closed_single_node_uncapped(tmp_path):
    b200 = dict(submitter="NVIDIA", accelerator="B200", composition="B200:8")
    rows = WAN_ROWS[:2] + [
        wan("8xB200_ok", 25.458, **b200),
        wan("8xB200_late", 20.0, status="post-deadline", **b200),
        wan("8xB200_open", 20.0, division="open", **b200),
        wan("8xB200_Power_Cap_1000W", 20.0, **b200),
        wan("16xB200", 20.0, nodes=2, total_accelerators=16, **{**b200, "composition": "B200:16"}),
    ]
    (row,) = claims_json(tmp_path, GOOD, rows, expect=0)["rows"]
    assert row["eligible_comparators"] == 1 and row["comparator"]["system"] == "8xB200_ok"
    assert row["verdict"] == "holds"


def test_a_post_deadline_subject_may_use_unverified_comparators_and_carries_the_wording(tmp_path):
    ledger = GOOD.replace("status: verified", "status: post-deadline").replace("claimed_pct: 93", "claimed_pct: 108")
    (row,) = claims_json(tmp_path, ledger, WAN_ROWS, expect=0)["rows"]
    assert row["comparator"]["system"] == "8xB200_a"
    assert row["computed"] == pytest.approx(25.458 / 23.572 * 100, abs=1e-6)
    assert row["verified"] is False and row["label"] == "unverified"
    assert row["footnote"] == UNVERIFIED_FOOTNOTE
    assert row["disclaimer"] == COMPARISON_DISCLAIMER
    assert "verified/unverified status differs from the comparator: post-deadline against verified" in row["notes"]


def test_notes_state_scenario_and_accelerator_count_differences(tmp_path):
    rows = [canonical_row(value=100000.0),
            canonical_row(submitter="NVIDIA", system="16xB200", accelerator="B200", composition="B200:16",
                          nodes=2, total_accelerators=16, scenario="Offline", value=150000.0)]
    ledger = """
        round: v6.0
        claims:
          - id: odd
            kind: ratio
            subject:    {submitter: AMD}
            comparator: {accelerator: B200, nodes: 2, scenario: Offline}
            claimed_pct: 66
    """
    (row,) = claims_json(tmp_path, ledger, rows, expect=0)["rows"]
    assert "scenario differs from the comparator: Server against Offline" in row["notes"]
    assert "accelerator count differs from the comparator: 8 against 16" in row["notes"]


def test_a_claim_that_does_not_hold_is_an_error_finding(tmp_path):
    doc = claims_json(tmp_path, GOOD.replace("claimed_pct: 93", "claimed_pct: 120"), WAN_ROWS, expect=1)
    (row,) = doc["rows"]
    assert row["verdict"] == "does-not-hold" and row["holds"] is False and row["cherry_picked"] is False
    assert doc["findings"][0]["code"] == "claim-not-supported"
    assert doc["findings"][0]["place"] == "line 7, key claims.wan-vs-b200.claimed_pct"


# ---- the generation claim on real v5.1 MI325X results: a cherry-pick illustration -------

def mi325x_server_v51() -> list[dict]:
    ids = ("5.1-0002", "5.1-0003", "5.1-0006", "5.1-0045", "5.1-0067", "5.1-0068", "5.1-0081", "5.1-0085", "5.1-0095")
    rows = published_rows(*ids)
    subject = canonical_row(value=100282.0, model="llama2-70b-99.9", file="v6.0/AMD/v1/results.csv", line=2)
    return [subject] + [r for r in rows if r["scenario"] == "Server"]


def generation(claimed: float, comparator: dict) -> dict:
    claim = claims_ledger.Claim("generation", "ratio", "", {"submitter": "AMD", "accelerator": "MI355X"},
                         comparator, claimed, "ratio", 0.05, 1)
    (row,) = claims.check_claims(RULES, claims_ledger.Ledger("l.yaml", "v6.0", [claim]), frame(mi325x_server_v51())).rows
    return row


def test_generation_against_amds_own_mi325x_and_against_every_mi325x():
    own = generation(3.1, {"submitter": "AMD", "accelerator": "MI325X", "round": "v5.1"})
    # AMD has two v5.1 MI325X systems; only _1 has a Server result (32027.6)
    assert own["comparator"]["system"] == "8xMI325X_2xEPYC_9575F_1" and own["eligible_comparators"] == 1
    assert own["computed"] == pytest.approx(3.131112, abs=1e-6) and own["holds"]
    every = generation(3.1, {"accelerator": "MI325X", "round": "v5.1"})
    assert every["eligible_comparators"] == 8
    assert every["best_comparator"]["submitter"] == "GigaComputing"        # 32139.4 tokens/s
    assert every["computed_vs_best"] == pytest.approx(100282 / 32139.4, abs=1e-6)
    assert every["range_max"] == pytest.approx(100282 / 30339.4, abs=1e-6)  # Vultr
    assert every["holds"] and not every["cherry_picked"]


def test_a_claim_that_holds_only_against_the_weakest_is_cherry_picked():
    row = generation(3.3, {"accelerator": "MI325X", "round": "v5.1"})
    assert row["comparator"]["submitter"] == "Vultr" and row["holds"]
    assert row["computed_vs_best"] == pytest.approx(3.120, abs=1e-3)
    assert row["cherry_picked"] and row["verdict"] == "cherry-picked"


# ---- properties ---------------------------------------------------------------------------

values = st.floats(min_value=1.0, max_value=1e6, allow_nan=False)


def ratio_ledger(claimed: float, tol: float, latency: bool):
    claim = claims_ledger.Claim("p", "ratio", "", {"submitter": "AMD"}, {"accelerator": "B200"}, claimed, "pct", tol, 1)
    return claims_ledger.Ledger("l.yaml", "v6.0", [claim])


def ratio_rows(subject: float, comparators: list[float], latency: bool) -> list[dict]:
    units = dict(model="wan-2.2-t2v-a14b", scenario="SingleStream", units="Latency (s)") if latency else {}
    return [canonical_row(value=subject, **units)] + [
        canonical_row(submitter="NVIDIA", system=f"b200-{i}", accelerator="B200", composition="B200:8",
                      value=v, file="n.csv", line=i, **units) for i, v in enumerate(comparators)]


@given(subject=values, comparators=st.lists(values, min_size=1, max_size=5),
       claimed=st.floats(min_value=1, max_value=300), tol=st.floats(min_value=0, max_value=20),
       latency=st.booleans())
def test_a_claim_that_holds_against_the_best_comparator_is_never_cherry_picked(subject, comparators, claimed,
                                                                               tol, latency):
    (row,) = claims.check_claims(RULES, ratio_ledger(claimed, tol, latency), frame(ratio_rows(subject, comparators,
                                                                                       latency))).rows
    holds_best = within(row["computed_vs_best"] - claimed, tol)
    if holds_best:
        assert not row["cherry_picked"] and row["holds"]
    assert row["cherry_picked"] == (row["holds"] and not holds_best)
    assert row["range_min"] <= row["computed"] <= row["range_max"]
    assert row["computed_vs_best"] == row["range_min"]   # the strongest comparator flatters least


@given(subject=values, comparators=st.lists(values, min_size=1, max_size=4),
       partner=values, cluster=values, claimed=st.floats(min_value=1, max_value=300),
       factor=st.floats(min_value=1e-3, max_value=1e3), latency=st.booleans())
def test_scaling_every_value_by_one_factor_changes_no_claim_verdict(subject, comparators, partner, cluster,
                                                                    claimed, factor, latency):
    rows = ratio_rows(subject, comparators, latency) + [
        canonical_row(submitter="Dell", system="dell", value=partner, file="d.csv", line=2),
        canonical_row(system="87x", composition="MI355X:87", nodes=11, total_accelerators=87, value=cluster * 87)]
    ledger = ratio_ledger(claimed, 1.0, latency)
    ledger.claims += [
        claims_ledger.Claim("s", "scaling", "", {"system": "87x"}, None, claimed, "pct", 1.0, 2),
        claims_ledger.Claim("r", "reproducibility", "", {"submitter": "Dell"}, None, claimed / 10, "pct", 0.0, 3)]
    scaled = [{**r, "value": r["value"] * factor} for r in rows]
    before = claims.check_claims(RULES, ledger, frame(rows)).rows
    after = claims.check_claims(RULES, ledger, frame(scaled)).rows
    for b, a in zip(before, after):
        assert (b["id"], b["verdict"], b["holds"], b["cherry_picked"]) == (
            a["id"], a["verdict"], a["holds"], a["cherry_picked"])


# ---- scaling and reproducibility claims ------------------------------------------------------

def test_scaling_claim_uses_the_scaling_module_and_the_true_count(tmp_path):
    rows = [canonical_row(value=100282.0),
            canonical_row(system="87xMI355X_22xEPYC_9575F", composition="MI355X:87", nodes=11,
                          total_accelerators=87, value=1016380.0),
            canonical_row(system="87xMI355X_22xEPYC_9575F", composition="MI355X:87", nodes=11,
                          total_accelerators=87, value=1042110.0, scenario="Offline")]
    ledger = """
        round: v6.0
        claims:
          - id: server
            kind: scaling
            subject: {submitter: AMD, scenario: Server, nodes: 11}
            claimed_pct: 93
          - id: offline
            kind: scaling
            subject: {submitter: AMD, scenario: Offline, nodes: 11}
            claimed_pct: 93
    """
    doc = claims_json(tmp_path, ledger, rows, expect=0)
    server, offline = doc["rows"]
    assert server["computed"] == pytest.approx(1016380 / (87 * 100282 / 8) * 100, abs=1e-6)
    assert round(server["computed"], 1) == 93.2 and server["holds"]
    assert server["comparator"]["value"] == pytest.approx(87 * 100282 / 8)
    assert "accelerator count differs from the single-node reference: 87 against 8" in server["notes"][1]
    assert offline["verdict"] == "no-reference" and offline["holds"] is None
    assert "missing: MI355X" in offline["notes"]
    assert [f["code"] for f in doc["findings"]] == ["claim-no-reference"]


def test_every_claim_verdict_is_counted_in_the_summary_a_scaling_ones_too(tmp_path):
    cluster = canonical_row(system="16xMI355X", nodes=2, total_accelerators=16, composition="MI355X:16",
                            model="wan-2.2-t2v-a14b", scenario="SingleStream", units="Latency (s)",
                            value=20.0, division="open")
    node = canonical_row(model="wan-2.2-t2v-a14b", scenario="SingleStream", units="Latency (s)",
                         value=27.374, division="open")
    ledger = """
        round: v6.0
        claims:
          - id: latency-scaling
            kind: scaling
            subject: {submitter: AMD, nodes: 2}
            claimed_pct: 93
    """
    doc = claims_json(tmp_path, ledger, [cluster, node], expect=0)
    assert [r["verdict"] for r in doc["rows"]] == ["not-applicable"]
    assert doc["summary"]["claims"] == 1 and doc["summary"]["not-applicable"] == 1


def test_reproducibility_claim_on_real_v51_mi300x_results():
    # AMD 5.1-0001 against Dell 5.1-0027 (XE9680): Interactive 8455.14 against 8840.42 is -4.36 %
    rows = published_rows("5.1-0001", "5.1-0027")

    def check(band):
        claim = claims_ledger.Claim("partners", "reproducibility", "", {"accelerator": "MI300X"}, None, band, "pct", 0, 1)
        (row,) = claims.check_claims(RULES, claims_ledger.Ledger("l.yaml", "v5.1", [claim]), frame(rows)).rows
        return row

    row = check(4.0)
    assert (row["compared"], row["within"], row["holds"]) == (3, 2, False)
    (outside,) = row["outside"]
    assert outside["scenario"] == "Interactive"
    assert outside["deviation_pct"] == pytest.approx((8455.14 - 8840.42) / 8840.42 * 100, abs=1e-6)
    assert row["computed"] == pytest.approx(abs(outside["deviation_pct"]))
    assert row["share_within_pct"] == pytest.approx(200 / 3)
    assert check(4.5)["holds"] is True


def test_claims_of_one_band_share_one_compare_and_judge_partners_as_comparing_them_alone():
    """The reproducibility claims of one band take their partners' rows from
    one compare of the whole table: the rows, verdicts and findings comparing
    each claim's partners alone with the reference rows gives."""
    import pandas as pd

    from pipeline.analyses import compare

    results = frame(published_rows("5.1-0001", "5.1-0027", "5.1-0002"))
    ledger = claims_ledger.Ledger("l.yaml", "v5.1", [
        claims_ledger.Claim("p4", "reproducibility", "", {"accelerator": "MI300X"}, None, 4.0, "pct", 0, 1),
        claims_ledger.Claim("dell4", "reproducibility", "", {"submitter": "Dell"}, None, 4.0, "pct", 0, 2),
        claims_ledger.Claim("p45", "reproducibility", "", {"accelerator": "MI300X"}, None, 4.5, "pct", 0, 3),
        claims_ledger.Claim("none", "reproducibility", "", {"accelerator": "MI355X"}, None, 4.0, "pct", 0, 4)])
    bands, real = [], claims.compare
    try:
        claims.compare = lambda *a, **k: bands.append(a[2]) or real(*a, **k)
        report = claims.check_claims(RULES, ledger, results)
    finally:
        claims.compare = real
    assert bands == [4.0, 4.5]
    refs = results[results["submitter"] == "AMD"]
    for claim, row in zip(ledger.claims, report.rows):
        mine = results[claims.Results(RULES, results).mask({"round": "v5.1", **claim.subject})
                       & (results["submitter"] != "AMD").to_numpy()]
        if mine.empty:
            assert row["verdict"] == "unmatched"
            continue
        alone = compare.compare(RULES, pd.concat([mine, refs], ignore_index=True), claim.claimed)
        verdicts = [r["verdict"] for r in alone.rows]
        assert row["compared"] == sum(v in ("agree", "deviates") for v in verdicts), claim.id
        assert row["outside"] == [{k: r[k] for k in row["outside"][0]} for r in alone.rows
                                  if r["verdict"] == "deviates"], claim.id
    assert report.rows[0]["compared"] == 3


# ---- the shipped ledger against the shipped submissions ---------------------------------------

@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shipped")
    table_path = folder / "results.csv"
    run("ingest", REPO / "submissions", "--root", REPO / "submissions", "-o", table_path, expect=0)
    out = folder / "claims.json"
    result = run("claims", REPO / "claims.yaml", table_path, "--format", "json", "-o", out, "--params",
                 REPO / "params.yaml", expect=1)
    doc = json.loads(result.stdout)
    assert json.loads(out.read_text()) == doc
    return {r["id"]: r for r in doc["rows"]}, doc


def test_shipped_ledger_has_no_ledger_errors(shipped):
    _, doc = shipped
    assert {f["code"] for f in doc["findings"]} == {"claim-no-reference", "claim-not-supported",
                                                    "claim-cherry-picked"}


# Each figure computed here by hand from the official v6.0 table
# (published/v6.0/summary.csv) and the v5.1 shipped results, independently of
# the pipeline. (claim, computed %, holds, cherry-picked)
B200_WAN_SS, B300_WAN_SS = 25.458383354000002, 23.778912625
B200_WAN_OFF, B300_WAN_OFF = 0.0464402, 0.0585234
AMD_WAN_SS = 27.384519297


@pytest.mark.parametrize(("cid", "computed", "holds", "cherry"), [
    ("generation-vs-amd-mi325x", 100282 / 32027.6, True, False),
    ("generation-vs-any-mi325x", 100282 / 32139.4, True, False),
    # Llama 2 70B (-99), one node: B200 results of HPE and Supermicro, B300 of NVIDIA and others
    ("llama2-offline-vs-b200", 103480 / 103954 * 100, True, False),
    ("llama2-server-vs-b200", 100282 / 103635 * 100, True, False),
    ("llama2-interactive-vs-b200", 73608.2 / 61644.7 * 100, True, False),
    ("llama2-server-vs-b300", 100282 / 107318 * 100, True, True),
    ("llama2-offline-vs-b300", 103480 / 112954 * 100, True, True),
    # GPT-OSS-120B: the claimed ratios hold only against the weaker B200/B300 results
    ("gpt-oss-offline-vs-b200", 95004 / 85921.2 * 100, True, True),
    ("gpt-oss-server-vs-b200", 82136.1 / 71588.1 * 100, True, True),
    ("gpt-oss-offline-vs-b300", 95004 / 103961 * 100, True, True),
    ("gpt-oss-server-vs-b300", 82136.1 / 100328 * 100, True, True),
    # Wan-2.2: latency, so comparator / subject
    ("wan-singlestream-vs-b200-official", B200_WAN_SS / AMD_WAN_SS * 100, True, False),
    ("wan-singlestream-vs-b300-official", B300_WAN_SS / AMD_WAN_SS * 100, True, True),
    ("wan-singlestream-vs-b200-post-deadline", B200_WAN_SS / 23.5726 * 100, True, False),
    ("wan-singlestream-vs-b300-post-deadline", B300_WAN_SS / 23.5726 * 100, True, True),
    ("wan-offline-vs-b200-post-deadline", 0.0515486 / B200_WAN_OFF * 100, True, False),
    ("wan-offline-vs-b300-post-deadline", 0.0515486 / B300_WAN_OFF * 100, True, False),
    # multi-node against AMD's official single-node results, with the true counts
    ("cluster-llama2-server-efficiency", 1016380 / (87 * 100282 / 8) * 100, True, False),
    ("cluster-llama2-offline-efficiency", 1042110 / (87 * 103480 / 8) * 100, True, False),
    ("cluster-llama2-interactive-efficiency", 785522 / (87 * 73608.2 / 8) * 100, True, False),
    ("cluster-gpt-oss-offline-efficiency", 1031070 / (94 * 95004 / 8) * 100, True, False),
    ("cluster-gpt-oss-server-efficiency", 900054 / (94 * 82136.1 / 8) * 100, True, False),
])
def test_shipped_claims_recomputed(shipped, cid, computed, holds, cherry):
    rows, _ = shipped
    assert rows[cid]["computed"] == pytest.approx(computed, abs=1e-5)
    assert rows[cid]["holds"] is holds and rows[cid]["cherry_picked"] is cherry


def test_shipped_gpt_oss_claims_against_the_strongest_comparator(shipped):
    rows, _ = shipped
    assert rows["gpt-oss-server-vs-b200"]["computed_vs_best"] == pytest.approx(82136.1 / 87444.2 * 100,
                                                                               abs=1e-5)
    assert rows["gpt-oss-offline-vs-b300"]["computed_vs_best"] == pytest.approx(95004 / 111496 * 100,
                                                                                abs=1e-5)


def test_shipped_partner_claims_on_v60_do_not_hold(shipped):
    """MI355X partners within ±4% of AMD: not every one (official v6.0 table)."""
    rows, _ = shipped
    llama = rows["partners-mi355x-llama2-v6.0"]
    assert llama["holds"] is False
    assert llama["computed"] == pytest.approx(abs((93272.4 - 100282) / 100282 * 100), abs=1e-4)
    assert {(o["submitter"], o["scenario"]) for o in llama["outside"]} == {
        ("Dell", "Interactive"), ("Dell_MangoBoost", "Offline"), ("Dell_MangoBoost", "Server"),
        ("HPE", "Server")}
    gpt = rows["partners-mi355x-gpt-oss-v6.0"]
    assert {(o["submitter"], o["scenario"]) for o in gpt["outside"]} == {
        ("Dell", "Server"), ("HPE", "Server"), ("ORACLE", "Server")}
    assert gpt["computed"] == pytest.approx(abs((75354.9 - 82136.1) / 82136.1 * 100), abs=1e-4)
    assert rows["partners-mi350x-v6.0"]["verdict"] == "no-reference"


def test_shipped_post_deadline_claims_are_labelled_unverified(shipped):
    rows, _ = shipped
    for cid, row in rows.items():
        late = cid.endswith("post-deadline")
        assert row["verified"] is (not late), cid
        assert (row["label"] == "unverified") is late, cid
        assert (row["disclaimer"] == COMPARISON_DISCLAIMER) is late, cid


def test_shipped_partner_claims_on_v51_do_not_hold_and_list_who_is_outside(shipped):
    rows, _ = shipped
    mi325x = rows["partners-mi325x-v5.1"]
    assert mi325x["holds"] is False
    assert {(o["submitter"], o["scenario"]) for o in mi325x["outside"]} >= {("ASUSTeK", "Interactive")}
    assert mi325x["computed"] == pytest.approx(abs((15566.2 - 18407.2) / 18407.2 * 100), abs=1e-4)
    mi300x = rows["partners-mi300x-v5.1"]
    assert [(o["submitter"], o["scenario"]) for o in mi300x["outside"]] == [("Dell", "Interactive")]


def test_claims_text_output(shipped, tmp_path):
    table_path = tmp_path / "results.csv"
    run("ingest", REPO / "submissions", "--root", REPO / "submissions", "-o", table_path, expect=0)
    result = run("claims", REPO / "claims.yaml", table_path, expect=1)
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["verdict", "claimed"])
    assert lines[header].split() == ["verdict", "claimed", "computed", "id", "kind", "label"]
    assert any(line.split()[:4] == ["holds", "3.1×", "3.13×", "generation-vs-amd-mi325x"]   # as in the report
               for line in lines[header:])
    assert "unverified: Result not verified by MLCommons Association." in result.stdout
    assert run("claims", REPO / "claims.yaml", table_path, "--exit-zero", expect=0)


def test_reproducibility_uses_the_reference_vendor_from_params(tmp_path):
    """compare.reference_vendor decides which results are partner results, in
    the library (passed in) and in the CLI (read from --params at the edge)."""
    rows = published_rows("5.1-0001", "5.1-0027")
    claim = claims_ledger.Claim("partners", "reproducibility", "", {"accelerator": "MI300X"}, None, 4.0, "pct", 0, 1)
    ledger = claims_ledger.Ledger("l.yaml", "v5.1", [claim])
    (amd,) = claims.check_claims(RULES, ledger, frame(rows), "AMD", "AMD").rows
    (other,) = claims.check_claims(RULES, ledger, frame(rows), "AMD", "NVIDIA").rows
    assert amd["compared"] == 3 and other["verdict"] == "no-reference"
    assert "not NVIDIA's" in " ".join(other["notes"])

    text = """
        round: v5.1
        claims:
          - id: partners
            text: partners reproduce AMD's MI300X figures
            kind: reproducibility
            subject: {accelerator: MI300X}
            claimed_pct: 4
    """
    results = write_canonical(tmp_path / "results.csv", rows)
    params = tmp_path / "params.yaml"
    for vendor, verdict in (("AMD", "does-not-hold"), ("NVIDIA", "no-reference")):
        params.write_text(f"compare:\n  reference_vendor: {vendor}\n", encoding="utf-8")
        doc = run_json("claims", ledger_file(tmp_path, text), results, "--params", params)
        assert [r["verdict"] for r in doc["rows"]] == [verdict], doc["rows"]


# ---- claims on the data they were made on --------------------------------------------------

LATE_RESULTS = """\
submitter,system,system_name,accelerator,accelerators_per_node,nodes,model,scenario,value,units,division,availability
Dell,8xMI355X_2xEPYC_9655_late,PowerEdge XE9785L (8x MI355X),AMD Instinct MI355X 288GB HBM3e,8,1,llama2-70b-99.9,Server,80000,Tokens/s,closed,available
Dell,XE9780L-B300-SXM-270GBx8_late,PowerEdge XE9780L (8x B300-SXM-270GB),NVIDIA B300-SXM-270GB,8,1,llama2-70b-99,Offline,130000,Tokens/s,closed,available
"""


def _with_a_post_deadline_partner_version(root):
    """The shipped submissions and a post-deadline Dell version beside Dell's
    verified one: an MI355X partner result 20% under AMD's, and a faster B300."""
    import hashlib
    import shutil

    shutil.copytree(REPO / "submissions", root)
    late = root / "v6.0" / "Dell" / "v2"
    late.mkdir()
    (late / "results.csv").write_text(LATE_RESULTS, encoding="utf-8")
    digest = hashlib.sha256((late / "results.csv").read_bytes()).hexdigest()
    (late / "manifest.yaml").write_text(
        "submitter: Dell\nround: v6.0\nversion: 2\nsubmitted_at: '2026-03-25T12:00:00+00:00'\n"
        "status: post-deadline\nfiles:\n- path: results.csv\n  format: results-csv\n"
        f"  sha256: {digest}\nsupersedes: 1\n", encoding="utf-8")
    return root


def test_a_post_deadline_partner_result_changes_no_verified_claim_and_appears_beside_it(tmp_path, shipped):
    """Adding a post-deadline partner result to the shipped data: every
    verified claim keeps its verdict, counts and figures byte for byte; the
    claims it bears on show the figure including it, apart and labelled."""
    root = _with_a_post_deadline_partner_version(tmp_path / "submissions")
    table_path = tmp_path / "results.csv"
    run("ingest", root, "--root", root, "-o", table_path, expect=0)
    out = tmp_path / "claims.json"
    run("claims", REPO / "claims.yaml", table_path, "-o", out, "--params", REPO / "params.yaml", expect=1)
    after = {r["id"]: r for r in json.loads(out.read_text())["rows"]}
    before, _ = shipped
    assert sorted(after) == sorted(before)

    def own(row):   # the claim's own verdict, counts and figures: everything but the figure beside it
        return json.dumps({k: v for k, v in row.items() if k != "including_post_deadline"}, sort_keys=True)

    for cid, row in before.items():
        assert own(after[cid]) == own(row), cid
    late = {cid: r["including_post_deadline"] for cid, r in after.items() if r["including_post_deadline"]}
    assert sorted(late) == ["llama2-offline-vs-b300", "partners-mi355x-llama2-v6.0"]

    partners, verified = late["partners-mi355x-llama2-v6.0"], after["partners-mi355x-llama2-v6.0"]
    assert (partners["compared"], partners["within"]) == (verified["compared"] + 1, verified["within"])
    assert partners["label"] == "including post-deadline (unverified)"
    assert partners["footnote"] == UNVERIFIED_FOOTNOTE and partners["disclaimer"] == COMPARISON_DISCLAIMER
    assert [(r["submitter"], r["value"]) for r in partners["post_deadline_results"]] == [("Dell", 80000.0)]
    assert partners["computed"] == pytest.approx(abs((80000 - 100282) / 100282 * 100), abs=1e-4)

    b300 = late["llama2-offline-vs-b300"]
    assert b300["best_comparator"]["value"] == 130000.0 and b300["best_comparator"]["status"] == "post-deadline"
    assert b300["computed_vs_best"] == pytest.approx(103480 / 130000 * 100, abs=1e-5)
    assert after["llama2-offline-vs-b300"]["verified"] is True
    assert all(r["including_post_deadline"] is None for r in before.values())

    html = claims_table("claims-v6-0", [after["partners-mi355x-llama2-v6.0"]])   # the report shows it beside the claim
    assert (f"including post-deadline (unverified)<sup>1</sup>: max |deviation| {partners['computed']:.2f}%, "
            f"{partners['within']} of {partners['compared']} partner results within, does not hold") in html
    assert UNVERIFIED_FOOTNOTE in html


def test_a_claim_about_post_deadline_results_stays_on_every_result_and_unverified(tmp_path):
    ledger = GOOD.replace("status: verified", "status: post-deadline").replace("claimed_pct: 93", "claimed_pct: 108")
    late_b200 = wan("8xB200_late", 22.0, submitter="NVIDIA", accelerator="B200", composition="B200:8",
                    status="post-deadline")
    (row,) = claims_json(tmp_path, ledger, WAN_ROWS + [late_b200], expect=0)["rows"]
    assert row["eligible_comparators"] == 3 and row["label"] == "unverified"
    assert row["including_post_deadline"] is None


def claims_table(ident: str, claims: list[dict]) -> str:
    """The report's claims table of CLAIMS alone (HTML)."""
    from pipeline.output.report.claims import claims_view
    from pipeline.output.report.html import macro

    return str(macro("round.html.j2", "claims_table")(ident, claims_view(claims)))


def test_the_report_shows_the_post_deadline_figure_beside_the_claim_labelled():
    claim = {"id": "partners", "kind": "reproducibility", "measure": "max_abs_deviation_pct", "claimed": 4.0,
             "computed": 6.99, "verdict": "does-not-hold", "label": "verified", "verified": True,
             "compared": 8, "within": 5,
             "including_post_deadline": {"label": "including post-deadline (unverified)", "computed": 20.22,
                                         "verdict": "does-not-hold", "compared": 9, "within": 5}}
    html = claims_table("claims-v6-0", [claim])
    assert "max |deviation| 6.99%" in html
    assert ("including post-deadline (unverified)<sup>1</sup>: max |deviation| 20.22%, "
            "5 of 9 partner results within, does not hold") in html
    assert UNVERIFIED_FOOTNOTE in html and COMPARISON_DISCLAIMER in html
