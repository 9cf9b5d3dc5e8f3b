"""`mlrepro report`: one self-contained HTML file, readable offline and printable.

The first screen answers (:mod:`.answers`); the details follow per round
(:mod:`.sections`, :mod:`.claims`), then the validation of the two sets
(:mod:`.validation`) and the inputs. Inline CSS and a few lines of inline
script (sorting and filtering tables); nothing is fetched from anywhere and
every text is escaped. Verified and post-deadline (unverified) results sit
in separate sections; every unverified figure carries the MLCommons label,
and the section that shows it carries the MLCommons sentence.

This is the only module that draws plots. It also returns the deviation
table that `dvc plots` renders (see ``plots:`` in dvc.yaml).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import pandas as pd

from pipeline.core.model import VERIFIED
from pipeline.core.rules import Rules
from pipeline.output.report import answers, validation
from pipeline.output.report.html import TITLE, Table, page, wrap
from pipeline.output.report.load import NO_ROUND, Data, Inputs, load
from pipeline.output.figures import count, tolerance
from pipeline.output.report.sections import (DEVIATION_COLUMNS, anchor, deviation_frame, record_section,
                                              round_section, round_title, tolerance_pct)

__all__ = ["DEVIATION_COLUMNS", "TITLE", "Document", "Inputs", "build"]


@dataclass
class Document:
    html: str
    deviation: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    except OSError:
        return "missing"


def _inputs(inputs: Inputs) -> str:
    table = Table("inputs", ["input", "path", "sha256 (first 12)"], searchable=False)
    for name in ("results", "agreement", "rejected", "versions", "scaling", "claims", "validation"):
        path = getattr(inputs, name)
        if path is not None:
            table.add([name, wrap(path.as_posix()), _digest(path)])
    return f'<section id="inputs"><h2>Inputs</h2>{table.html()}</section>'


def _lead(data: Data) -> str:
    refs = sorted(set(data.agreement.get("reference_submitter", pd.Series(dtype=str)).dropna()))
    post = int((data.results["status"] != VERIFIED).sum())
    return (f"Reference: {escape(', '.join(refs) or 'the reference submitter')} · partners: submitters with "
            f"results on {escape(data.reference_vendor)} accelerators · tolerance "
            f"{tolerance(tolerance_pct(data.agreement))} (inclusive) · "
            f"{count(len(data.results), 'accepted result')} ({post} unverified)")


def _nav(rounds: list[str]) -> str:
    items = [f'<li><a href="#{anchor("round", r)}">{round_title(r)}</a></li>' for r in rounds]
    items += ['<li><a href="#record">Partners\' record across rounds</a></li>',
              '<li><a href="#validation">Validation (Great Expectations)</a></li>',
              '<li><a href="#inputs">Inputs</a></li>']
    return f'<nav><h2>Details</h2><ul>{"".join(items)}</ul></nav>'


def build(rules: Rules, inputs: Inputs, out: Path) -> Document:
    """The report for the pipeline's outputs (scaling, claims and validation
    when given)."""
    data = load(rules, inputs)
    rounds = data.rounds()
    body = [answers.section(data, [r for r in rounds if r != NO_ROUND]), _nav(rounds)]
    body += [round_section(data, r) for r in rounds]
    body.append(record_section(data))
    body += [validation.section(data, inputs.data_docs, out), _inputs(inputs)]
    return Document(page(_lead(data), body), deviation_frame(data.agreement), data.notes)
