"""The last line of a stage and of `make run`: the pipeline's own outcome
apart from the data's. A stage that records findings exits 0 so that `dvc
repro` goes on; without this line its `error:` lines read as the tool failing.

``stage_line`` is printed by each stage command (``--exit-zero``);
``pipeline_line`` by `make run` (bin/restore-lock) after `dvc repro`
succeeded, from the outputs the stages wrote, so that a no-op run says the
same as the run that wrote them. The words are the finding codes and the
verdicts, as every other output names them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pipeline.core.model import AGREE, DEVIATES
from pipeline.core.vocabulary import Severity
from pipeline.output.figures import count

WHY_ZERO = "exit 0 because stages record findings; the gate is what fails a build"
# the outputs that hold findings (a list, or a report's "findings"), as dvc.yaml names them
FINDINGS_FILES = ("data/findings.json", "audit/validation.json", "audit/claims.json", "audit/scaling.json")


def _data(counts: Counter, errors: int) -> str:
    if not counts:
        return "data: no findings"
    codes = ", ".join(f"{code} {n}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"data: {count(sum(counts.values()), 'finding')} ({count(errors, 'error')}): {codes}"


def stage_line(report, command: str) -> str:
    """Counted, not listed: a report over a million rows builds no finding for it."""
    where = "findings above; " if report.finding_count() else ""
    return (f"pipeline: ok (stage {command}); {_data(report.code_counts(), report.error_count())} "
            f"({where}{WHY_ZERO})")


def _findings_in(path: Path) -> list:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return data if isinstance(data, list) else list(data.get("findings") or [])


def pipeline_line(root: Path, stages: int) -> str:
    paths = [root / p for p in FINDINGS_FILES] + sorted((root / "audit" / "crosscheck").glob("*.json"))
    findings = [f for path in paths for f in _findings_in(path)]
    try:
        agreement = json.loads((root / "data" / "agreement_summary.json").read_text(encoding="utf-8"))
        compared = f"partner results: {agreement.get(AGREE, 0)} {AGREE}, {agreement.get(DEVIATES, 0)} {DEVIATES}; "
    except (OSError, ValueError):
        compared = ""
    data = _data(Counter(f["code"] for f in findings), sum(f["severity"] == Severity.ERROR for f in findings))
    return (f"pipeline: ok ({count(stages, 'stage')}); {compared}{data} "
            f"(the stages' findings above or, when they were up to date, in their outputs and "
            f"reports/index.html; {WHY_ZERO})")
