"""What a partner cannot choose: each class of attack on the gate, in a real
git repository (a base on `main` with the project's policy and a round whose
deadline is ahead, AMD's reference and Dell's v1; then a pull-request
branch), fails with its located finding.

- a submission pull request is exactly a submission: anything else that
  rides along is a maintenance change, path by path, and fails beside a
  submission even with the maintainers' label;
- the reference is the maintainers': a new reference version needs the label;
- the gate judges what git stores: .gitattributes, core.autocrlf and an old
  working tree give the verdict a fresh clone (CI) gives;
- what a verdict depends on must verify: a broken reference file, published
  table or rules file fails the gate (reference-broken), never turning
  a partner's result into no-reference;
- the gate judges commits: uncommitted outputs of a local run are not judged;
- every partner result the gate did not compare is listed with its reason, in
  every format.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gitrepo import commit, git, init
from test_gate import (DELL_SYSTEM, ROUND, base_repo, csv_text, gate, mlrepro, repo, sealed_version,  # noqa: F401
                       submit)
from test_gate_bypasses import codes, doc_of
from pipeline.core.vocabulary import label

DELL_V2 = f"submissions/{ROUND}/Dell/v2"
LOW = {"Server": "90000"}          # -10.25% from AMD's 100282
GOOD = {"Server": "101000"}


def good_submission(repo: Path, values: dict = GOOD) -> None:
    submit(repo, csv_text("Dell", values, DELL_SYSTEM), "Dell")


def write(repo: Path, path: str, text: str = "x\n") -> Path:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


# ---- a submission pull request is exactly a submission --------------------------------------------

def _executable_results(repo: Path) -> str:
    os.chmod(repo / DELL_V2 / "results.csv", 0o755)
    return f"{DELL_V2}/results.csv"


def _submodule(repo: Path) -> str:
    """A repository inside the work tree: `git add` records it as a gitlink."""
    inner = init(repo / "vendor" / "tool", "Partner")
    write(inner, "README", "tool\n")
    commit(inner, "a tool")
    return "vendor/tool"


def _link(path: str, target: str):
    def make(repo: Path) -> str:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, repo / path)
        return path
    return make


def _file(path: str, code: str = "maintenance-change"):
    def make(repo: Path) -> str:
        write(repo, path)
        return path
    make.code = code
    return make


RIDERS = {
    "bin/mlrepro": _file("bin/mlrepro"), "Makefile": _file("Makefile"), ".dvc/config": _file(".dvc/config"),
    "claims.yaml": _file("claims.yaml"), ".ci/run": _file(".ci/run"), "tests/": _file("tests/test_x.py"),
    "a new top-level file": _file("NOTES.md"), ".gitattributes": _file(".gitattributes"),
    ".gitattributes in the version": _file(f"{DELL_V2}/.gitattributes", "file-not-allowed"),
    ".gitattributes in a round": _file(f"submissions/{ROUND}/.gitattributes"),
    "metrics/": _file(f"metrics/{ROUND}/verified.json", "generated-file-edited"),
    "dvc.lock": _file("dvc.lock", "generated-file-edited"),
    "schemas/": _file("schemas/extra.yaml", "policy-change"),
    "a submodule": _submodule, "a link": _link("docs/link", "../submissions"),
    "a link in the version": _link(f"{DELL_V2}/notes.txt", "results.csv"),
    "an executable file": _executable_results,
}


def test_anything_riding_along_with_a_submission_fails_even_with_the_label(repo):
    """Every rider in one pull request beside a good submission: one finding
    per path, an error with the label or without."""
    good_submission(repo)
    expected = {(getattr(make, "code", "maintenance-change"), make(repo)) for make in RIDERS.values()}
    commit(repo, "Dell v2 and friends")
    for label in ((), ("--allow-maintenance",)):
        done = gate(repo, "--format", "json", *label)
        assert done.returncode == 1, label
        doc = doc_of(done)
        assert doc["summary"]["change"] == "mixed"
        change = [f for f in doc["findings"] if f["code"] not in ("unlisted-file", "deviates-from-reference")]
        assert {(f["code"], f["file"]) for f in change} == expected
        assert len(change) == len(expected)                                        # one finding per path
        assert all(f["severity"] == "error" for f in change)
        # a generated file: the partner drops it; a file a version may not hold: its own finding;
        # anything else: it goes to a pull request of its own
        assert all("in a submission: drop it from your branch" in f["message"] if f["code"] == "generated-file-edited"
                   else "together with a submission" in f["message"] for f in change
                   if f["code"] != "file-not-allowed")


def test_a_maintenance_change_needs_the_label_and_passes_alone_with_it(repo):
    write(repo, "Makefile", "all:\n")
    write(repo, "docs/partner.md", "# Partners\n")
    commit(repo, "docs and a Makefile")
    without = doc_of(gate(repo, "--format", "json"))
    assert without["summary"]["verdict"] == "fail" and without["summary"]["change"] == "maintenance"
    assert {(f["code"], f["file"], f["severity"]) for f in without["findings"]} == {
        ("maintenance-change", "Makefile", "error"), ("maintenance-change", "docs/partner.md", "error")}
    assert without["findings"][0]["found"] == "added: outside submissions/"
    done = gate(repo, "--format", "json", "--allow-maintenance")
    assert done.returncode == 0, done.stdout
    assert {f["severity"] for f in doc_of(done)["findings"]} == {"warning"}


def test_two_partners_in_one_pull_request_fail(repo):
    good_submission(repo)
    submit(repo, csv_text("HPE", GOOD, "ProLiant_XD685_8xMI355X"), "HPE")
    commit(repo, "Dell v2 and HPE v1")
    doc = doc_of(gate(repo, "--format", "json"))
    assert {(c, f) for c, f, _ in codes(doc)} == {
        ("more-than-one-submitter", f"{DELL_V2}/manifest.yaml"),
        ("more-than-one-submitter", f"submissions/{ROUND}/HPE/v1/manifest.yaml")}


# ---- the reference is the maintainers' -------------------------------------------------------------

def test_a_partner_cannot_lower_the_reference_beside_its_own_low_result(repo):
    submit(repo, csv_text("AMD", {"Server": "90000", "Offline": "110000"}), "AMD")
    good_submission(repo, LOW)
    commit(repo, "AMD v2 (lower) and Dell v2, 10% low")
    for label in ((), ("--allow-maintenance",)):
        doc = doc_of(gate(repo, "--format", "json", *label))
        assert doc["summary"]["verdict"] == "fail" and doc["summary"]["change"] == "mixed"
        assert ("reference-change", f"submissions/{ROUND}/AMD/v2/manifest.yaml", "whole file") in codes(doc)


# ---- the gate judges what git stores ---------------------------------------------------------------

def _clone(source: Path, dest: Path, *options: str) -> Path:
    """What CI has: a fresh clone of the pull request's head, the base fetched."""
    git(dest.parent, "clone", "-q", *options, str(source), str(dest))
    git(dest, "checkout", "-q", "pr")
    git(dest, "fetch", "-q", str(source), "+refs/heads/main:refs/remotes/gate/base")
    return dest


