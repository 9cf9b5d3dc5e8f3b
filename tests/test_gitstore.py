"""The gate reads what git stores: a commit's files byte for byte whatever
.gitattributes or core.autocrlf make a checkout write, links as links,
submodules reported, and every change between two trees with its modes."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from gitrepo import commit, git, init

from pipeline.gate import gitstore

LF = b"submitter,value\nDell,100.5\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = init(tmp_path / "origin", "Maintainer")
    (repo / "submissions" / "v6.0" / "AMD" / "v1").mkdir(parents=True)
    (repo / "submissions" / "v6.0" / "AMD" / "v1" / "results.csv").write_bytes(LF)
    commit(repo, "reference")
    (repo / ".gitattributes").write_text("submissions/** text eol=crlf\n")
    commit(repo, "a checkout now writes CRLF")
    return repo


def test_a_fresh_clone_with_eol_attributes_writes_other_bytes_than_git_stores(repo, tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    checked_out = (clone / "submissions" / "v6.0" / "AMD" / "v1" / "results.csv").read_bytes()
    assert checked_out == LF.replace(b"\n", b"\r\n")      # what a hash of the checkout would see
    out = tmp_path / "stored"
    gitstore.materialise(clone, "HEAD", ["submissions"], out)
    stored = (out / "submissions" / "v6.0" / "AMD" / "v1" / "results.csv").read_bytes()
    assert hashlib.sha256(stored).hexdigest() == hashlib.sha256(LF).hexdigest()


def test_autocrlf_does_not_change_the_bytes_read(repo, tmp_path):
    git(repo, "config", "core.autocrlf", "true")
    out = tmp_path / "stored"
    gitstore.materialise(repo, "HEAD", ["submissions"], out)
    assert (out / "submissions" / "v6.0" / "AMD" / "v1" / "results.csv").read_bytes() == LF


def test_links_stay_links_and_submodules_are_reported(repo, tmp_path):
    os.symlink("../../AMD/v1/results.csv", repo / "submissions" / "v6.0" / "link.csv")
    fake = "1" * 40
    git(repo, "add", "-A")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{fake},submissions/v6.0/module")
    git(repo, "commit", "-q", "-m", "a link and a submodule")
    out = tmp_path / "stored"
    skipped = gitstore.materialise(repo, "HEAD", ["submissions"], out)
    assert os.readlink(out / "submissions" / "v6.0" / "link.csv") == "../../AMD/v1/results.csv"
    assert [(e.path, e.mode) for e in skipped] == [("submissions/v6.0/module", gitstore.SUBMODULE)]


def test_changes_between_commits_and_with_the_working_tree(repo, tmp_path):
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "submissions" / "v6.0" / "Dell" / "v1").mkdir(parents=True)
    (repo / "submissions" / "v6.0" / "Dell" / "v1" / "results.csv").write_bytes(LF)
    os.symlink("x", repo / "escape")
    commit(repo, "Dell v1 and a link")
    (repo / "untracked.txt").write_text("x")
    (repo / "metrics.json").write_text("{}")
    (repo / "submissions" / "v6.0" / "AMD" / "v1" / "results.csv").write_bytes(LF + b"AMD,1\n")
    committed = gitstore.changes(repo, base, "HEAD")
    assert [(c.path, c.status, c.new_mode) for c in committed] == [
        ("escape", "A", gitstore.SYMLINK), ("submissions/v6.0/Dell/v1/results.csv", "A", gitstore.REGULAR)]
    index = (repo / ".git" / "index").read_bytes()
    worktree = gitstore.worktree(repo, tmp_path, leave_out=("metrics.json",))
    assert [(c.path, c.status) for c in gitstore.changes(repo, base, worktree)] == [
        ("escape", "A"), ("submissions/v6.0/AMD/v1/results.csv", "M"),
        ("submissions/v6.0/Dell/v1/results.csv", "A"), ("untracked.txt", "A")]
    assert (repo / ".git" / "index").read_bytes() == index          # the repository's index is untouched


def test_a_worktree_tree_stores_what_a_commit_would(repo, tmp_path):
    """Under eol=crlf attributes a checkout holds CRLF; what a commit of it
    would store (and the gate judges) is the LF blob."""
    (repo / "submissions" / "v6.0" / "Dell" / "v1").mkdir(parents=True)
    (repo / "submissions" / "v6.0" / "Dell" / "v1" / "results.csv").write_bytes(LF.replace(b"\n", b"\r\n"))
    tree = gitstore.worktree(repo, tmp_path)
    assert gitstore.read(repo, tree, "submissions/v6.0/Dell/v1/results.csv") == LF


def test_an_unknown_commit_is_a_git_failure(repo):
    with pytest.raises(gitstore.GitFailed):
        gitstore.tree(repo, "no-such-ref")


def test_a_tree_path_that_would_leave_the_scratch_folder_is_not_written(tmp_path):
    """git mktree accepts entries a checkout refuses (.., .git): they are left
    out of what the gate writes, and returned."""
    repo = init(tmp_path / "crafted", "Attacker")

    def fed(*args: str, text: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, input=text, capture_output=True, text=True,
                              check=True).stdout.strip()

    blob = fed("hash-object", "-w", "--stdin", text="escaped\n")
    inner = fed("mktree", text=f"100644 blob {blob}\t..\n100644 blob {blob}\tok.csv\n")
    outer = fed("mktree", text=f"040000 tree {inner}\tsubmissions\n100644 blob {blob}\t.git\n")
    out = tmp_path / "stored" / "scratch"
    skipped = gitstore.materialise(repo, outer, ["submissions", ".git"], out)
    assert sorted(e.path for e in skipped) == [".git", "submissions/.."]
    assert (out / "submissions" / "ok.csv").read_text() == "escaped\n"
    assert not (out / "submissions" / "..").is_file() and not (tmp_path / "stored" / "submissions").exists()
