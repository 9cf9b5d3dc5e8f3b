"""What a version folder may hold: the allow-list of schemas/version_folder.yaml,
one rule (pipeline.store.contents) for the gate, ingest and submit.

The rule itself is tested in process on lists of paths; each attack is then
reproduced in a real temporary git repository shaped like the project (the
gate's fixtures) and fails the gate with a finding located at the path; a
version folder on disk holding the same is refused by ingest, and submit
refuses to seal it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from conftest import REPO, RULES, run_json
from gitrepo import commit
from test_gate import (DELL_SYSTEM, ROUND, base_repo, csv_text, gate, mlrepro, repo,  # noqa: F401
                       sealed_version, submit)
from pipeline.store import contents

DELL_V2 = f"submissions/{ROUND}/Dell/v2"
GOOD = {"Server": "101000"}

# Every name the brief lists that a tool reads as configuration or code.
CONFIGURATION = ["dvc.yaml", "dvc.lock", "import.dvc", ".dvcignore", ".gitattributes", ".gitignore", ".gitmodules",
                 "conftest.py", "helper.py", "evil.pth", "setup.py", "setup.cfg", "pyproject.toml", "Makefile",
                 "rules.mk", "requirements.txt", "requirements-dev.txt", "pytest.ini", "tox.ini", "params.yaml",
                 "DVC.YAML"]
UNSAFE = {"newline": "res\nults.csv", "tab": "res\tults.csv", "backslash": "res\\ults.csv",
          "leading dash": "--results.csv", "trailing space": "results.csv ", "trailing dot": "results.csv.",
          "escape": "res\x1b[31mults.csv", "right-to-left override": "res\u202evsc.csv",
          "zero-width space": "res\u200bults.csv", "non-ASCII letter": "résults.csv"}


def doc_of(done) -> dict:
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def errors(doc: dict) -> set[tuple[str, str]]:
    return {(f["code"], f["file"]) for f in doc["findings"] if f["severity"] == "error"}


def seal(folder: Path, entries: dict[str, str], files: dict[str, bytes], submitter: str = "Dell",
         number: int = 2) -> Path:
    """A version folder written by hand: FILES (path -> bytes) and a manifest
    listing ENTRIES (path -> format) with their true seals."""
    folder.mkdir(parents=True, exist_ok=True)
    for path, data in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    lines = [f"submitter: {submitter}", f"round: {ROUND}", f"version: {number}",
             "submitted_at: '2026-02-20T10:00:00+00:00'", "status: verified", "files:"]
    for path, fmt in entries.items():
        target = folder / path
        digest = (contents_digest(target) if target.is_dir() else hashlib.sha256(target.read_bytes()).hexdigest())
        lines += [f"- path: {path}", f"  format: {fmt}", f"  sha256: {digest}"]
    (folder / "manifest.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def contents_digest(folder: Path) -> str:
    from pipeline.store.hashes import sha256_tree

    return sha256_tree(folder)[0]


# ---- the rule, in process -----------------------------------------------------------------------

@pytest.mark.parametrize("name", CONFIGURATION)
def test_every_name_a_tool_reads_is_refused_at_the_top_and_inside_a_tree(name):
    listed = {name: "results-csv", "tree": "submission-tree"}
    paths = [("manifest.yaml", False), (name, False), ("tree", True), (f"tree/closed/Dell/{name}", False)]
    found = {(r.path, r.code) for r in contents.judge(RULES, paths, listed)}
    assert found == {(name, "file-not-allowed"), (f"tree/closed/Dell/{name}", "file-not-allowed")}


def test_a_tool_folder_is_one_finding_for_all_it_holds():
    paths = [("manifest.yaml", False), ("results.csv", False), (".dvc", True), (".dvc/config", False),
             (".dvc/cache", True), (".dvc/cache/x", False)]
    [refusal] = contents.judge(RULES, paths, {"results.csv": "results-csv"})
    assert (refusal.path, refusal.code) == (".dvc", "file-not-allowed")
    assert "DVC reads" in refusal.found


@pytest.mark.parametrize("name", UNSAFE.values(), ids=UNSAFE.keys())
def test_a_name_outside_the_safe_set_is_refused(name):
    [refusal] = contents.judge(RULES, [("manifest.yaml", False), (name, False)], {name: "results-csv"})
    assert (refusal.path, refusal.code) == (name, "unsafe-name")
    assert refusal.found.startswith(ascii(name))          # shown escaped, never raw


def test_a_results_file_needs_a_name_its_format_uses():
    found = contents.judge(RULES, [("manifest.yaml", False), ("results.txt", False), ("notes.md", False)],
                           {"results.txt": "results-csv"})
    assert [(r.path, r.code, r.expected) for r in found] == [
        ("results.txt", "file-not-allowed", "a results-csv file named *.csv")]   # notes.md: unlisted-file


def test_a_tree_holds_only_the_mlperf_layout():
    paths, _ = contents.walk(REPO / "tests/real/v5.1-submission-tree")
    tree = [("tree", True)] + [(f"tree/{p}", d) for p, d in paths]
    assert contents.judge(RULES, tree, {"tree": "submission-tree"}) == []           # a real tree passes whole
    extra = tree + [("tree/closed/AMD/code", True), ("tree/closed/AMD/code/run.sh", False),
                    ("tree/closed/AMD/results/notes.json", False)]
    assert {(r.path, r.code) for r in contents.judge(RULES, extra, {"tree": "submission-tree"})} == {
        ("tree/closed/AMD/code/run.sh", "file-not-allowed"), ("tree/closed/AMD/results/notes.json", "file-not-allowed")}


def test_the_rule_is_checked_as_data(tmp_path):
    schemas = tmp_path / "schemas"
    shutil.copytree(REPO / "schemas", schemas)
    text = (schemas / contents.RULES_FILE).read_text(encoding="utf-8")
    (schemas / contents.RULES_FILE).write_text(text.replace("max_length: 128", "max_length: many"),
                                              encoding="utf-8")
    from pipeline.core import rules
    from pipeline.core.errors import ConfigError

    with pytest.raises(ConfigError, match="names.max_length"):
        contents.folder_rules(rules.Rules.load(schemas))


# ---- the gate, on a pull request ------------------------------------------------------------------

def test_a_results_file_named_dvc_yaml_fails_the_gate(repo):
    """A CSV that is valid YAML too: sealed as results, it would be DVC's pipeline after the merge."""
    sealed_version(repo, "Dell", 2, csv_text("Dell", GOOD, DELL_SYSTEM), name="dvc.yaml")
    commit(repo, "Dell v2, as dvc.yaml")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    doc = doc_of(done)
    [finding] = [f for f in doc["findings"] if f["code"] == "file-not-allowed"]
    assert finding["file"] == f"{DELL_V2}/dvc.yaml" and "DVC reads" in finding["found"]
    assert all(r["outcome"] == "rejected" for r in doc["rows"])     # none of its rows is judged


