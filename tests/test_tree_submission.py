"""A partner's submission tree sealed with `mlrepro submit`: one sha256 over the
tree's files, checked on every read; a changed file rejects the tree's results."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from conftest import REAL, run, run_json

TREE = REAL / "v5.1-submission-tree" / "closed" / "MiTAC"


@pytest.fixture
def tree(tmp_path) -> Path:
    closed = tmp_path / "partner" / "closed"
    shutil.copytree(TREE, closed / "MiTAC")
    for here, dirs, files in os.walk(closed):   # the copy may be read-only
        for name in dirs + files:
            path = Path(here) / name
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return closed


def _submit(tree: Path, root: Path, expect: int = 0):
    """Declared verified, on time: replayed today, after the deadline (--force)."""
    return run_json("submit", tree, "--submitter", "MiTAC", "--round", "v5.1", "--status", "verified",
                    "--submitted-at", "2025-07-30T10:00:00+00:00", "--root", root, "--force", expect=expect)


def test_a_tree_is_sealed_then_read_from_its_logs(tree, tmp_path):
    root = tmp_path / "submissions"
    assert _submit(tree, root)["summary"]["created"] == "v5.1/MiTAC/v1"
    manifest = (root / "v5.1/MiTAC/v1/manifest.yaml").read_text()
    assert "path: closed" in manifest and "format: submission-tree" in manifest
    doc = run_json("ingest", root, "-o", tmp_path / "out.csv", expect=0)
    assert doc["summary"]["accepted"] == 6
    offline = [r for r in doc["rows"] if r["model"] == "llama2-70b-99" and r["scenario"] == "Offline"]
    assert [r["value"] for r in offline] == [33703.0]          # MLCommons published 33703.0
    assert offline[0]["source"].startswith("v5.1/MiTAC/v1/closed/MiTAC/results/")


def test_a_file_changed_in_a_sealed_tree_rejects_its_results(tree, tmp_path):
    root = tmp_path / "submissions"
    _submit(tree, root)
    accuracy = next((root / "v5.1/MiTAC/v1/closed").rglob("accuracy.txt"))
    accuracy.write_text(accuracy.read_text() + "edited\n")
    doc = run_json("ingest", root, "-o", tmp_path / "out.csv", "--rejected-out", tmp_path / "r.csv",
                   expect=1)
    assert doc["summary"]["accepted"] == 0 and doc["summary"]["rejected"] == 6
    assert [f["code"] for f in doc["findings"] if f["severity"] == "error"] == ["hash-mismatch"]


def test_a_tree_holding_a_link_is_refused(tree, tmp_path):
    (tree / "MiTAC" / "outside").symlink_to("/etc")
    doc = _submit(tree, tmp_path / "submissions", expect=1)
    assert [f["code"] for f in doc["findings"]] == ["path-escape"]
    assert not (tmp_path / "submissions").exists() or not any((tmp_path / "submissions").rglob("v1"))
