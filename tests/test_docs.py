"""The docs are the user's manual, and what they show runs.

- README.md stays a newcomer's five minutes: at most 300 lines.
- Every relative link of README.md and docs/*.md names a file that exists.
- docs/cli.md and docs/findings.md are what the code generates (`make docs`).
- Every shell block is marked runnable or not-run (``<!-- not-run: why -->``).
- Every shell block marked runnable (``<!-- runnable -->`` on the line before
  a ```sh fence; ``<!-- runnable exit=N -->`` when the block must end with
  exit N) runs, each document's blocks in order, in a fresh copy of the
  repository (a new git repository on main holding the project's files) at
  today's date, after the README's two set-up commands (``make install``, the
  project's .venv linked in, and ``. .venv/bin/activate``: .venv/bin first on
  PATH), and ends with the exit code it declares. A document that runs
  `make run` starts from a copy in which the pipeline has already run once
  (conftest.made_project, the run tests/test_dvc_pipeline.py checks): its own
  `make run` then reruns what its earlier blocks changed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, project_copy

from pipeline.cli import cli
from pipeline.output.docs import pages

DOCS = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
RUNNABLE = re.compile(r"^<!-- runnable(?: exit=(\d+))? -->\n```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_is_a_five_minute_read():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_names_a_file_that_exists(doc):
    text = doc.read_text(encoding="utf-8")
    broken = [target for target in LINK.findall(text)
              if "://" not in target and not (doc.parent / target).exists()]
    assert broken == []


@pytest.mark.parametrize("name", sorted(pages(cli)))
def test_the_generated_reference_pages_are_current(name):
    on_disk = (REPO / "docs" / name).read_text(encoding="utf-8")
    assert on_disk == pages(cli)[name], f"docs/{name} is stale: run `make docs`"


def runnable_blocks(text: str) -> list[tuple[str, int]]:
    """(shell text, expected exit code) of every runnable block, in order."""
    return [(body, int(code or 0)) for code, body in RUNNABLE.findall(text)]


SHELL_FENCE = re.compile(r"^```(?:sh|bash|shell|console|zsh)\s*$", re.MULTILINE)
MARK = re.compile(r"<!-- (?:runnable(?: exit=\d+)?|not-run: \S[^>]*) -->$")


def unmarked_blocks(text: str) -> list[int]:
    """Line numbers of the shell blocks marked neither runnable nor not-run
    (with why): every command the docs show is run by the test below, or says
    why it cannot be (a push to GitHub, the whole suite)."""
    lines = text.splitlines()
    return [text[:m.start()].count("\n") + 1 for m in SHELL_FENCE.finditer(text)
            if not MARK.fullmatch(lines[text[:m.start()].count("\n") - 1].strip() if m.start() else "")]


def test_a_shell_block_is_marked_runnable_or_not_run_with_why():
    text = ("<!-- runnable -->\n```sh\ntrue\n```\n\n```sh\nunmarked\n```\n"
            "<!-- not-run: needs GitHub -->\n```sh\ngit push\n```\n<!-- not-run: -->\n```bash\nx\n```\n")
    assert unmarked_blocks(text) == [6, 14]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_shell_block_is_run_or_says_why_not(doc):
    assert unmarked_blocks(doc.read_text(encoding="utf-8")) == [], (
        f"{doc.name}: mark each shell block <!-- runnable --> (tests/test_docs.py runs it) "
        "or <!-- not-run: why -->")


def test_a_runnable_block_is_recognised_with_its_exit_code():
    text = "x\n<!-- runnable exit=1 -->\n```sh\nfalse\n```\n```sh\nnot this\n```\n<!-- runnable -->\n```sh\ntrue\n```\n"
    assert runnable_blocks(text) == [("false\n", 1), ("true\n", 0)]


def fresh_copy(tmp_path: Path) -> Path:
    """The project's files in a new git repository on main (conftest.project_copy)."""
    return project_copy(tmp_path / "clone")


def _env(work: Path) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{work / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "GIT_AUTHOR_NAME": "Docs Reader", "GIT_AUTHOR_EMAIL": "reader@example.invalid",
           "GIT_COMMITTER_NAME": "Docs Reader", "GIT_COMMITTER_EMAIL": "reader@example.invalid",
           "DVC_NO_ANALYTICS": "1"}
    for name in ("MLREPRO_SCHEMAS", "GITHUB_BASE_REF"):
        env.pop(name, None)
    return env


DOCS_WITH_BLOCKS = [doc for doc in DOCS if runnable_blocks(doc.read_text(encoding="utf-8"))]


def made_run(request, tmp_path: Path) -> Path:
    """A copy of the project after one run of its pipeline (conftest.made_project, built once per test run)."""
    work = tmp_path / "clone"
    shutil.copytree(request.getfixturevalue("made_project"), work, symlinks=True)
    return work


@pytest.mark.parametrize("doc", DOCS_WITH_BLOCKS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_runnable_block_runs_as_written(doc, tmp_path, request):
    blocks = runnable_blocks(doc.read_text(encoding="utf-8"))
    work = made_run(request, tmp_path) if any("make run" in body for body, _ in blocks) else fresh_copy(tmp_path)
    for number, (body, expected) in enumerate(blocks, 1):
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=work, env=_env(work),
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == expected, (
            f"{doc.name} block {number} exited {done.returncode}, expected {expected}:\n{body}\n"
            f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}")


def test_the_readme_names_every_deliberate_difference_from_the_checker():
    """docs/checker-differences.md has the rules; the README names each, so a
    new difference is not added to the docs alone."""
    text = (REPO / "docs" / "checker-differences.md").read_text(encoding="utf-8")
    table = text.split("## Where mlrepro is deliberately stricter", 1)[1].split("\n\n", 2)[1]
    checks = [line.split("|")[1].strip() for line in table.splitlines()[2:] if line.startswith("|")]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Where mlrepro is stricter than MLCommons' checker", 1)[1].split("\n## ", 1)[0]
    named = [line.split("**")[1] for line in section.splitlines() if line.startswith("- **")]
    assert len(checks) >= 8
    assert named == checks