def test_configuration_inside_a_sealed_tree_fails_the_gate_one_finding_per_path(repo):
    tree = {"tree/closed/Dell/dvc.yaml": b"stages:\n  x:\n    cmd: touch PWNED\n",
            "tree/closed/Dell/results/x.dvc": b"deps: []\n", "tree/closed/Dell/results/conftest.py": b"x = 1\n",
            "tree/closed/Dell/systems/s.json": b"{}\n"}
    seal(repo / DELL_V2, {"tree": "submission-tree"}, tree)
    commit(repo, "Dell v2, a tree with riders")
    doc = doc_of(gate(repo, "--format", "json"))
    assert doc["summary"]["verdict"] == "fail"
    assert {(c, f) for c, f in errors(doc) if c == "file-not-allowed"} == {
        ("file-not-allowed", f"{DELL_V2}/tree/closed/Dell/dvc.yaml"),
        ("file-not-allowed", f"{DELL_V2}/tree/closed/Dell/results/x.dvc"),
        ("file-not-allowed", f"{DELL_V2}/tree/closed/Dell/results/conftest.py")}


def test_unsafe_and_hidden_names_in_a_version_fail_the_gate_one_finding_per_path(repo):
    submit(repo, csv_text("Dell", GOOD, DELL_SYSTEM), "Dell")
    for name in (*UNSAFE.values(), ".gitattributes", "Makefile"):
        (repo / DELL_V2 / name).write_text("x\n", encoding="utf-8")
    commit(repo, "Dell v2 and odd names")
    doc = doc_of(gate(repo, "--format", "json"))
    assert doc["summary"]["verdict"] == "fail" and doc["summary"]["change"] == "submission"
    found = [f for f in doc["findings"] if f["code"] in ("unsafe-name", "file-not-allowed")]
    assert sorted((f["code"], f["file"]) for f in found) == sorted(
        [("unsafe-name", f"{DELL_V2}/{name}") for name in UNSAFE.values()]
        + [("file-not-allowed", f"{DELL_V2}/.gitattributes"), ("file-not-allowed", f"{DELL_V2}/Makefile")])
    assert not [f for f in doc["findings"] if f["code"] in ("unlisted-file", "maintenance-change")]


def test_a_good_partner_pull_request_still_passes(repo):
    submit(repo, csv_text("Dell", GOOD, DELL_SYSTEM), "Dell")
    commit(repo, "Dell v2")
    done = gate(repo, "--format", "json")
    assert done.returncode == 0, done.stdout


# ---- ingest and submit, on disk ---------------------------------------------------------------

def test_ingest_rejects_the_rows_of_a_refused_file(tmp_path):
    root = tmp_path / "submissions"
    seal(root / ROUND / "Dell" / "v1", {"dvc.yaml": "results-csv"},
         {"dvc.yaml": csv_text("Dell", GOOD, DELL_SYSTEM).encode()}, number=1)
    doc = run_json("validate", root / ROUND / "Dell" / "v1", "--root", root, expect=1)
    assert ("file-not-allowed", f"{ROUND}/Dell/v1/dvc.yaml") in {
        (f["code"], f["file"].removeprefix(f"{root.as_posix()}/")) for f in doc["findings"]}
    assert doc["summary"]["accepted"] == 0


@pytest.mark.parametrize("name", ["dvc.yaml", "conftest.py", "res\u202evsc.csv"])
def test_submit_refuses_to_seal_a_file_a_tool_reads_or_an_unsafe_name(tmp_path, name):
    source = tmp_path / "in" / name
    source.parent.mkdir()
    source.write_text(csv_text("Dell", GOOD, DELL_SYSTEM), encoding="utf-8")
    doc = run_json("submit", source, "--submitter", "Dell", "--round", "v6.0", "--status", "post-deadline",
                   "--input-format", "results-csv", "--root", tmp_path / "submissions", expect=1)
    assert {f["code"] for f in doc["findings"]} & {"file-not-allowed", "unsafe-name"}
    assert not list(tmp_path.glob("submissions/**/manifest.yaml"))       # nothing sealed
