"""A file outside every version folder (beside the rounds, or directly in a
round folder) is never read: `validate`, `ingest`, `ingest-all` and the gate
say so with a located `misplaced-file` finding instead of ignoring it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, run, run_json
from gitrepo import commit, init

from pipeline.core.findings import CODES

MLREPRO = REPO / ".venv" / "bin" / "mlrepro"


@pytest.fixture
def root(tmp_path) -> Path:
    """The shipped v6.0 Dell submission, with a stray file in its round folder
    and one beside the rounds (and a hidden one, which is nobody's business)."""
    root = tmp_path / "submissions"
    shutil.copytree(REPO / "submissions" / "v6.0" / "Dell", root / "v6.0" / "Dell")
    (root / "v6.0" / "notes.txt").write_text("Dell's figures, see v1\n", encoding="utf-8")
    (root / "results.csv").write_text("submitter,value\nDell,1\n", encoding="utf-8")
    (root / "v6.0" / ".gitkeep").write_text("", encoding="utf-8")
    return root


def _misplaced(findings: list[dict]) -> list[tuple[str, str, str]]:
    return [(f["file"], f["place"], f["expected"]) for f in findings if f["code"] == "misplaced-file"]


EXPECTED = [("results.csv", "whole file", "<round>/<submitter>/v<N>/<file>"),
            ("v6.0/notes.txt", "whole file", "<round>/<submitter>/v<N>/<file>")]


def _under(root: Path) -> list[tuple[str, str, str]]:
    """EXPECTED with every path under the root as it was named."""
    return [(f"{root.as_posix()}/{file}", place, f"{root.as_posix()}/{layout}") for file, place, layout in EXPECTED]


def test_the_code_is_registered():
    assert "misplaced-file" in CODES


def test_validate_and_ingest_name_every_misplaced_file_and_still_read_the_versions(root, tmp_path):
    doc = run_json("validate", root, "--root", root, expect=1)
    # validate names them under the root as it was given
    assert _misplaced(doc["findings"]) == _under(root)
    assert doc["summary"]["accepted"] > 0                 # the sealed version is read as before
    assert all(f["severity"] == "error" for f in doc["findings"] if f["code"] == "misplaced-file")
    result = run("ingest", root, "--root", root, "-o", tmp_path / "results.csv", expect=1)
    assert "v6.0/notes.txt: whole file: [misplaced-file]" in result.stderr


def test_ingest_all_records_each_misplaced_file_once(root, tmp_path):
    out = tmp_path / "out"
    run("ingest-all", root, "-o", out / "results.parquet", "--rejected-out", out / "rejected.csv",
        "--findings-out", out / "findings.json", "--versions-out", out / "versions.csv", expect=0)
    recorded = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    assert _misplaced(recorded) == _under(root)


def test_the_gate_fails_a_file_added_outside_a_version_folder(tmp_path):
    repo = init(tmp_path / "repo", "Gate Test")
    shutil.copytree(REPO / "schemas", repo / "schemas")
    (repo / "params.yaml").write_text("compare:\n  tolerance_pct: 4.0\n  reference_submitter: AMD\n",
                                      encoding="utf-8")
    (repo / "submissions").mkdir()
    (repo / "submissions" / ".gitkeep").write_text("", encoding="utf-8")
    commit(repo, "base")
    subprocess.run(["git", "checkout", "-q", "-b", "pr"], cwd=repo, check=True)
    (repo / "submissions" / "v6.0").mkdir()
    (repo / "submissions" / "v6.0" / "notes.txt").write_text("x\n", encoding="utf-8")
    commit(repo, "a note in the round folder")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "MLREPRO_"))}
    done = subprocess.run([str(MLREPRO), "gate", "--base", "main", "--format", "json"], cwd=repo,
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert [(f["code"], f["file"], f["place"], f["found"]) for f in doc["findings"]] == [
        ("misplaced-file", "submissions/v6.0/notes.txt", "whole file", "v6.0/notes.txt")]
    assert doc["findings"][0]["expected"] == "submissions/<round>/<submitter>/v<N>/<file>"
