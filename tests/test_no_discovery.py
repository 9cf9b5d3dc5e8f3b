"""No tool around the project discovers configuration or code under
submissions/, even after a merge that let something through: DVC collects no
stage or import from there (.dvcignore), pytest collects nothing and loads no
conftest.py from there (norecursedirs), and the installer packs nothing from
there (an explicit package list). Each is shown on what the tool does, in a
copy of the project's tracked files."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from test_dvc_pipeline import DVC, _env, _ran, _run

MARKER = "PLANTED-RAN"
# the project's own stages (dvc.yaml): the only ones DVC may collect
STAGES = ("ingest", "compare", "superseded", "audit", "report")


def plant(project: Path, marker: Path) -> list[Path]:
    """What a partner would plant if a pull request slipped through: a DVC
    stage whose output lies under submissions/ (so `dvc repro` would run it
    before ingest), a .dvc import of a file outside the repository, a
    .dvcignore hiding a partner's results from the ingest stage's hash, and
    a conftest.py with a test beside it."""
    dell = project / "submissions" / "v5.1" / "Dell"
    files = {
        dell / "dvc.yaml": f"stages:\n  planted:\n    cmd: touch {marker}\n    outs: [planted.out]\n",
        project / "submissions" / "v5.1" / "imported.dvc": f"deps:\n- path: {marker.parent / 'outside.txt'}\n"
                                                          "outs:\n- path: imported.txt\n",
        dell / ".dvcignore": "v2/results.csv\n",
        dell / "conftest.py": f"open({str(marker)!r}, 'w').close()\n",
        dell / "test_planted.py": f"def test_planted():\n    open({str(marker)!r}, 'w').close()\n",
    }
    (marker.parent / "outside.txt").write_text("a file outside the repository\n", encoding="utf-8")
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)


@pytest.fixture(scope="module")
def planted(made_project, tmp_path_factory) -> tuple[Path, Path]:
    """A copy of the project after a clean run (conftest.made_project), with
    the planted files merged on main."""
    base = tmp_path_factory.mktemp("planted")
    project = base / "project"
    shutil.copytree(made_project, project, symlinks=True)
    marker = base / MARKER
    plant(project, marker)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "add", "-A"], project)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "merged"], project)
    return project, marker


def test_dvc_collects_no_stage_from_submissions_and_the_control_shows_it_would(planted, tmp_path):
    project, _ = planted
    listed = _run([DVC, "stage", "list", "--all"], project).stdout
    assert {line.split()[0] for line in listed.splitlines() if line.strip()} == set(STAGES)
    control = tmp_path / "control"              # the same tree with the project's .dvcignore lines taken out
    shutil.copytree(project, control, symlinks=True)
    text = (control / ".dvcignore").read_text(encoding="utf-8")
    (control / ".dvcignore").write_text("\n".join(l for l in text.splitlines() if not l.startswith("/submissions/")),
                                        encoding="utf-8")
    listed = _run([DVC, "stage", "list", "--all"], control).stdout
    assert "submissions/v5.1/Dell/dvc.yaml:planted" in listed and "imported.dvc" in listed


def test_dvc_repro_on_the_merged_tree_runs_nothing_planted_and_reads_every_row(planted, made_project):
    project, marker = planted
    done = _run([DVC, "repro"], project)
    # the project's own stages only (a planted stage, never run, would run now); the ingest
    # stage reruns, its submissions changed, and reads the folder that holds the planted files
    # again (the other submitters from its cache); a stage after it reruns if the table changed
    assert "ingest" in _ran(done.stdout) and _ran(done.stdout) <= set(STAGES), done.stdout
    assert "submitters_read=1, submitters_cached=41" in done.stdout, done.stdout
    assert not marker.exists()
    assert not (project / "submissions" / "v5.1" / "imported.txt").exists()       # no import copied in
    assert not (project / "submissions" / "v5.1" / "Dell" / "planted.out").exists()
    # every row of the shipped submissions is read, exactly as the ingest of the clean copy read them
    clean = made_project / "data"
    merged, expected = pd.read_parquet(project / "data/results.parquet"), pd.read_parquet(clean / "results.parquet")
    assert sorted(merged["source"]) == sorted(expected["source"]) and len(merged) > 0
    assert pd.read_csv(project / "data/rejected.csv").shape == pd.read_csv(clean / "rejected.csv").shape
    # the planted .dvcignore hides nothing: a change to the file it names is a change of the ingest stage
    results = project / "submissions" / "v5.1" / "Dell" / "v2" / "results.csv"
    results.write_text(results.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert "ingest" in _run([DVC, "status"], project).stdout


# (a folder named on the command line is collected, as asked: that is no discovery)
@pytest.mark.parametrize("args", [(), (".",), ("--rootdir", ".", ".")], ids=["bare", "dot", "rootdir"])
def test_pytest_collects_nothing_and_loads_no_conftest_from_submissions(planted, args):
    project, marker = planted
    scratch = project.parent / f"pytest-{len(args)}"
    shutil.copytree(project / "submissions", scratch / "submissions", symlinks=True)
    shutil.copy(project / "pyproject.toml", scratch / "pyproject.toml")   # the project's own pytest settings
    (scratch / "tests").mkdir()
    (scratch / "tests" / "test_ok.py").write_text("def test_ok():\n    pass\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=scratch,
                          capture_output=True, text=True, env=_env())
    assert not marker.exists(), done.stdout
    assert "test_planted" not in done.stdout
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def test_the_installer_packs_nothing_from_submissions(planted, tmp_path):
    project, _ = planted
    dell = project / "submissions" / "v5.1" / "Dell"
    (dell / "setup.py").write_text("raise SystemExit('planted setup.py ran')\n", encoding="utf-8")
    (dell / "planted.pth").write_text("import os\n", encoding="utf-8")
    (dell / "__init__.py").write_text("", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                           "-w", str(tmp_path), str(project)], capture_output=True, text=True, env=_env(),
                          cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = tmp_path.glob("mlrepro-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("submissions/") or n.endswith(".pth") or "Dell" in n]
    assert {n.split("/")[0] for n in names if not n.startswith("mlrepro-")} == {"pipeline"}
