"""The README is the user's manual: every command and option of `--help` is
documented in its Commands section, and every command it shows runs, in a copy
of the repository, with exactly the output shown."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from conftest import REPO

from pipeline.cli import cli

README = (REPO / "README.md").read_text(encoding="utf-8")
COMMANDS_SECTION = README.split("## Commands and exit codes", 1)[1].split("\n## ", 1)[0]
MLREPRO = Path(sys.executable).parent / "mlrepro"


def _options(command: click.Command) -> list[str]:
    return sorted({opt for p in command.params if isinstance(p, click.Option)
                   for opt in p.opts + p.secondary_opts})


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_command_and_option_of_help_is_in_the_readme(name):
    command = cli.commands[name]
    assert f"### `mlrepro {name}" in COMMANDS_SECTION, f"no section for `mlrepro {name}`"
    missing = [opt for opt in _options(command) if not re.search(rf"`{re.escape(opt)}[` ,=\]]|{re.escape(opt)}[ ,\]`]", COMMANDS_SECTION)]
    assert not missing, f"`mlrepro {name}` options not in the README's Commands section: {missing}"


def test_every_input_format_choice_is_in_the_readme():
    from pipeline.readers import FORMATS

    for fmt in FORMATS:
        assert f"`{fmt}`" in COMMANDS_SECTION, fmt


def console_blocks(text: str) -> list[list[tuple[str, list[str]]]]:
    """```console blocks as [(command, expected output lines)]."""
    blocks = []
    for body in re.findall(r"```console\n(.*?)```", text, re.DOTALL):
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
        blocks.append(steps)
    return blocks


def _copy(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    work.mkdir()
    for name in ("submissions", "schemas"):
        shutil.copytree(REPO / name, work / name)
    for name in ("params.yaml", "claims.yaml"):
        shutil.copy(REPO / name, work / name)
    shutil.copytree(REPO / "tests" / "data", work / "tests" / "data")
    return work


def test_the_readme_shows_commands():
    assert sum(len(b) for b in console_blocks(README)) >= 4


@pytest.mark.parametrize("index", range(len(console_blocks(README))))
def test_every_command_shown_in_the_readme_runs_with_the_output_shown(tmp_path, index):
    work = _copy(tmp_path)
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("MLREPRO_SCHEMAS", None)
    for command, expected in console_blocks(README)[index]:
        args = command.split()
        assert args[0] == "mlrepro", command
        done = subprocess.run([str(MLREPRO), *args[1:]], cwd=work, env=env, capture_output=True,
                              text=True, check=False)
        shown = (done.stdout + done.stderr).rstrip("\n").splitlines()
        assert shown == expected, f"$ {command}\n" + "\n".join(shown)
