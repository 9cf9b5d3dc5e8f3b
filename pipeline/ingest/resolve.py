"""The decisions that make a canonical row, one resolver per part of the row.

Each resolver is a pure function of a few text fields (already stripped,
placeholders as None) and of what the submission says (its round,
submitter, whether its names are authoritative). It returns the part's
values and its problems: a problem is a finding without its place,
``(code, field, expected, found, message)``, with ``"warning"`` as a sixth
element for one that does not reject the row; ``found`` None means "what the
file holds in that field". :mod:`pipeline.ingest.normalise` places them and
asks each resolver once per distinct input.
"""

from __future__ import annotations

import math
import re

from pipeline.core import rules
from pipeline.core.formulas import PLAUSIBLE_VALUE, plausible

# ASCII digits only (Python's \d also takes other scripts' digits)
NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")
_INTEGER = re.compile(r"^[0-9]+(\.0*)?\Z")
_PLATFORM_PART = re.compile(r"^(\d+)[xX](.+)$")
_COUNT_IN_NAME = re.compile(r"\(x(\d+)\)")
# a float that is not finite, as Python, JSON writers and spreadsheets spell it
_NOT_FINITE = re.compile(r"[+-]?(nan|inf|infinity)\Z", re.IGNORECASE)



def parse_number(text: str) -> float | None:
    """A plain decimal number, or None. No thousands separators, no commas,
    no local spaces: '100 282' and '103,48' are ambiguous and refused."""
    if not NUMBER.match(text):
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
    return dict(sorted(counts.items()))


_PIECE_SEPARATOR = re.compile(r",|\s+and\s+")
_FORM_FACTOR = re.compile(r"(?<![a-z0-9])(SXM|PCIe|NVL)(?![a-z])", re.IGNORECASE)
_MEMORY = re.compile(r"(?<![0-9.])(\d{2,4})\s*GB?(?![a-z0-9])", re.IGNORECASE)
_SLUG = re.compile(r"[^A-Za-z0-9.\-]+")


def accelerators_in_name(text: str) -> list[tuple[str | None, int | None, str]]:
    """Split a free-text accelerator field into (canonical, count, piece).

    ``AMD Instinct MI300X 192GB HBM3 (x32), AMD Instinct MI325X 256GB HBM3e (x16)``
    (or the checker's ``... (x8) and ... (x8)``) gives two pieces with counts; a
    plain name gives one piece without count.
    """
    pieces = [p.strip() for p in _PIECE_SEPARATOR.split(text) if p.strip()] if "(x" in text else [text]
    out = []
    for piece in pieces:
        m = _COUNT_IN_NAME.search(piece)
        out.append((rules.canonical_accelerator(piece), int(m.group(1)) if m else None, piece))
    return out


def unregistered_accelerator(piece: str) -> str:
    """The name an accelerator the registry lacks gets, from the published text:
    ``NVIDIA GB10 (x2)`` -> ``NVIDIA-GB10``."""
    return _SLUG.sub("-", _COUNT_IN_NAME.sub("", piece)).strip("-.") or "unregistered"


def variant_of(family: str, piece: str) -> str:
    """The accelerator as published, beyond its family: form factor (SXM, PCIe,
    NVL) and memory size. ``NVIDIA H200-NVL-141GB`` -> ``H200 NVL 141GB``;
    ``AMD Instinct MI355X 288GB HBM3e`` -> ``MI355X 288GB``."""
    parts = [family]
    form = _FORM_FACTOR.search(piece)
    if form:
        parts.append({"sxm": "SXM", "pcie": "PCIe", "nvl": "NVL"}[form.group(1).lower()])
    memory = _MEMORY.search(_COUNT_IN_NAME.sub("", piece))
    if memory:
        parts.append(f"{int(memory.group(1))}GB")
    return " ".join(parts)


Problem = tuple


@rules.cached(maxsize=4096)
def used_model(text: str | None, model: str) -> str:
    """The model the submitter ran: the benchmark id when the source names none
    or one of its spellings (``llama3_1-8b``), else the published name
    (``llama3_1-405b_finetuned``, ``llama3_1-70b-fp8_dyn``)."""
    if not text:
        return model
    return rules.canonical_model(text) or text


def errors(problems: list[Problem]) -> bool:
    """Whether any problem is an error (a warning is a 6-tuple ending in "warning")."""
    return any(len(p) < 6 or p[5] != "warning" for p in problems)


