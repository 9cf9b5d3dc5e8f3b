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

# ASCII digits only (Python's \d also takes other scripts' digits); shared with
# the bulk path, which applies the same pattern to a whole column.
NUMBER_PATTERN = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"
_NUMBER = re.compile(rf"^{NUMBER_PATTERN}\Z")
_INTEGER = re.compile(r"^[0-9]+(\.0*)?\Z")
_PLATFORM_PART = re.compile(r"^(\d+)[xX](.+)$")
_COUNT_IN_NAME = re.compile(r"\(x(\d+)\)")
PLACEHOLDERS = {"", "todo", "n/a", "na", "none", "null", "-", "tbd"}



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
    """A whole number ("8", "8.0"); never through float, so any length parses."""
    return int(text.split(".", 1)[0]) if _INTEGER.match(text) else None


# Sanity bounds: far above any real system, low enough to catch typos and garbage.
MAX_COUNT = {"accelerators_per_node": 1024, "nodes": 100_000, "total_accelerators": 10_000_000}


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


EXCLUDED_CPU = "CPU-only result: no accelerator to compare"
EXCLUDED_POWER = "power result: not a performance figure"


def exclusion(raw: RawRecord) -> str | None:
    """Real results that are not accelerator performance results: excluded, not rejected."""
    if raw.get("accelerator") is None and raw.get("accelerators_per_node") in (None, "0"):
        return EXCLUDED_CPU
    if raw.fields.get("power") == "true":
        return EXCLUDED_POWER
    return None


# A problem is a finding without its place: (code, field, expected, found, message).
# found None means "what the file holds in that field", filled in by build_row.
Problem = tuple


def build_row(raw: RawRecord, ctx: Context) -> tuple[dict | None, list[Finding]]:
    """Normalise one record. Returns the canonical row, or None with the reasons.

    Each part of the row is decided by a resolver, a pure function of a few
    text fields (cached, and shared with the bulk path of :mod:`pipeline.bulk`).
    """
    get = raw.get
    round_, p1 = resolve_round(get("round"), ctx.round)
    submitter, p2 = resolve_submitter(get("submitter"), ctx.submitter)
    system, p3 = resolve_required("system", get("system"))
    (model, scenario, units), p4 = resolve_benchmark(get("model"), get("scenario"), get("units"))
    value, p5 = resolve_value(get("value"))
    division, p6 = resolve_choice("division", get("division"), rules.choices("division"))
    availability, p7 = resolve_choice("availability", get("availability"),
                                      rules.choices("availability"))
    (accelerator, composition, per_node, nodes, total), p8 = resolve_accelerators(
        get("accelerator"), get("platform"), get("accelerators_per_node"), get("nodes"),
        get("total_accelerators"))
    problems = p1 + p2 + p3 + p4 + p5 + p6 + p7 + p8
    if problems:
        return None, [finding(code, raw.file, raw.place(name), expected,
                              raw.fields.get(name, "<absent>") if got is None else got, message)
                      for code, name, expected, got, message in problems]
    row = {
        "round": round_,
        "submitter": submitter,
        "system": system,
        "system_name": get("system_name"),
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
        "result_id": get("result_id") or ctx.result_id_default,
        "source": f"{raw.file}:{raw.line}" if raw.line else raw.file,
        "submission_version": ctx.submission_version,
    }
    return row, []


def _required(name: str, text: str | None) -> list[Problem]:
    return [] if text is not None else [("missing-value", name, f"a value for {name}", None,
                                         f"{name} is empty")]


@rules.cached(maxsize=4096)
def resolve_round(text: str | None, submission_round: str | None) -> tuple[str | None, list[Problem]]:
    round_ = text or submission_round
    if round_ is None:
        return None, [("missing-value", "round", "a round such as v6.0", "<absent>",
                       "the round is neither in the file nor given by the submission")]
    if not round_.startswith("v"):
        round_ = "v" + round_
    if submission_round and round_ != submission_round:
        return round_, [("round-mismatch", "round", submission_round, round_,
                         "the row's round differs from its submission's round")]
    if round_ not in rules.rounds():
        return round_, [("unknown-round", "round", f"one of {sorted(rules.rounds())}", round_,
                         "unknown round")]
    return round_, []


@rules.cached(maxsize=4096)
def resolve_submitter(text: str | None, submission_submitter: str | None):
    problems = _required("submitter", text)
    if text and submission_submitter and text != submission_submitter:
        problems.append(("submitter-mismatch", "submitter", submission_submitter, text,
                         "the row's submitter differs from its submission's submitter"))
    return text, problems


@rules.cached(maxsize=65536)
def resolve_required(name: str, text: str | None):
    return text, _required(name, text)