def _verdict(repo: Path, base: str = "gate/base") -> tuple[int, set, list]:
    done = mlrepro(repo, "gate", "--base", base, "--format", "json")
    doc = doc_of(done)
    return done.returncode, codes(doc), [(r["file"], r["line"], r["verdict"]) for r in doc["rows"]]


ATTRIBUTES = f"submissions/{ROUND}/AMD/** text eol=crlf\n"
DEVIATES = [(f"{DELL_V2}/results.csv", 2, "deviates")]


def test_an_eol_attribute_beside_a_low_result_fails_in_a_fresh_clone(repo, tmp_path):
    write(repo, ".gitattributes", ATTRIBUTES)
    good_submission(repo, LOW)
    commit(repo, "Dell v2, 10% low, and eol attributes for the reference")
    clone = _clone(repo, tmp_path / "ci")
    amd = clone / "submissions" / ROUND / "AMD" / "v1" / "results.csv"
    assert b"\r\n" in amd.read_bytes()              # the checkout did convert the reference's files
    exit_code, found, rows = _verdict(clone)
    assert exit_code == 1 and rows == DEVIATES
    assert {("maintenance-change", ".gitattributes", "whole file"),
            ("deviates-from-reference", f"{DELL_V2}/results.csv", "line 2, column value")} <= found


def test_an_eol_attribute_merged_first_changes_no_later_verdict(repo, tmp_path):
    """The attribute merged on its own (with the label), then the low result:
    in a fresh clone, in the old working tree and under core.autocrlf=true
    the verdict is the same: deviates."""
    git(repo, "checkout", "-q", "main")
    write(repo, ".gitattributes", ATTRIBUTES)
    commit(repo, "eol attributes for the reference (merged)")
    git(repo, "checkout", "-q", "-B", "pr")
    good_submission(repo, LOW)
    commit(repo, "Dell v2, 10% low")
    verdicts = {"old working tree": _verdict(repo, "main"),
                "fresh clone": _verdict(_clone(repo, tmp_path / "ci")),
                "autocrlf": _verdict(_clone(repo, tmp_path / "crlf", "--config", "core.autocrlf=true"))}
    for name, (exit_code, found, rows) in verdicts.items():
        assert exit_code == 1 and rows == DEVIATES, name
        assert found == {("deviates-from-reference", f"{DELL_V2}/results.csv", "line 2, column value")}, name