def _required(name: str, text: str | None) -> list[Problem]:
    return [] if text is not None else [("missing-value", name, f"a value for {name}", None,
                                         f"{name} is empty")]


def round_name(text: str | None, submission_round: str | None) -> str | None:
    """The round a row names (``6.0`` -> ``v6.0``), else its submission's."""
    round_ = text or submission_round
    if round_ is not None and not round_.startswith("v"):
        round_ = "v" + round_
    return round_


@rules.cached(maxsize=4096)
def resolve_round(text: str | None, submission_round: str | None) -> tuple[str | None, list[Problem]]:
    round_ = round_name(text, submission_round)
    if round_ is None:
        return None, [("missing-value", "round", "a round such as v6.0", "<absent>",
                       "the round is neither in the file nor given by the submission")]
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
def resolve_benchmark(model_text: str | None, scenario_text: str | None, units: str | None,
                      round_: str | None = None, authoritative: bool = False,
                      used_text: str | None = None):
    """Benchmark id, scenario and units: the id from schemas/models.yaml; the
    scenario and units from the round's rules (schemas/rules/<round>.yaml), or
    from every round's when the round is unknown.

    ``authoritative``: the names come from a table MLCommons published; a model
    the registry lacks keeps its published name and units (warning
    ``unregistered-name``) instead of rejecting the row, and so does a model
    the round's rules do not list, and the units of a result whose used model
    is another model than the benchmark (v4.1 open division:
    ``neuralmagic_Llama-2-7b-chat-hf-FP8`` under llama2-70b-99.9)."""
    problems = _required("model", model_text)
    model = rules.canonical_model(model_text) if model_text else None
    unregistered = False
    if model_text and model is None:
        if authoritative:
            model, unregistered = model_text, True
            problems.append(("unregistered-name", "model", "a benchmark id from schemas/models.yaml",
                             model_text, "model not in the registry: kept with the published "
                             "table's name and units", "warning"))
        else:
            problems.append(("unknown-model", "model", "a benchmark id from schemas/models.yaml",
                             model_text, "unknown model"))
    problems += _required("scenario", scenario_text)
    scenario = rules.canonical_scenario(scenario_text) if scenario_text else None
    if scenario_text and scenario is None:
        problems.append(("unknown-scenario", "scenario", f"one of {list(rules.scenarios())}",
                         scenario_text, "unknown scenario"))
    problems += _required("units", units)
    benchmarks = rules.round_models(round_) if round_ in rules.rounds() else None
    if model and not unregistered and benchmarks is not None and model not in benchmarks:
        problems.append(("model-not-in-round", "model", f"a benchmark of {round_}: {sorted(benchmarks)}",
                         model_text, f"{model} is not a benchmark of {round_} (schemas/rules/{round_}.yaml)")
                        + (("warning",) if authoritative else ()))
        if not authoritative:
            return (model, scenario, units), problems
        benchmarks = None
    bench = (benchmarks or rules.models())[model] if model and not unregistered else None
    if bench and scenario and units:
        where = round_ if benchmarks is not None else "any round"
        accepted = bench.units.get(scenario)
        if accepted is None:
            problems.append(("invalid-choice", "scenario",
                             f"a scenario of {model} in {where}: {list(bench.scenarios)}",
                             scenario, f"{model} has no {scenario} scenario in {where}"))
        elif units not in accepted and authoritative and used_text and \
                rules.canonical_model(used_text) != model:
            problems.append(("units-mismatch", "units", " or ".join(accepted), units,
                             f"units not those of {model} {scenario} in {where}: the published "
                             f"table's units are kept (the model used is {used_text})", "warning"))
        elif units not in accepted:
            problems.append(("units-mismatch", "units", " or ".join(accepted), units,
                             f"wrong units for {model} {scenario} in {where}"))
    return (model, scenario, units), problems


