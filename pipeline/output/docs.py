"""The reference pages that are generated, never hand-written: docs/cli.md
from the click commands (each command's ``--help`` as the terminal shows it)
and docs/findings.md from the findings registry. tests/test_docs.py fails
when either page differs from what this module writes; ``make docs``
rewrites both."""

from __future__ import annotations

import click

from pipeline.core.findings import CODES
from pipeline.core.vocabulary import FINDING_VERDICTS, KINDS

WIDTH = 100
CLI_PAGE = "cli.md"
FINDINGS_PAGE = "findings.md"


def _context(command: click.Command, name: str, parent: click.Context | None) -> click.Context:
    """The context the command's ``--help`` runs in (its settings, the parent's inherited)."""
    settings = {"terminal_width": WIDTH, "max_content_width": WIDTH, **command.context_settings}
    return click.Context(command, info_name=name, parent=parent, **settings)


def _help(command: click.Command, name: str, parent: click.Context | None) -> str:
    return command.get_help(_context(command, name, parent))


def cli_reference(group: click.Group, prog: str = "mlrepro") -> str:
    """docs/cli.md: the program's help, then each command's, by name."""
    root = _context(group, prog, None)
    out = ["# Command reference", "",
           f"Generated from the commands themselves (`make docs`); `{prog} COMMAND --help` prints the same.", "",
           "```text", _help(group, prog, None), "```", "", "## Commands", ""]
    for name in group.list_commands(root):
        command = group.get_command(root, name)
        if command is None or command.hidden:
            continue
        out += [f"### `{prog} {name}`", "", "```text", _help(command, name, root), "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def findings_reference() -> str:
    """docs/findings.md: every finding code and what it means."""
    out = ["# Finding codes", "",
           "Generated from the findings registry (`pipeline/core/findings.py`, `make docs`). A code is a",
           "contract: tools and tests match on it, so a released code is renamed only to end a collision",
           "of words (`claim-no-reference`, `reference-broken`). Every finding names the file, the place",
           "in it (line, row, column or key), what was expected and what was found; `error` findings fail",
           "a check, `warning` findings are noted.", "",
           "| code | meaning |", "| --- | --- |"]
    out += [f"| `{code}` | {meaning.replace('|', '&#124;')} |" for code, meaning in sorted(CODES.items())]
    out += ["", "## Findings and the verdicts they report", "",
            "A finding is the located reason of a verdict: where a finding code and a verdict name one",
            "outcome in two kinds of word, this is the map (`pipeline/core/vocabulary.py`).", "",
            "| finding | verdict | said as |", "| --- | --- | --- |"]
    out += [f"| `{code}` | `{verdict.code}` ({type(verdict).__name__}) | {verdict.label} |"
            for code, verdict in sorted(FINDING_VERDICTS.items())]
    out += ["", "## Words", "",
            "Every verdict, status, outcome and severity: its code (JSON, CSV, `--verdict`) and its label",
            "(text, markdown, JUnit, the HTML report).", "",
            "| kind | code | label |", "| --- | --- | --- |"]
    out += [f"| {kind.__name__} | `{w.code}` | {w.label} |" for kind in KINDS for w in kind]
    return "\n".join(out) + "\n"


def pages(group: click.Group) -> dict[str, str]:
    """File name under docs/ -> its generated text."""
    return {CLI_PAGE: cli_reference(group), FINDINGS_PAGE: findings_reference()}
