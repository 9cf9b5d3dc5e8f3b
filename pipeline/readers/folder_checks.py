"""Checks of a result's companion files (accuracy.txt, compliance tests, the
system description), accepting what MLCommons' checker accepts
(docs/checker-differences.md lists where mlrepro differs).
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.core import textcheck
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.core.vocabulary import Severity
from pipeline.readers.base import inside, read_text
from pipeline.readers.round_rules import AccuracyTarget, Formats, RoundRules

MAX_SMALL_FILE = 1024 * 1024   # accuracy.txt and verify_*.txt are a few hundred bytes
TEST01, VERIFY_ACCURACY = "TEST01", "verify_accuracy.txt"
# TEST01 in non-deterministic mode: the accuracy of the baseline and of the compliance run
TEST01_ACCURACY_FILES = ("baseline_accuracy.txt", "compliance_accuracy.txt")


def missing_file(where: Source, what: str) -> Finding:
    return located("missing-file", where, f"{what} at this path", "no such file", f"missing {what}")


def check_accuracy(path: str | Path, where: Source, targets: tuple[AccuracyTarget, ...],
                   formats: Formats) -> list[Finding]:
    """Every target metric of accuracy.txt within its bounds (inclusive)."""
    text, found = read_text(path, where, MAX_SMALL_FILE, checks=textcheck.NONE)
    if text is None:   # read first, asked why after: one system call less for a file that is there
        return [missing_file(where, "accuracy.txt")] if not os.path.isfile(path) else found
    lines = text.splitlines()
    out: list[Finding] = []
    for target in targets:
        value, line = _metric(lines, formats.patterns.get(target.metric))
        if value is None and line is None and target.low is None:
            # an upper limit only: MLCommons applies it when accuracy.txt states the metric
            out.append(located("limit-metric-unstated", where.at(key=target.metric),
                               target.expected(), "<absent>",
                               f"accuracy.txt does not state {target.metric}: its upper limit is not checked",
                               severity=Severity.WARNING))
        elif value is None:
            out.append(located("missing-metric", where.at(line=line, key=target.metric),
                               target.expected(), "<absent>" if line is None else "<not a number>",
                               f"accuracy.txt does not state {target.metric}"))
        elif (side := target.failed_bound(value)) is not None:
            code, why = ("accuracy-above-limit", "over the model's upper limit") if side == "high" \
                else ("accuracy-below-target", "under the model's target")
            out.append(located(code, where.at(line=line, key=target.metric),
                               target.expected(), f"{value:g}", f"{target.metric} is {why}"))
    return out


def _metric(lines: list[str], pattern) -> tuple[float | None, int | None]:
    if pattern is None:
        return None, None
    for number, line in enumerate(lines, 1):
        m = pattern.match(line)
        if m:
            try:
                return float(m.group(1)), number
            except (ValueError, IndexError):
                return None, number
    return None, None


def check_compliance(folder_of, tests: tuple[str, ...], rules: RoundRules,
                     targets: tuple[AccuracyTarget, ...] = (), formats: Formats | None = None,
                     model: str | None = None) -> list[Finding]:
    """Each required test folder present and its verify files report a pass;
    ``folder_of(test)``: (path, Source) of the test's folder."""
    out: list[Finding] = []
    for test in tests:
        folder, where = folder_of(test)
        if not os.path.isdir(folder):
            out.append(located("compliance-missing", where,
                               f"a {test} folder (where the tree keeps its tests)", "no such folder",
                               f"required compliance test {test} is missing"))
            continue
        for name, needed in rules.compliance_pass.get(test, {}).items():
            found = _verify(os.path.join(folder, name), name, inside(where, name), test, needed)
            if found and test == TEST01 and name == VERIFY_ACCURACY and formats is not None \
                    and os.path.isdir(os.path.join(folder, "accuracy")):
                found = _nondeterministic(folder, where, targets, formats, rules, model or "", found)
            out.extend(found)
    return out


def _nondeterministic(folder: str, where: Source, targets, formats: Formats, rules: RoundRules,
                      model: str, failed: list[Finding]) -> list[Finding]:
    """TEST01 in non-deterministic mode passes when its baseline and compliance
    accuracy agree within the round's delta; else FAILED and why this mode fails too."""
    metrics = list(dict.fromkeys(t.metric for t in targets if t.low is not None))   # targets, not limits
    values: dict[str, dict[str, float | None]] = {}
    for name in TEST01_ACCURACY_FILES:
        path, at = os.path.join(folder, "accuracy", name), inside(where, f"accuracy/{name}")
        text, found = read_text(path, at, MAX_SMALL_FILE, checks=textcheck.NONE)
        if text is None:
            return failed + (found or [missing_file(at, f"TEST01's {name}")])
        lines = text.splitlines()
        values[name] = {m: _metric(lines, formats.patterns.get(m))[0] for m in metrics}
    out = []
    baseline, compliance = (values[n] for n in TEST01_ACCURACY_FILES)
    for metric in metrics:
        allowed = rules.accuracy_delta_pct(model, metric)
        base, comp = baseline[metric], compliance[metric]
        if not base or not comp:
            out.append(located("compliance-failed", inside(where, "accuracy").at(key=metric),
                               f"{metric} in both {' and '.join(TEST01_ACCURACY_FILES)}", "<absent or 0>",
                               "TEST01 reports no pass, deterministic or not"))
        elif abs(1 - base / comp) * 100 > allowed:
            out.append(located("compliance-failed", inside(where, "accuracy").at(key=metric),
                               f"baseline within {allowed:g}% of the compliance run",
                               f"{base:g} against {comp:g} ({abs(1 - base / comp) * 100:.3g}%)",
                               "TEST01 reports no pass, deterministic or not"))
    return failed + out if out else []


def _verify(path: str, name: str, where: Source, test: str,
            needed: tuple[tuple[str, ...], ...]) -> list[Finding]:
    text, found = read_text(path, where, MAX_SMALL_FILE, checks=textcheck.NONE)
    if text is None:   # read first, asked why after (as check_accuracy)
        return found if os.path.isfile(path) else [located("compliance-missing", where, f"{test}'s {name}",
                                                           "no such file", f"{test} has no {name}")]
    lines = [line.strip() for line in text.splitlines()]
    out = []
    for alternatives in needed:
        if any(want in lines for want in alternatives):
            continue
        head = alternatives[0].split(":")[0]
        seen = next(((n, line) for n, line in enumerate(lines, 1) if line.startswith(head)), None)
        out.append(located("compliance-failed", where.at(line=seen[0] if seen else None),
                           " or ".join(alternatives), seen[1] if seen else "<absent>",
                           f"{test} does not report a pass"))
    return out


def check_system(facts: dict, where: Source, rules: RoundRules, submitter: str,
                 division: str | None) -> list[Finding]:
    out: list[Finding] = []
    missing = [f for f in rules.system_fields if f not in facts]
    if missing:
        out.append(located("missing-system-field", where.at(key=missing[0]),
                           f"the fields {rules.round} requires", f"missing {missing}",
                           f"the system description lacks {len(missing)} required field(s)"))
    if str(facts.get("submitter", "")).strip() != submitter:
        out.append(located("path-mismatch", where.at(key="submitter"), f"{submitter} (the folder)",
                           _text(facts.get("submitter")), "the system's submitter is not its folder's"))
    if division is not None and str(facts.get("division", "")).strip().lower() != division.lower():
        out.append(located("path-mismatch", where.at(key="division"), f"{division} (the folder)",
                           _text(facts.get("division")), "the system's division is not its folder's"))
    return out


def _text(value: object) -> str:
    return "<absent>" if value is None else str(value)
