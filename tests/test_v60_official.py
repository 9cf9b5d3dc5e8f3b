"""The official v6.0 results (published/v6.0/summary.csv, the MLCommons
checker's summary of the round): read whole, compared with AMD's references
by vendor, and shipped as the v6.0 submissions."""

from __future__ import annotations

import csv
import io
import math

import pandas as pd
import pytest

from conftest import RULES, REPO, read_csv, run_json, write_results_csv, results_row

from pipeline.analyses import compare as compare_mod, reference
from pipeline.ingest import submissions as ingest_mod
from pipeline.core.formulas import deviation_pct

TABLE = REPO / "published" / "v6.0" / "summary.csv"


def _source_rows() -> dict[int, dict]:
    """line -> the checker's row, read with the csv module (independent of the pipeline)."""
    text = TABLE.read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    return {i: row for i, row in enumerate(reader, start=2)}


@pytest.fixture(scope="module")
def official():
    report = ingest_mod.ingest(RULES, [TABLE], status="verified")
    return report


def test_the_official_table_ingests_with_no_rejected_row(official):
    source = _source_rows()
    assert len(source) == 520
    outcomes = pd.Series([d.outcome for d in official.dispositions]).value_counts().to_dict()
    assert outcomes == {"set-aside": 33}    # the CPU-only rows (accelerator N/A), none rejected
    assert len(official.table) + 33 == 520
    assert not [f for f in official.findings if f.severity == "error"]
    cpu = {int(d.source.rsplit(":", 1)[1]) for d in official.dispositions}
    assert all(source[line]["accelerator_model_name"] == "N/A" for line in cpu)


def test_every_value_equals_the_source(official):
    source = _source_rows()
    for row in official.table.to_dict("records"):
        src = source[int(row["source"].rsplit(":", 1)[1])]
        assert row["value"] == float(src["Result"])
        assert row["submitter"] == src["Organization"] and row["system"] == src["Platform"]
        assert row["units"] == src["Units"] and row["division"] == src["Division"]
        assert row["model"] == src["MlperfModel"]
        assert row["used_model"] in (src["Model"], src["MlperfModel"])   # an alias is the benchmark
        assert row["nodes"] == int(src["number_of_nodes"])


def test_unregistered_models_keep_their_rows_with_the_tables_units(official):
    t = official.table
    warned = {f.found for f in official.findings if f.code == "unregistered-name"}
    for name in warned:   # each a model the registry lacks today, kept with the table's units
        rows = t[t["model"] == name]
        assert len(rows) > 0, name
    assert all(f.severity == "warning" for f in official.findings if f.code == "unregistered-name")


def test_the_87_and_94_gpu_clusters_keep_their_true_counts(official):
    t = official.table
    c87 = t[t["system"] == "87xMI355X_22xEPYC_9575F"]
    c94 = t[t["system"] == "94xMI355X_24xEPYC_9575F"]
    assert len(c87) == 6 and set(c87["total_accelerators"]) == {87} and set(c87["nodes"]) == {11}
    assert len(c94) == 2 and set(c94["total_accelerators"]) == {94} and set(c94["nodes"]) == {12}


def test_variants_are_kept_next_to_the_family(official):
    t = official.table
    h200 = t[t["accelerator"] == "H200"]
    assert {"H200 NVL 141GB", "H200 SXM 141GB"} <= set(h200["accelerator_variant"])
    mixed = t[t["submitter"] == "Dell_MangoBoost"]
    assert "MI300X+MI325X+MI355X" in set(mixed["accelerator"])
    assert "MI300X 192GB+MI325X 256GB+MI355X 288GB" in set(mixed["accelerator_variant"])


@pytest.fixture(scope="module")
def agreement(official):
    return compare_mod.compare(RULES, official.table, 4.0, "AMD", "AMD").table


def _verdicts(agreement, submitter, model="llama2-70b-99"):
    rows = agreement[(agreement["submitter"] == submitter) & (agreement["model"] == model)]
    return {(r["system"], r["scenario"]): (r["verdict"], r["deviation_pct"]) for _, r in rows.iterrows()}


