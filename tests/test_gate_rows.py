"""The gate reads the reference vendor from the base's params.yaml; the
row-by-row schema checker agrees with pandera (until it goes: one checker)."""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone

import pytest

from conftest import REPO
from gitrepo import commit, git
from test_gate import (AMD, DELL_SYSTEM, PYTHON, ROUND, base_repo, csv_text, gate, repo,  # noqa: F401
                       submit)
from test_gate_bypasses import doc_of
from test_gate_crosscheck import publish

from pipeline.store import clock
from pipeline.gate import judge as gate_mod
from pipeline.ingest import rowschema, table

@pytest.mark.parametrize("base_vendor, verdict", [("AMD", "deviates"), ("NVIDIA", "excluded")])
def test_the_gate_reads_the_reference_vendor_from_the_bases_params(repo, base_vendor, verdict):
    git(repo, "checkout", "-q", "main")
    params = repo / "params.yaml"
    params.write_text(params.read_text(encoding="utf-8") + f"  reference_vendor: {base_vendor}\n",
                      encoding="utf-8")
    commit(repo, f"policy: reference vendor {base_vendor}")
    git(repo, "checkout", "-q", "-b", "pr-vendor")
    submit(repo, csv_text("Dell", {"Server": "95000"}, DELL_SYSTEM), "Dell")     # -5.27 %
    commit(repo, "Dell v2")
    doc = doc_of(gate(repo, "--format", "json"))
    assert doc["summary"]["reference_vendor"] == base_vendor
    [row] = doc["rows"]
    assert row["verdict"] == verdict
    if verdict == "excluded":
        assert "not NVIDIA's" in row["reason"] and doc["summary"]["verdict"] == "pass"


# ---- the schema on plain rows: pandera's outcome, finding for finding -------------------------

GOOD = dict(round="v6.0", submitter="A", system="s", system_name=None, accelerator="MI300X",
            accelerator_variant="MI300X", composition="MI300X:8", accelerators_per_node=8, nodes=1,
            total_accelerators=8, model="m", used_model="m", scenario="Offline", value=1.0, units="u",
            division="closed", availability="available", status="verified", result_id=None,
            source="f.csv:2", submission_version=1)
BAD = [
    dict(round="6.0", value=-5.0, scenario="Bogus", accelerators_per_node=0, submitter=""),
    dict(composition="x y", model=None, division="x", nodes=0),
    dict(value=0.0, status="late", total_accelerators=0, availability=None, round="v6.0\n"),
    dict(system="", units="", source="g.csv:9", submission_version=None, used_model=None),
    dict(accelerator=None, accelerator_variant="", composition="MI300X:8,MI325X:x", value=1e-300),
]


def test_rowschema_gives_panderas_findings_and_rejections():
    rows = [dict(GOOD)] + [{**GOOD, "source": f"f.csv:{i + 3}", **bad} for i, bad in enumerate(BAD)]
    accepted, rejected, found = table.validate(table.to_frame(rows))
    light = rowschema.validate(rows, rowschema.spec())
    assert [f.to_dict() for f in light[2]] == [f.to_dict() for f in found]
    assert [r["source"] for r in light[0]] == list(accepted["source"])
    assert [r["source"] for r in light[1]] == list(rejected["source"])
    assert len(found) > 12


def test_a_check_the_row_validator_does_not_know_is_left_to_pandera(tmp_path, monkeypatch):
    import shutil

    from pipeline.ingest import rows
    from pipeline.core import rules

    schemas = tmp_path / "schemas"
    shutil.copytree(REPO / "schemas", schemas)
    path = schemas / rules.SCHEMA_FILE
    path.write_text(path.read_text(encoding="utf-8").replace(
        "submitter:            {dtype: str, nullable: false, checks: {str_length: {min_value: 1}}}",
        "submitter:            {dtype: str, nullable: false, checks: {str_startswith: D}}"), encoding="utf-8")
    monkeypatch.setenv("MLREPRO_SCHEMAS", str(schemas))
    rules.clear_caches()
    assert rowschema.spec() is None
    done = rows.ingest([REPO / "submissions" / "v6.0" / "AMD" / "v1"], root=REPO / "submissions")
    assert not done.rows and {f.place.rsplit(", ", 1)[-1] for f in done.findings} == {"column submitter"}
    assert {f.expected for f in done.findings} == {"str_startswith('D')"}
    rules.clear_caches()