def resolve_value(text: str | None):
    if text is None:
        return None, _required("value", text)
    value = parse_number(text)
    low, high = PLAUSIBLE_VALUE
    if value is None and (NUMBER.match(text) or _NOT_FINITE.match(text)):   # 1e999, inf, nan
        return None, [("invalid-value", "value", f"a number from {low:g} to {high:g}", text,
                       "the value is not a finite number")]
    if value is None:
        return None, [("malformed-number", "value", "a plain decimal number such as 100282.5", text,
                       "the value is not a plain finite number")]
    if value <= 0:
        return None, [("invalid-value", "value", "a number greater than 0", text,
                       "the value must be positive")]
    if not plausible(value):
        return None, [("invalid-value", "value", f"a number from {low:g} to {high:g}", text,
                       "the value is outside the plausible range of a published result")]
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
                         nodes_text: str | None, total_text: str | None,
                         authoritative: bool = False):
    """Canonical accelerator (family), its published variant, composition and
    the true accelerator count.

    Several types (a mixed cluster) take their counts from the field's
    ``(xN)`` pieces, else from the platform id; names are sorted, so one
    cluster has one label (``MI300X+MI325X``) whatever the order it is written
    in. One type: a count the name states (``(x87)`` in the field, or
    ``87xMI355X_...`` in the platform id) is the true count when the nodes can
    hold it (87 on 11 x 8); otherwise the published total (or nodes x per node)
    wins, with a warning (``XE8640_4xH100_vLLM`` published with 1 accelerator).
    Returns ((accelerator, variant, composition, per_node, nodes, total), problems).
    """
    if per_node_text is None and text is not None and authoritative:
        per_node, problems = 1, [("missing-value", "accelerators_per_node", "a whole number >= 1",
                                  None, "the published table gives no accelerators per node for a "
                                  "named accelerator (an integrated GPU): 1 is assumed", "warning")]
    else:
        per_node, problems = _count("accelerators_per_node", per_node_text, required=True)
    nodes, more = _count("nodes", nodes_text, required=True)
    problems += more
    total_given, more = _count("total_accelerators", total_text, required=False)
    problems += more
    fail = (None, None, None, per_node, nodes, None)
    if text is None:
        return fail, problems + [("missing-value", "accelerator", "an accelerator name", "<empty>",
                                  "no accelerator (CPU-only results are not compared)")]
    pieces = accelerators_in_name(text)
    unknown = [p for name, _, p in pieces if name is None]
    if unknown and not authoritative:
        return fail, problems + [("unknown-accelerator", "accelerator",
                                  "a name known to schemas/accelerators.yaml", unknown[0],
                                  "unknown accelerator")]
    for p in unknown:
        problems.append(("unregistered-name", "accelerator", "a name known to schemas/accelerators.yaml",
                         p, f"accelerator not in the registry: kept as {unregistered_accelerator(p)!r} "
                         "(vendor unknown)", "warning"))
    pieces = [(name or unregistered_accelerator(p), c, p) for name, c, p in pieces]
    variants = {}
    for name, _, piece in pieces:
        variants.setdefault(name, variant_of(name, piece) if name in rules.known_accelerators()
                            else name)
    from_platform = composition_from_platform(platform)
    if len(variants) == 1 and len(from_platform) > 1 and set(variants) <= set(from_platform):
        for name in from_platform:   # the platform id states the whole mix the field names one of
            variants.setdefault(name, name)
        pieces = [(n, None, n) for n in from_platform]
    names = sorted(variants)
    named = [c for _, c, _ in pieces]
    if per_node is None or nodes is None:
        return fail, problems
    capacity = per_node * nodes
    if len(names) > 1:
        if all(c is not None for c in named):
            counts: dict[str, int] = {}
            for name, c, _ in pieces:
                counts[name] = counts.get(name, 0) + c
        elif set(from_platform) >= set(names):
            counts = {n: from_platform[n] for n in names}
        else:
            return fail, problems + [("unknown-accelerator", "accelerator", "accelerator counts per type",
                                      text, "several accelerator types without counts")]
        total = sum(counts.values())
    else:
        name = names[0]
        stated = sum(named) if all(c is not None for c in named) else from_platform.get(name)
        published = total_given or capacity
        if stated is not None and stated <= capacity and total_given in (None, capacity, stated):
            total = stated
        else:
            total = published
            if stated is not None and stated != published:
                problems.append(("accelerator-count-disagrees", "accelerators_per_node",
                                 f"the published count {published} (nodes {nodes} x per node "
                                 f"{per_node}{', total ' + str(total_given) if total_given else ''})",
                                 f"{stated} stated in the name {text if named[0] is not None else platform!r}",
                                 f"the published count {published} is kept", "warning"))
        counts = {name: total}
    if total > capacity:
        return fail, problems + [("accelerator-count-mismatch", "total_accelerators",
                                  f"at most nodes x per node = {capacity}", total,
                                  "more accelerators than the nodes hold")]
    if errors(problems):
        return fail, problems
    return ("+".join(names), "+".join(variants[n] for n in names),
            ",".join(f"{n}:{counts[n]}" for n in names), per_node, nodes, total), problems
