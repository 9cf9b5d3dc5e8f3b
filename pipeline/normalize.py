"""From a reader's raw record to a canonical row, or to a rejection with reasons.

Readers only know their format: they hand over a :class:`RawRecord` of text
fields and where each field sits in the file. Everything that is the same for
every format (numbers, names, units, accelerator counts) is decided here, once.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from . import rules
from .findings import Finding, finding

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_INTEGER = re.compile(r"^\d+(\.0*)?$")
_PLATFORM_PART = re.compile(r"^(\d+)[xX](.+)$")
_COUNT_IN_NAME = re.compile(r"\(x(\d+)\)")
PLACEHOLDERS = {"", "todo", "n/a", "na", "none", "null", "-", "tbd"}

DIVISIONS = ("closed", "open", "network")
AVAILABILITIES = ("available", "preview", "rdi")


@dataclass
class RawRecord:
    """One result as a reader found it: text fields and their places."""

    file: str                       # path as shown in findings and in `source`
    line: int | None                # 1-based line of the record, when it has one
    fields: dict[str, str]          # canonical field name -> text as read
    places: dict[str, str] = field(default_factory=dict)  # field -> "line 4, column Result"

    def place(self, name: str) -> str:
        if name in self.places:
            return self.places[name]
        return f"line {self.line}, field {name}" if self.line else f"field {name}"

    def get(self, name: str) -> str | None:
        value = self.fields.get(name)
        if value is None:
            return None
        value = str(value).strip()
        return None if value.lower() in PLACEHOLDERS else value


@dataclass(frozen=True)
class Context:
    """What the submission (not the file) says about its rows."""

    status: str                      # verified | post-deadline
    round: str | None = None         # the submission's round, when known
    submitter: str | None = None     # the submission's submitter, when known
    submission_version: int | None = None
    result_id_default: str | None = None


def parse_number(text: str) -> float | None:
    """A plain decimal number, or None. No thousands separators, no commas,
    no local spaces: '100 282' and '103,48' are ambiguous and refused."""
    if not _NUMBER.match(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def parse_count(text: str) -> int | None:
    return int(float(text)) if _INTEGER.match(text) else None


def composition_from_platform(platform: str | None) -> dict[str, int]:
    """Accelerator counts stated by a platform id such as
    ``87xMI355X_22xEPYC_9575F`` (-> {MI355X: 87}). Empty when it states none."""
    counts: dict[str, int] = {}
    for part in (platform or "").split("_"):
        m = _PLATFORM_PART.match(part)
        if not m:
            continue
        name = rules.canonical_accelerator(m.group(2))
        if name:
            counts[name] = counts.get(name, 0) + int(m.group(1))
    return counts


def accelerators_in_name(text: str) -> list[tuple[str | None, int | None, str]]:
    """Split a free-text accelerator field into (canonical, count, piece).

    ``AMD Instinct MI300X 192GB HBM3 (x32), AMD Instinct MI325X 256GB HBM3e (x16)``
    gives two pieces with counts; a plain name gives one piece without count.
    """
    pieces = [p.strip() for p in text.split(",") if p.strip()] if "(x" in text else [text]
    out = []
    for piece in pieces:
        m = _COUNT_IN_NAME.search(piece)
        out.append((rules.canonical_accelerator(piece), int(m.group(1)) if m else None, piece))
    return out


def build_row(raw: RawRecord, ctx: Context) -> tuple[dict | None, list[Finding]]:
    """Normalise one record. Returns the canonical row, or None with the reasons."""
    found: list[Finding] = []

    def bad(code: str, name: str, expected: object, got: object, message: str) -> None:
        found.append(finding(code, raw.file, raw.place(name), expected, got, message))

    def required(name: str) -> str | None:
        value = raw.get(name)
        if value is None:
            bad("missing-value", name, f"a value for {name}", raw.fields.get(name, "<absent>"),
                f"{name} is empty")
        return value

    # round
    round_ = raw.get("round") or ctx.round
    if round_ is None:
        bad("missing-value", "round", "a round such as v6.0", "<absent>",
            "the round is neither in the file nor given by the submission")
    else:
        if not round_.startswith("v"):
            round_ = "v" + round_
        if ctx.round and round_ != ctx.round:
            bad("round-mismatch", "round", ctx.round, round_,
                "the row's round differs from its submission's round")
        elif round_ not in rules.rounds():
            bad("unknown-round", "round", f"one of {sorted(rules.rounds())}", round_,
                "unknown round")

    submitter = required("submitter")
    if submitter and ctx.submitter and submitter != ctx.submitter:
        bad("submitter-mismatch", "submitter", ctx.submitter, submitter,
            "the row's submitter differs from its submission's submitter")
    system = required("system")

    # model, scenario, units
    model_text = required("model")
    model = rules.canonical_model(model_text) if model_text else None
    if model_text and model is None:
        bad("unknown-model", "model", "a benchmark id from schemas/models.yaml", model_text,
            "unknown model")
    scenario_text = required("scenario")
    scenario = rules.canonical_scenario(scenario_text) if scenario_text else None
    if scenario_text and scenario is None:
        bad("unknown-scenario", "scenario", f"one of {list(rules.SCENARIOS)}", scenario_text,
            "unknown scenario")
    units = required("units")
    if model and scenario and units:
        accepted = rules.models()[model].units.get(scenario)
        if accepted is None:
            bad("invalid-choice", "scenario", f"a scenario of {model}: {list(rules.models()[model].scenarios)}",
                scenario, f"{model} has no {scenario} scenario")
        elif units not in accepted:
            bad("units-mismatch", "units", " or ".join(accepted), units,
                f"wrong units for {model} {scenario}")

    # value
    value = None
    value_text = required("value")
    if value_text is not None:
        value = parse_number(value_text)
        if value is None:
            code = "malformed-number" if not _NUMBER.match(value_text) else "invalid-value"
            bad(code, "value", "a plain decimal number such as 100282.5", value_text,
                "the value is not a plain finite number")
        elif value <= 0:
            bad("invalid-value", "value", "a number greater than 0", value_text,
                "the value must be positive")
            value = None

    # division and availability
    division = _choice(raw, "division", DIVISIONS, bad)
    availability = _choice(raw, "availability", AVAILABILITIES, bad)

    # accelerators and counts
    per_node = _count(raw, "accelerators_per_node", bad, required=True)
    nodes = _count(raw, "nodes", bad, required=True)
    total_given = _count(raw, "total_accelerators", bad, required=False)
    accelerator, composition, total = _accelerators(raw, per_node, nodes, total_given, bad)

    if found:
        return None, found
    row = {
        "round": round_,
        "submitter": submitter,
        "system": system,
        "system_name": raw.get("system_name"),
        "accelerator": accelerator,
        "composition": composition,
        "accelerators_per_node": per_node,
        "nodes": nodes,
        "total_accelerators": total,
        "model": model,
        "scenario": scenario,
        "value": value,
        "units": units,
        "division": division,
        "availability": availability,
        "status": ctx.status,
        "result_id": raw.get("result_id") or ctx.result_id_default,
        "source": f"{raw.file}:{raw.line}" if raw.line else raw.file,
        "submission_version": ctx.submission_version,
    }
    return row, found


def _choice(raw: RawRecord, name: str, allowed: tuple[str, ...], bad) -> str | None:
    text = raw.get(name)
    if text is None:
        bad("missing-value", name, f"one of {list(allowed)}", raw.fields.get(name, "<absent>"),
            f"{name} is empty")
        return None
    value = text.lower()
    if value not in allowed:
        bad("invalid-choice", name, f"one of {list(allowed)}", text, f"invalid {name}")
        return None
    return value


def _count(raw: RawRecord, name: str, bad, required: bool) -> int | None:
    text = raw.get(name)
    if text is None:
        if required:
            bad("missing-value", name, "a whole number >= 1", raw.fields.get(name, "<absent>"),
                f"{name} is empty")
        return None
    value = parse_count(text)
    if value is None or value < 1:
        code = "malformed-number" if value is None else "invalid-value"
        bad(code, name, "a whole number >= 1", text, f"{name} is not a whole number >= 1")
        return None
    return value


def _accelerators(raw, per_node, nodes, total_given, bad):
    """Canonical accelerator, composition and the true accelerator count.

    The platform id wins when it states counts (``87xMI355X_...``: 87, where
    nodes x per node says 88); then an explicit total; then nodes x per node.
    """
    text = raw.get("accelerator")
    if text is None:
        bad("missing-value", "accelerator", "an accelerator name", "<empty>",
            "no accelerator (CPU-only results are not compared)")
        return None, None, None
    pieces = accelerators_in_name(text)
    unknown = [p for name, _, p in pieces if name is None]
    if unknown:
        bad("unknown-accelerator", "accelerator", "a name known to schemas/accelerators.yaml",
            unknown[0], "unknown accelerator")
        return None, None, None
    from_platform = composition_from_platform(raw.get("platform"))
    names = list(dict.fromkeys(name for name, _, _ in pieces))
    if from_platform and set(from_platform) >= set(names):
        counts = from_platform
    elif len(pieces) > 1 and all(c is not None for _, c, _ in pieces):
        counts = {}
        for name, c, _ in pieces:
            counts[name] = counts.get(name, 0) + c
    elif per_node is None or nodes is None:
        return None, None, None
    else:
        counts = {names[0]: total_given or per_node * nodes} if len(names) == 1 else {}
        if not counts:
            bad("unknown-accelerator", "accelerator", "accelerator counts per type", text,
                "several accelerator types without counts")
            return None, None, None
    total = sum(counts.values())
    if per_node is not None and nodes is not None and total > per_node * nodes:
        bad("accelerator-count-mismatch", "total_accelerators",
            f"at most nodes x per node = {per_node * nodes}", total,
            "more accelerators than the nodes hold")
        return None, None, None
    accelerator = "+".join(counts)
    composition = ",".join(f"{k}:{v}" for k, v in counts.items())
    return accelerator, composition, total
