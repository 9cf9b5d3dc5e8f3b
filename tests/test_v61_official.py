"""The official v6.1 results (published/v6.1/summary.csv, the MLCommons
checker's summary of the round): read whole, with the parts and spellings
the round brought, compared with AMD's references by vendor, and shipped as
the v6.1 submissions the way v6.0's were (bin/ship-published)."""

from __future__ import annotations

import csv
import hashlib
import io
import re
import shutil
import subprocess
import sys
import textwrap
from datetime import datetime

import pandas as pd
import pytest
import yaml

from conftest import REPO, RULES, run, run_json

from pipeline.analyses import compare as compare_mod, crosscheck, reference
from pipeline.ingest import submissions as ingest_mod

TABLE = REPO / "published" / "v6.1" / "summary.csv"
SHIPPED = REPO / "submissions" / "v6.1"
SHA256 = "6c23e1cdf4afab25d824a203cc50ef3a7c11dea674d4cbb6722eb91090a01892"
MIXED_VENDORS = "NVIDIA H200-SXM-141GB + AMD Instinct MI350X 288GB HBM3e"


def _source_rows() -> dict[int, dict]:
    """line -> the checker's row, read with the csv module (independent of the pipeline)."""
    reader = csv.DictReader(io.StringIO(TABLE.read_text(encoding="utf-8"), newline=""))
    return {i: row for i, row in enumerate(reader, start=2)}