def test_a_good_submission_passes_in_a_fresh_clone_an_old_tree_and_under_autocrlf(repo, tmp_path):
    good_submission(repo)
    commit(repo, "Dell v2")
    agree = [(f"{DELL_V2}/results.csv", 2, "agree")]
    assert _verdict(repo, "main") == (0, set(), agree)
    assert _verdict(_clone(repo, tmp_path / "ci")) == (0, set(), agree)
    assert _verdict(_clone(repo, tmp_path / "crlf", "--config", "core.autocrlf=true")) == (0, set(), agree)


# ---- what a verdict depends on must verify -----------------------------------------------------------

def _on_main(repo: Path, change, message: str) -> None:
    git(repo, "checkout", "-q", "main")
    change()
    commit(repo, message)
    git(repo, "checkout", "-q", "-B", "pr")


def test_a_reference_file_that_fails_its_seal_fails_the_gate(repo):
    amd = repo / "submissions" / ROUND / "AMD" / "v1" / "results.csv"
    _on_main(repo, lambda: amd.write_bytes(amd.read_bytes().replace(b"\n", b"\r\n")),
             "the reference's file rewritten with CRLF")
    good_submission(repo, LOW)
    commit(repo, "Dell v2, 10% low")
    doc = doc_of(gate(repo, "--format", "json"))
    assert doc["summary"]["verdict"] == "fail"
    [f] = [f for f in doc["findings"] if f["code"] == "reference-broken"]
    assert f["file"] == f"submissions/{ROUND}/AMD/v1/results.csv" and f["found"].startswith("hash-mismatch")
    assert doc["summary"]["not_compared"] == [{
        "file": f"{DELL_V2}/results.csv", "line": 2, "version": f"{ROUND}/Dell/v2", "outcome": "no-reference",
        "reason": doc["rows"][0]["reason"]}]


def test_a_published_table_that_does_not_read_fails_a_verified_result(repo):
    _on_main(repo, lambda: write(repo, f"published/{ROUND}/summary.csv", "\x00\x01 not a table\n"),
             "a broken published table")
    good_submission(repo)
    commit(repo, "Dell v2")
    doc = doc_of(gate(repo, "--format", "json"))
    assert doc["summary"]["verdict"] == "fail"
    assert [(c, f) for c, f, _ in codes(doc)] == [("reference-broken", f"published/{ROUND}/summary.csv")]


def test_rules_that_do_not_load_fail_the_gate_naming_their_file(repo):
    accelerators = repo / "schemas" / "accelerators.yaml"
    _on_main(repo, lambda: accelerators.write_text("accelerators:\n- {name: X, pattern: '('}\n"),
             "a broken accelerator registry")
    sealed_version(repo, "Dell", 2, csv_text("Dell", GOOD, DELL_SYSTEM))   # submit would refuse the broken rules
    commit(repo, "Dell v2")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    [f] = doc_of(done)["findings"]
    assert (f["code"], f["file"]) == ("reference-broken", "schemas/accelerators.yaml")
    assert "mlrepro-gate-" not in f["found"]


# ---- the gate judges commits -------------------------------------------------------------------------

def test_a_local_runs_outputs_are_not_judged_until_committed(repo):
    good_submission(repo)
    commit(repo, "Dell v2")
    write(repo, "dvc.lock", "schema: '2.0'\n")
    write(repo, "metrics.json", "{}\n")
    write(repo, f"metrics/{ROUND}/verified.json", "{}\n")
    for worktree in ((), ("--worktree",)):
        done = gate(repo, "--format", "json", *worktree)
        assert done.returncode == 0, done.stdout
    commit(repo, "the local outputs too")
    doc = doc_of(gate(repo, "--format", "json"))
    assert {(c, f) for c, f, _ in codes(doc)} == {("generated-file-edited", p) for p in (
        "dvc.lock", "metrics.json", f"metrics/{ROUND}/verified.json")}
    # partner advice: the partner drops the file; nothing to split into a maintainer's pull request
    [lock] = [f for f in doc["findings"] if f["file"] == "dvc.lock"]
    assert "drop it from your branch (`git " in lock["message"] and " -- dvc.lock` or `git rm" not in lock["message"]
    assert "dvc.lock`, then commit); the regenerate workflow writes it on main" in lock["message"]
    assert "pull request of its own" not in lock["message"]


