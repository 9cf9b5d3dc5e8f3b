"""`mlrepro report`: one self-contained HTML file, readable offline and printable.

The first screen answers (:mod:`.answers`); the details follow per round
(:mod:`.sections`), then the validation (:mod:`.validation`) and the inputs:
values computed here, drawn by the autoescaped templates of ``templates/``.
Nothing is fetched from anywhere. Every unverified figure carries the
MLCommons label. It also returns the deviation table of `dvc plots`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.core.model import DEFAULT_TOLERANCE_PCT, VERIFIED
from pipeline.core.rules import Rules
from pipeline.output.report import answers, validation
from pipeline.output.report.html import Row, render
from pipeline.output.report.load import NO_ROUND, Data, Inputs, load
from pipeline.output.report.sections import deviation_frame, record_view, round_view, tolerance_pct

__all__ = ["Document", "Inputs", "build"]


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


def _inputs(inputs: Inputs) -> list[Row]:
    return [Row({"name": name, "path": path.as_posix(), "digest": _digest(path)})
            for name in ("results", "agreement", "rejected", "versions", "scaling", "claims", "validation")
            if (path := getattr(inputs, name)) is not None]


def _lead(data: Data, tolerance: float) -> dict:
    return {"references": sorted(set(data.agreement.get("reference_submitter", pd.Series(dtype=str)).dropna())),
            "vendor": data.reference_vendor, "tolerance": tolerance, "results": len(data.results),
            "unverified": int((data.results["status"] != VERIFIED).sum())}


def build(rules: Rules, inputs: Inputs, out: Path, tolerance: float = DEFAULT_TOLERANCE_PCT) -> Document:
    """The report of the pipeline's outputs; ``tolerance`` is shown when no agreement row states one."""
    data = load(rules, inputs)
    tolerance = tolerance_pct(data.agreement, tolerance)
    rounds = data.rounds()
    view = {"lead": _lead(data, tolerance), "answers": answers.view(data, [r for r in rounds if r != NO_ROUND]),
            "rounds": [round_view(data, r, tolerance) for r in rounds], "record": record_view(data, tolerance),
            "validation": validation.view(data, inputs.data_docs, out), "inputs": _inputs(inputs)}
    return Document(render("report.html.j2", view=view), deviation_frame(data.agreement), data.notes)