def _line(source: str) -> int:
    return int(source.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def official():
    return ingest_mod.ingest(RULES, [TABLE], status="verified")


def test_the_table_is_the_one_mlcommons_published():
    assert hashlib.sha256(TABLE.read_bytes()).hexdigest() == SHA256
    assert SHA256 in (REPO / "published" / "PROVENANCE.md").read_text(encoding="utf-8")


def test_the_official_table_ingests_with_no_rejected_row(official):
    source = _source_rows()
    assert len(source) == 492
    outcomes = pd.Series([d.outcome for d in official.dispositions]).value_counts().to_dict()
    assert outcomes == {"set-aside": 33}    # the CPU-only rows (accelerator N/A), none rejected
    assert {source[_line(d.source)]["accelerator_model_name"] for d in official.dispositions} == {"N/A"}
    assert len(official.table) + 33 == 492
    assert not [f for f in official.findings if f.severity == "error"]


def test_the_command_a_maintainer_types_reads_the_table_as_verified(tmp_path):
    """`mlrepro ingest published/v6.1/summary.csv`: a table in published/ needs no --status."""
    doc = run_json("ingest", TABLE, "-o", tmp_path / "out.csv", expect=0)
    summary = doc["summary"]
    assert (summary["accepted"], summary["rejected"], summary["set_aside"]) == (459, 0, 33)
    assert summary["verified"] == 459 and summary["errors"] == 0
    copy = tmp_path / "elsewhere" / "summary.csv"     # the same bytes outside published/: a partner's file
    copy.parent.mkdir()
    copy.write_bytes(TABLE.read_bytes())
    refused = run("ingest", copy, "-o", tmp_path / "out2.csv", expect=2)
    assert "a raw file needs --status" in refused.stderr and not (tmp_path / "out2.csv").exists()


def test_every_value_equals_the_source(official):
    source = _source_rows()
    for row in official.table.to_dict("records"):
        src = source[_line(row["source"])]
        assert row["value"] == float(src["Result"])
        assert row["submitter"] == src["Organization"] and row["system"] == src["Platform"]
        assert row["units"] == src["Units"] and row["nodes"] == int(src["number_of_nodes"])
        assert row["round"] == "v6.1" and row["model"] in RULES.round_models("v6.1")
        # the category words of the model columns (VLM, text_to_video, agentic edge) are never the id
        assert row["model"] in (src["Model"], src["MlperfModel"]) or RULES.is_category(src["MlperfModel"])


def test_the_parts_new_in_v61_are_registered(official):
    t = official.table
    assert not [f for f in official.findings if f.code == "unregistered-name"]
    parts = {"MI350P": ("AMD", 12), "Radeon-8060S": ("AMD", 1), "VR200": ("NVIDIA", 8),
             "Arc-Pro-B70": ("Intel", 19)}
    for name, (vendor, count) in parts.items():
        assert (t["accelerator"] == name).sum() == count, name
        assert reference.vendors_of(RULES, name) == {vendor}


def test_the_only_warning_is_the_mixed_vendor_cluster_without_counts(official):
    # beside it, AMD's own systems whose stated host count contradicts their id (8x..._2xEPYC_...
    # with host_processors_per_node 8), a warning of their own, asserted apart below
    [warning] = [f for f in official.findings if f.code != "description-contradicts-system-id"]
    assert (warning.code, warning.severity, warning.found) == ("composition-assumed", "warning", MIXED_VENDORS)
    assert "(and 7 more rows)" in warning.message


def test_the_x2x8_cluster_is_two_nodes_of_each_type(official):
    t = official.table
    mixed = t[t["system"] == "2x8xMI355X_2x8xMI300X"]
    assert len(mixed) == 2 and set(mixed["composition"]) == {"MI300X:16,MI355X:16"}
    assert set(mixed["total_accelerators"]) == {32} and set(mixed["nodes"]) == {4}


def test_the_nine_node_reference_cluster_keeps_its_count(official):
    t = official.table
    cluster = t[t["system"] == "9x8xMI355X_2xEPYC_9575F"]
    assert len(cluster) == 2 and set(cluster["total_accelerators"]) == {72} and set(cluster["nodes"]) == {9}


@pytest.fixture(scope="module")
def agreement(official):
    return compare_mod.compare(RULES, official.table, 4.0, "AMD", "AMD").table


def test_partner_verdicts_against_amds_references(agreement):
    partners = agreement[agreement["verdict"] != "excluded"]
    assert partners["verdict"].astype(str).value_counts().to_dict() == {"no-reference": 47, "agree": 29, "deviates": 4}
    # Dell_MangoBoost XE9785 gpt-oss-120b Offline against AMD's 8xMI355X_2xEPYC_9575F 121818,
    # computed here from the checker's figures
    [row] = agreement[(agreement["system"] == "XE9785") & (agreement["scenario"] == "Offline")].to_dict("records")
    assert row["deviation_pct"] == pytest.approx((115294.0 - 121818.0) / 121818.0 * 100, abs=1e-6)
    assert row["verdict"] == "deviates"
    # AMD published nothing on MI350P or Radeon 8060S in v6.1
    no_ref = agreement[agreement["verdict"] == "no-reference"]
    assert {"MI350P", "Radeon-8060S"} <= set(no_ref["accelerator"])


def test_the_mixed_vendor_cluster_is_excluded_with_its_reason(agreement):
    mixed = agreement[agreement["accelerator"] == "H200+MI350X"]
    assert len(mixed) == 8 and set(mixed["verdict"]) == {"excluded"}
    assert set(mixed["reason"]) == {"mixed vendors: H200+MI350X combines AMD and NVIDIA parts, not a AMD system"}


# ---- the shipped v6.1 submissions are the official results -------------------------------

def test_the_shipped_v61_submissions_are_lines_of_the_official_table(official):
    published = TABLE.read_text(encoding="utf-8").splitlines()
    lines = set()
    for path in sorted(SHIPPED.glob("*/v*/summary.csv")):
        submitter, text = path.parent.parent.name, path.read_text(encoding="utf-8").splitlines()
        assert text[0] == published[0], submitter   # the table's own header
        for line in text[1:]:
            assert line in published and line.startswith(f'"{submitter}",'), (submitter, line[:80])
            lines.add(published.index(line) + 1)
    t = official.table.assign(line=official.table["source"].map(_line))
    on_amd = t["accelerator"].map(lambda a: reference.on_vendor(RULES, a, "AMD"))
    assert lines == set(t[on_amd | (t["submitter"] == "AMD")]["line"])
    assert len(lines) == 97


def test_the_shipped_v61_versions_are_attested_and_verified():
    attested = yaml.safe_load((REPO / "schemas" / "attested.yaml").read_text(encoding="utf-8"))["versions"]
    deadline = str(RULES.load_yaml("rounds.yaml")["rounds"]["v6.1"]["submission_deadline"])
    manifests = sorted(SHIPPED.glob("*/v*/manifest.yaml"))
    assert len(manifests) == 11
    for manifest in manifests:
        key = manifest.parent.relative_to(REPO / "submissions").as_posix()
        assert attested[key]["manifest_sha256"] == hashlib.sha256(manifest.read_bytes()).hexdigest(), key
        doc = yaml.safe_load(manifest.read_text(encoding="utf-8"))
        assert (doc["status"], doc["submitted_at"], doc["round"]) == ("verified", deadline, "v6.1")
        assert "intel-ai-tce/inference_results_v6.1" in doc["notes"] and "Apache-2.0" in doc["notes"]


def test_the_v61_submissions_ingest_whole_and_match_the_published_table():
    report = ingest_mod.ingest(RULES, [SHIPPED], status="verified")
    assert len(report.table) == 97 and not report.dispositions
    # AMD's reference states 8 host processors per node on 2xEPYC systems: a warning, no row lost
    assert {(f.code, f.severity, f.where.column) for f in report.findings} == {
        ("description-contradicts-system-id", "warning", "host_processors_per_node")}
    published, found = crosscheck.load_published(RULES, [TABLE])
    assert list(published) == ["v6.1"] and sorted({f.code for f in found}) == [
        "composition-assumed", "description-contradicts-system-id"]
    check = crosscheck.check(report.table, published)
    assert (check.summary["checked"], check.summary["matches"], check.summary["differs"]) == (97, 97, 0)


def _fresh_copy(tmp_path):
    """What the script reads and writes, copied, with the round's versions removed."""
    work = tmp_path / "repo"
    for part in ("bin", "pipeline", "schemas", "published", "submissions"):
        shutil.copytree(REPO / part, work / part)
    shutil.copy2(REPO / "params.yaml", work / "params.yaml")
    return work


@pytest.mark.parametrize("round_", ["v6.0", "v6.1"])
def test_the_documented_command_ships_the_round_again_byte_for_byte(tmp_path, round_):
    """docs/rounds.md gives the command that shipped each round; run on a copy
    without the round's sealed versions, it writes the same bytes."""
    doc = (REPO / "docs" / "rounds.md").read_text(encoding="utf-8")
    blocks = [textwrap.dedent(b) for b in re.findall(r"^ *```sh\n(.*?)^ *```", doc, re.M | re.S)]
    [command] = [b for b in blocks if b.startswith(f"bin/ship-published {round_} ")]
    command = command.replace("\\\n", " ")
    work = _fresh_copy(tmp_path)
    for version in (work / "submissions" / round_).glob("*/v1"):
        shutil.rmtree(version)
    attested = (REPO / "schemas" / "attested.yaml").read_bytes()
    done = subprocess.run(f"{sys.executable} {command}", shell=True, cwd=work, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    for version in (REPO / "submissions" / round_).glob("*/v1"):
        for name in ("summary.csv", "manifest.yaml"):
            again = work / version.relative_to(REPO) / name
            assert again.read_bytes() == (version / name).read_bytes(), again
    shipped = {p.relative_to(REPO) for p in (REPO / "submissions" / round_).glob("*/v1")}
    assert {p.relative_to(work) for p in (work / "submissions" / round_).glob("*/v1")} == shipped
    assert (work / "schemas" / "attested.yaml").read_bytes() == attested


# ---- the round's rules fit its table ------------------------------------------------------

def test_every_row_names_a_model_and_scenario_of_the_v61_rules(official):
    doc = RULES.load_yaml("rules/v6.1.yaml")
    allowed: dict[str, set[str]] = {}
    for category in doc["scenarios"].values():
        for kind in ("required", "optional"):
            for model, scenarios in (category.get(kind) or {}).items():
                allowed.setdefault(model, set()).update(scenarios)
    pairs = set(zip(official.table["model"], official.table["scenario"]))
    assert {m for m, _ in pairs} <= set(doc["models"])
    assert [(m, s) for m, s in sorted(pairs) if s not in allowed[m]] == []
    # the benchmarks new in v6.x that the table holds
    assert {"dlrm-v3", "qwen3-vl-235b-a22b", "wan-2.2-t2v-a14b", "qwen3.6-27b", "e2e-rag-qna",
            "e2e-rag-db"} <= {m for m, _ in pairs}


def test_the_estimated_deadline_follows_amds_latest_run():

    tree = REPO / "tests" / "real" / "v6.1-submission-tree"
    stamps = [re.search(r'"key": "test_datetime", "value": "([^"]+)"', p.read_text(encoding="utf-8")).group(1)
              for p in tree.rglob("mlperf_log_detail.txt")]
    latest = max(datetime.fromisoformat(s.replace("Z", "+00:00")) for s in stamps)
    round_ = RULES.rounds()["v6.1"]
    assert round_.opens < latest < round_.submission_deadline
    assert latest.isoformat() == "2026-07-30T12:58:41+00:00"