def test_partner_verdicts_against_amds_references(agreement):
    amd = {"Offline": 103480.0, "Server": 100282.0, "Interactive": 73608.2}
    # computed here from the checker's figures, independently of compare.py
    expected = {
        ("Supermicro", "8xMI355X_2xEPYC-9575F"): {"Offline": 100754.0, "Server": 97587.0, "Interactive": 71295.5},
        ("HPE", "HPE_ProLiant_XD685_MI355X_288GBx8"): {"Offline": 100019.0, "Server": 95544.3,
                                                       "Interactive": 70954.1},
        ("Dell_MangoBoost", "8xMI355X_2xEPYC_9965"): {"Offline": 97535.1, "Server": 93272.4},
    }
    for (submitter, system), values in expected.items():
        got = _verdicts(agreement, submitter)
        for scenario, value in values.items():
            dev = (value - amd[scenario]) / amd[scenario] * 100
            verdict, deviation = got[(system, scenario)]
            assert deviation == pytest.approx(dev, abs=1e-6)
            assert verdict == ("agree" if abs(dev) <= 4 else "deviates"), (submitter, scenario)
    hpe_gpt = _verdicts(agreement, "HPE", "gpt-oss-120b")[("HPE_ProLiant_XD685_MI355X_288GBx8", "Server")]
    assert hpe_gpt == ("deviates", pytest.approx((75354.9 - 82136.1) / 82136.1 * 100, abs=1e-6))


def test_partner_rows_without_a_same_round_reference_are_no_reference(agreement):
    no_ref = agreement[agreement["verdict"] == "no-reference"]
    # AMD published no MI350X, MI300X or MI325X result in v6.0, nor the mixed cluster
    assert set(no_ref["accelerator"]) == {"MI350X", "MI300X", "MI325X", "MI300X+MI325X+MI355X"}
    assert {"Cisco", "MiTAC", "Supermicro_RedHat", "Dell", "MangoBoost", "Dell_MangoBoost"} == \
        set(no_ref["submitter"])
    assert not (agreement["reason"].astype(str).str.contains("AMD has no result")).any()


def test_rows_on_other_vendors_parts_are_excluded_with_that_reason(agreement):
    nvidia = agreement[agreement["accelerator"].isin(["B200", "B300", "H200", "GB200"])]
    assert len(nvidia) > 100 and set(nvidia["verdict"]) == {"excluded"}
    assert set(nvidia[nvidia["accelerator"] == "B200"]["reason"]) == {
        "not a partner result: B200 is NVIDIA's, not AMD's"}
    intel = agreement[agreement["accelerator"].str.startswith("Arc-Pro")]
    assert len(intel) > 0 and all("Intel's" in r for r in intel["reason"])
    capped = agreement[agreement["system"].str.contains("Power_Cap")]
    assert set(capped["verdict"]) == {"excluded"}


def test_the_reference_vendor_is_a_parameter(official):
    t = official.table
    rep = compare_mod.compare(RULES, t, 4.0, "NVIDIA", "NVIDIA")
    verdicts = rep.table[rep.table["submitter"] == "Supermicro"]
    assert set(verdicts[verdicts["accelerator"] == "MI355X"]["verdict"]) == {"excluded"}
    assert rep.summary["reference_vendor"] == "NVIDIA"


def test_an_unregistered_accelerator_is_excluded_as_vendor_unknown(tmp_path):
    text = TABLE.read_text(encoding="utf-8").replace("AMD Instinct MI350X 288GB HBM3e", "Acme Z9 64GB")
    path = tmp_path / "published" / "v6.0" / "summary.csv"   # a published table, by where it lives
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    report = ingest_mod.ingest(RULES, [path], status="verified")
    [warning] = [f for f in report.findings if f.code == "unregistered-name"]
    assert warning.found == "Acme Z9 64GB" and warning.severity == "warning"
    assert "vendor unknown" in warning.message and "- {name: Acme-Z9, vendor: <vendor>" in warning.expected
    rows = compare_mod.compare(RULES, report.table).table
    acme = rows[rows["accelerator"] == "Acme-Z9"]
    assert len(acme) == 14 and set(acme["verdict"]) == {"excluded"}
    assert set(acme["accelerator_variant"]) == {"Acme-Z9 64GB"}
    assert all("vendor unknown" in r for r in acme["reason"])


