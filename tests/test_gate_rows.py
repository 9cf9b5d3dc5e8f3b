"""The gate reads the reference vendor from the base's params.yaml; the
table schema's checks are what its file says."""

from __future__ import annotations

import pytest

from conftest import RULES, REPO
from gitrepo import commit, git
from test_gate import DELL_SYSTEM, base_repo, csv_text, gate, repo, submit  # noqa: F401  (fixtures)
from test_gate_bypasses import doc_of


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
    done = ingest(rules.Rules.load(schemas), [REPO / "submissions" / "v6.0" / "AMD" / "v1"],
                  root=REPO / "submissions")
    refused = [f for f in done.findings if f.severity == "error"]   # beside AMD's host-count warnings
    assert done.table.empty and {f.where.column for f in refused} == {"submitter"}
    assert {f.expected for f in refused} == {"str_startswith('D')"}
    assert {d.codes for d in done.dispositions} == {"schema-violation"}
