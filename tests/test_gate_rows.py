"""The gate reads the reference vendor from the base's params.yaml; the
table schema's checks are what its file says; the row-by-row manifest
checker agrees with jsonschema (until it goes: one checker each)."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone

import pytest
from hypothesis import given, strategies as st

from conftest import REPO
from gitrepo import commit, git
from test_gate import (AMD, DELL_SYSTEM, PYTHON, ROUND, base_repo, csv_text, gate, repo,  # noqa: F401
                       submit)
from test_gate_bypasses import doc_of
from test_gate_crosscheck import publish

from pipeline.store import clock
from pipeline.gate import judge as gate_mod

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


# ---- the table schema is data: pandera applies whatever check it names ---------------------------

def test_a_check_the_schema_file_adds_is_applied_by_the_ingest(tmp_path, monkeypatch):
    import shutil

    from pipeline.core import rules
    from pipeline.ingest.submissions import ingest

    schemas = tmp_path / "schemas"
    shutil.copytree(REPO / "schemas", schemas)
    path = schemas / rules.SCHEMA_FILE
    path.write_text(path.read_text(encoding="utf-8").replace(
        "submitter:            {dtype: str, nullable: false, checks: {str_length: {min_value: 1}}}",
        "submitter:            {dtype: str, nullable: false, checks: {str_startswith: D}}"), encoding="utf-8")
    monkeypatch.setenv("MLREPRO_SCHEMAS", str(schemas))
    rules.clear_caches()
    try:
        done = ingest([REPO / "submissions" / "v6.0" / "AMD" / "v1"], root=REPO / "submissions")
    finally:
        monkeypatch.delenv("MLREPRO_SCHEMAS")
        rules.clear_caches()
    assert done.table.empty and {f.where.column for f in done.findings} == {"submitter"}
    assert {f.expected for f in done.findings} == {"str_startswith('D')"}
    assert {d.codes for d in done.dispositions} == {"schema-violation"}


# ---- manifests: jsonschema only when a manifest may be invalid ---------------------------------

def _manifests():
    import yaml

    return [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted((REPO / "submissions").rglob("manifest.yaml"))]


def test_every_shipped_manifest_is_valid_without_jsonschema():
    from pipeline.store import jsonvalid, manifests as store

    assert all(jsonvalid.valid(m, store._schema()) for m in _manifests())


_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.sampled_from(
    ["", "x", "v6.0", "6.0", "verified", "late", "a" * 64, "0" * 64, "2026-02-20T10:00:00Z", "AMD", "Dell v2"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
        ["path", "format", "sha256", "system", "model", "scenario", "reason", "division", "extra"]), inner,
        max_size=4), max_leaves=8)


@given(data=st.data())
def test_jsonvalid_says_valid_only_when_jsonschema_finds_no_error(data):
    from pipeline.store import jsonvalid, manifests as store

    manifest = json.loads(json.dumps(data.draw(st.sampled_from(_manifests()))))
    for _ in range(data.draw(st.integers(0, 3))):
        key = data.draw(st.sampled_from(sorted(manifest) + ["withdraws", "supersedes", "extra"]))
        if data.draw(st.booleans()) and key in manifest:
            del manifest[key]
        else:
            manifest[key] = data.draw(_VALUES)
    if jsonvalid.valid(manifest, store._schema()):
        assert not list(store._validator().iter_errors(manifest)), manifest