def test_a_partners_own_file_with_an_unknown_name_is_still_an_error(tmp_path):
    path = write_results_csv(tmp_path / "r.csv", [results_row(model="acme-llm-1", units="Samples/s"),
                                                  results_row(accelerator="Acme Z9")])
    doc = run_json("ingest", path, "--status", "verified", "--round", "v6.0", "-o", tmp_path / "o.csv",
                   expect=1)
    assert {f["code"] for f in doc["findings"]} == {"unknown-model", "unknown-accelerator"}
    assert doc["summary"]["accepted"] == 0 and doc["summary"]["rejected"] == 2


def test_a_v61_row_in_the_checker_layout_is_read(tmp_path):
    lines = TABLE.read_text(encoding="utf-8").splitlines()
    header, amd = lines[0], lines[12]    # AMD 8xMI355X llama2-70b-99 Offline 103480
    row = amd.replace('"v6.0"', '"v6.1"').replace('"llama2-70b-99","llama2-70b-99"',
                                                  '"llama2-70b-99.9","llama2-70b-99.9"')
    path = tmp_path / "summary.csv"
    path.write_text(f"{header}\n{row}\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    doc = run_json("ingest", path, "--status", "verified", "-o", out, expect=0)
    [got] = read_csv(out)
    assert (got["round"], got["model"], got["value"], got["units"]) == ("v6.1", "llama2-70b-99.9",
                                                                        "103480.0", "Tokens/s")
    # AMD's row states 8 host processors per node on a 2xEPYC system: noted, the row kept
    assert [f["code"] for f in doc["findings"]] == ["description-contradicts-system-id"]


# ---- the shipped v6.0 submissions are the official results -------------------------------

def _shipped_lines() -> dict[str, list[str]]:
    out = {}
    for path in sorted((REPO / "submissions" / "v6.0").glob("*/v*/summary.csv")):
        out[path.parent.parent.name] = path.read_text(encoding="utf-8").splitlines()
    return out


def test_the_shipped_v60_submissions_are_lines_of_the_official_table(official):
    published = TABLE.read_text(encoding="utf-8").splitlines()
    shipped = _shipped_lines()
    lines = set()
    for submitter, text in shipped.items():
        assert text[0] == published[0], submitter   # the table's own header
        for line in text[1:]:
            assert line in published, (submitter, line[:80])
            assert line.startswith(f'"{submitter}",'), submitter
            lines.add(published.index(line) + 1)
    t = official.table.assign(line=official.table["source"].str.rsplit(":", n=1).str[1].astype(int))
    on_amd = t["accelerator"].map(lambda a: reference.vendors_of(RULES, a) == {"AMD"})
    comparators = t["accelerator"].isin(["B200", "B300"]) & t["model"].isin(
        ["llama2-70b-99", "llama2-70b-99.9", "gpt-oss-120b", "wan-2.2-t2v-a14b"])
    assert set(t[t["submitter"] == "AMD"]["line"]) <= lines   # AMD's references
    assert set(t[on_amd]["line"]) <= lines                     # every partner on Instinct GPUs
    assert set(t[comparators]["line"]) <= lines                # the B200/B300 comparators
    assert lines == set(t[on_amd | comparators | (t["submitter"] == "AMD")]["line"])


def test_the_shipped_v60_manifests_say_where_the_figures_come_from():
    import yaml

    for manifest in sorted((REPO / "submissions" / "v6.0").glob("*/v*/manifest.yaml")):
        doc = yaml.safe_load(manifest.read_text(encoding="utf-8"))
        if doc["status"] == "verified":
            assert "mlcommons/inference" in doc["notes"] and "Apache-2.0" in doc["notes"], manifest
            assert "test_summary_csv_matches_snapshot.csv" in doc["notes"], manifest
        else:
            assert doc["submitter"] == "AMD" and "derived" in doc["notes"], manifest
            assert "25.458383354 s / 1.08" in doc["notes"]


def test_the_post_deadline_wan_figures_follow_the_stated_ratios():
    [path] = (REPO / "submissions" / "v6.0" / "AMD").glob("v*/results.csv")
    rows = {r["scenario"]: float(r["value"]) for r in read_csv(path)}
    assert rows["SingleStream"] == pytest.approx(25.458383354 / 1.08, rel=1e-5)
    assert rows["Offline"] == pytest.approx(0.0464402 * 1.11, rel=1e-5)
    assert math.isclose(deviation_pct(rows["Offline"], 0.0464402), 11.0, abs_tol=1e-3)