@rules.cached(maxsize=4096)
def resolve_benchmark(model_text: str | None, scenario_text: str | None, units: str | None):
    """Benchmark id, scenario and units, checked against schemas/models.yaml."""
    problems = _required("model", model_text)
    model = rules.canonical_model(model_text) if model_text else None
    if model_text and model is None:
        problems.append(("unknown-model", "model", "a benchmark id from schemas/models.yaml",
                         model_text, "unknown model"))
    problems += _required("scenario", scenario_text)
    scenario = rules.canonical_scenario(scenario_text) if scenario_text else None
    if scenario_text and scenario is None:
        problems.append(("unknown-scenario", "scenario", f"one of {list(rules.scenarios())}",
                         scenario_text, "unknown scenario"))
    problems += _required("units", units)
    if model and scenario and units:
        accepted = rules.models()[model].units.get(scenario)
        if accepted is None:
            problems.append(("invalid-choice", "scenario",
                             f"a scenario of {model}: {list(rules.models()[model].scenarios)}",
                             scenario, f"{model} has no {scenario} scenario"))
        elif units not in accepted:
            problems.append(("units-mismatch", "units", " or ".join(accepted), units,
                             f"wrong units for {model} {scenario}"))
    return (model, scenario, units), problems


def resolve_value(text: str | None):
    if text is None:
        return None, _required("value", text)
    value = parse_number(text)
    if value is None:
        code = "malformed-number" if not _NUMBER.match(text) else "invalid-value"
        return None, [(code, "value", "a plain decimal number such as 100282.5", text,
                       "the value is not a plain finite number")]
    if value <= 0:
        return None, [("invalid-value", "value", "a number greater than 0", text,
                       "the value must be positive")]
    return value, []


@rules.cached(maxsize=1024)
def resolve_choice(name: str, text: str | None, allowed: tuple[str, ...]):
    if text is None:
        return None, [("missing-value", name, f"one of {list(allowed)}", None, f"{name} is empty")]
    value = text.lower()
    if value not in allowed:
        return None, [("invalid-choice", name, f"one of {list(allowed)}", text, f"invalid {name}")]
    return value, []


def _count(name: str, text: str | None, required: bool) -> tuple[int | None, list[Problem]]:
    if text is None:
        return None, ([("missing-value", name, "a whole number >= 1", None, f"{name} is empty")]
                      if required else [])
    value = parse_count(text)
    bound = MAX_COUNT[name]
    if value is None or not 1 <= value <= bound:
        code = "malformed-number" if value is None else "invalid-value"
        return None, [(code, name, f"a whole number from 1 to {bound}", text,
                       f"{name} is not a whole number from 1 to {bound}")]
    return value, []


@rules.cached(maxsize=65536)
def resolve_accelerators(text: str | None, platform: str | None, per_node_text: str | None,
                         nodes_text: str | None, total_text: str | None):
    """Canonical accelerator, composition and the true accelerator count.

    The platform id wins when it states counts (``87xMI355X_...``: 87, where
    nodes x per node says 88); then an explicit total; then nodes x per node.
    Returns ((accelerator, composition, per_node, nodes, total), problems).
    """
    per_node, problems = _count("accelerators_per_node", per_node_text, required=True)
    nodes, more = _count("nodes", nodes_text, required=True)
    problems += more
    total_given, more = _count("total_accelerators", total_text, required=False)
    problems += more
    fail = (None, None, per_node, nodes, None)
    if text is None:
        return fail, problems + [("missing-value", "accelerator", "an accelerator name", "<empty>",
                                  "no accelerator (CPU-only results are not compared)")]
    pieces = accelerators_in_name(text)
    unknown = [p for name, _, p in pieces if name is None]
    if unknown:
        return fail, problems + [("unknown-accelerator", "accelerator",
                                  "a name known to schemas/accelerators.yaml", unknown[0],
                                  "unknown accelerator")]
    from_platform = composition_from_platform(platform)
    names = list(dict.fromkeys(name for name, _, _ in pieces))
    if from_platform and set(from_platform) >= set(names):
        counts = from_platform
    elif len(pieces) > 1 and all(c is not None for _, c, _ in pieces):
        counts = {}
        for name, c, _ in pieces:
            counts[name] = counts.get(name, 0) + c
    elif per_node is None or nodes is None:
        return fail, problems
    elif len(names) == 1:
        counts = {names[0]: total_given or per_node * nodes}
    else:
        return fail, problems + [("unknown-accelerator", "accelerator", "accelerator counts per type",
                                  text, "several accelerator types without counts")]
    total = sum(counts.values())
    if per_node is not None and nodes is not None and total > per_node * nodes:
        return fail, problems + [("accelerator-count-mismatch", "total_accelerators",
                                  f"at most nodes x per node = {per_node * nodes}", total,
                                  "more accelerators than the nodes hold")]
    if problems:
        return fail, problems
    return ("+".join(counts), ",".join(f"{k}:{v}" for k, v in counts.items()), per_node, nodes,
            total), []