def test_a_named_version_is_judged_as_committed(repo):
    good_submission(repo, LOW)
    done = gate(repo, DELL_V2)
    assert done.returncode == 2 and "v9.9/Dell/v2: no such version in the HEAD tree" in done.stderr
    doc = doc_of(gate(repo, DELL_V2, "--worktree", "--format", "json"))
    assert doc["summary"]["versions"] == [f"{ROUND}/Dell/v2"] and doc["summary"]["head"] == "working tree"
    assert [r["verdict"] for r in doc["rows"]] == ["deviates"]


# ---- every result not compared is listed, in every format --------------------------------------------

NOT_COMPARED = csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM) + (
    f"Dell,{DELL_SYSTEM},AMD Instinct MI355X 288GB HBM3E,8,1,llama3.1-8b,Offline,5000,Tokens/s,closed,available\n"
    "Dell,PowerEdge_XE9680_8xH100,NVIDIA H100-SXM-80GB,8,1,llama2-70b-99,Server,30000,Tokens/s,closed,available\n"
    f"Dell,{DELL_SYSTEM},AMD Instinct MI355X 288GB HBM3E,8,1,llama2-70b-99,Offline,\"1,5\",Tokens/s,closed,"
    "available\n")


def test_the_summary_lists_every_partner_result_not_compared_in_every_format(repo):
    sealed_version(repo, "Dell", 2, NOT_COMPARED)
    commit(repo, "Dell v2 with results the gate cannot compare")
    doc = doc_of(gate(repo, "--format", "json"))
    listed = {(x["line"], x["outcome"]) for x in doc["summary"]["not_compared"]}
    assert listed == {(3, "no-reference"), (4, "excluded"), (5, "rejected")}
    assert all(x["reason"] for x in doc["summary"]["not_compared"])
    reasons = {x["line"]: x["reason"] for x in doc["summary"]["not_compared"]}

    text = gate(repo).stdout   # the human formats say each outcome by its label (no-reference: "no reference")
    for line, outcome in listed:
        assert f"not compared: {DELL_V2}/results.csv:{line}: {label(outcome)}: {reasons[line]}" in text
    github = gate(repo, "--format", "github").stdout
    for line, outcome in listed:
        assert f"::notice file={DELL_V2}/results.csv,line={line},title=not-compared::{label(outcome)}: " in github
    markdown = gate(repo, "--format", "markdown").stdout
    assert all(f"not compared: {DELL_V2}/results.csv:{line}: {label(outcome)}" in markdown for line, outcome in listed)
    gate(repo, "--output", "junit=gate.xml")
    suite = ET.parse(repo / "gate.xml").getroot().find("testsuite")
    marked = {int(c.get("line")) for c in suite.iter("testcase") if c.get("line")
              and (c.find("skipped") is not None or c.find("failure") is not None)}
    assert {3, 4, 5} <= marked



def test_deleting_a_file_outside_any_version_folder_is_no_submission(repo):
    """A submission only adds version folders: a deletion elsewhere under the
    root (a loose README) is a maintenance change, never a silent pass."""
    git(repo, "checkout", "-q", "main")
    write(repo, "submissions/README.md", "what lives here\n")
    commit(repo, "a note under the root")
    git(repo, "checkout", "-q", "-B", "pr")
    (repo / "submissions" / "README.md").unlink()
    commit(repo, "the note goes")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1, done.stdout
    doc = doc_of(done)
    assert doc["summary"]["change"] == "maintenance"
    assert [(f["code"], f["file"]) for f in doc["findings"]] == [("maintenance-change", "submissions/README.md")]
    assert "a deletion outside any version folder" in doc["findings"][0]["found"]


BOMB = "".join(f"{k}: &{k} [{', '.join([f'*{p}'] * 10) if p else '1'}]\n"
               for p, k in zip(["", "a", "b", "c", "d", "e", "f", "g"], "abcdefgh"))


def test_a_policy_file_that_expands_through_aliases_is_not_expanded(repo):
    """An alias bomb in a changed policy file is one finding for the file, at
    once (expanding it would run the gate into its job's timeout)."""
    write(repo, "schemas/extra.yaml", BOMB)
    commit(repo, "an alias bomb")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1, done.stdout
    assert {(f["code"], f["file"], f["key"]) for f in doc_of(done)["findings"]} == {
        ("policy-change", "schemas/extra.yaml", None)}
