"""The decisions that make a canonical row, one pure resolver per part of the row.

A resolver returns the part's values and its problems: a problem is a finding
without its place, ``(code, field, expected, found, message)``, with
``"warning"`` as a sixth element for one that keeps the row; ``found`` None
means "what the file holds in that field". :mod:`pipeline.ingest.normalise`
places them. A table MLCommons published is the authority on its own names
(a name the registries lack keeps its row, labels that disagree are noted); a
partner's file must name known values whose labels agree.
"""

from __future__ import annotations

import difflib
import functools
import math
import re

from pipeline.core import limits, textcheck
from pipeline.core.rules import SCHEMA_FILE, Rules, canonical_units, memo
from pipeline.ingest import composition
from pipeline.core.model import WARNING

# ASCII digits only (Python's \d also takes other scripts' digits)
NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")
_INTEGER = re.compile(r"^[0-9]+(\.0*)?\Z")
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


@memo()
def bounds(rules: Rules) -> dict[str, tuple]:
    """Column -> (lowest, highest), inclusive: the table schema's ``in_range``
    checks, read as data (pandera is not needed to read them)."""
    columns = rules.load_yaml(SCHEMA_FILE)["columns"]
    return {name: (spec["checks"]["in_range"]["min_value"], spec["checks"]["in_range"]["max_value"])
            for name, spec in columns.items() if "in_range" in (spec.get("checks") or {})}


Problem = tuple


def errors(problems: list[Problem]) -> bool:
    """Whether any problem is an error (a warning is a 6-tuple ending in "warning")."""
    return any(len(p) < 6 or p[5] != WARNING for p in problems)


def _severity(published: bool) -> tuple[str, ...]:
    """A contradiction in a table MLCommons published is noted (its row kept); in a partner's file, refused."""
    return (WARNING,) if published else ()


def _required(name: str, text: str | None) -> list[Problem]:
    return [] if text is not None else [("missing-value", name, f"a value for {name}", None,
                                         f"{name} is empty")]


def did_you_mean(text: str, known) -> str:
    """`` (did you mean X?)`` naming the closest known value(s), in any case; "" when none is close."""
    by_key: dict[str, str] = {}
    for value in known:
        by_key.setdefault(str(value).lower(), str(value))
    close = difflib.get_close_matches(text.strip().lower(), list(by_key), n=2, cutoff=0.6)
    names = list(dict.fromkeys(by_key[c] for c in close))
    return f" (did you mean {' or '.join(names)}?)" if names else ""


def characters(rules: Rules, name: str, text: str | None, published: bool = False) -> tuple[Problem, ...]:
    """Mojibake (``MI355XÂ``), an invisible or a confusable character (a
    Cyrillic ``А`` in ``АMD``) in a field, or a field over the length cap."""
    if text is None:
        return ()
    longest = limits.cap(rules, "field_length")
    if len(text) > longest:      # said before anything quotes it: a finding never carries a megabyte name
        return (("over-cap", name, f"at most {longest} characters", f"{len(text)} characters",
                 f"{name} is longer than any name a partner may write (schemas/version_folder.yaml caps)")
                + _severity(published),)
    if text.isascii():
        return ()
    garbled = textcheck.mojibake_in(text)
    if garbled is not None:      # never repaired in silence: MI355XÂ is not MI355X to a reader
        at, described = garbled
        return (("mojibake", name, "text as typed, in its own encoding", f"{described} at character {at + 1} of "
                 f"{ascii(text)}", f"{name} holds mojibake (UTF-8 read as Latin-1/cp1252): fix the export's "
                 "encoding") + _severity(published),)
    hidden = textcheck.hidden_character(text)
    if hidden is None:
        return ()
    code, at, described = hidden
    return ((code, name, "visible text in plain letters, digits and spaces",
             f"{described} at character {at + 1} of {text!r}",
             f"{name} holds {described}: a name that looks like another is never the same name")
            + _severity(published),)


def round_name(text: str | None, submission_round: str | None) -> str | None:
    """The round a row names (``6.0`` -> ``v6.0``), else its submission's."""
    round_ = text or submission_round
    if round_ is not None and not round_.startswith("v"):
        round_ = "v" + round_
    return round_


@memo(maxsize=4096)
def resolve_round(rules: Rules, text: str | None, submission_round: str | None) -> tuple[str | None, list[Problem]]:
    round_ = round_name(text, submission_round)
    if round_ is None:
        return None, [("missing-value", "round", "a round such as v6.0", "<absent>",
                       "the round is neither in the file nor given by the submission")]
    if submission_round and round_ != submission_round:
        return round_, [("round-mismatch", "round", submission_round, round_,
                         "the row's round differs from its submission's round")]
    if round_ not in rules.rounds():
        return round_, [("unknown-round", "round", f"one of {sorted(rules.rounds())}", round_,
                         "unknown round" + did_you_mean(round_, rules.rounds()))]
    return round_, []


def resolve_submitter(text: str | None, submission_submitter: str | None):
    problems = _required("submitter", text)
    if text and submission_submitter and text != submission_submitter:
        problems.append(("submitter-mismatch", "submitter", submission_submitter, text,
                         "the row's submitter differs from its submission's submitter"))
    return text, problems


def resolve_required(name: str, text: str | None):
    return text, _required(name, text)


def _benchmark_id(rules: Rules, texts: list[tuple[str, str]], benchmarks: dict | None) -> tuple[str | None, str | None]:
    """(id, the field that names it): the first text that is a benchmark of the
    round, else the first that is any registered benchmark, else (None, None)."""
    ids = [(rules.canonical_model(text), field) for field, text in texts]
    for model, field in ids:
        if model is not None and benchmarks is not None and model in benchmarks:
            return model, field
    return next(((m, f) for m, f in ids if m is not None), (None, None))


@memo(maxsize=4096)
def resolve_benchmark(rules: Rules, model_text: str | None, scenario_text: str | None, units: str | None,
                      round_: str | None = None, published: bool = False,
                      used_text: str | None = None):
    """((benchmark id, the model run, scenario, units), problems).

    ``model`` and ``used_model`` may both name the benchmark (in the open
    division the model run is another): the id is the one that is a benchmark
    of the round, ``model`` first, never a category or task name; the other
    field is the model run. Scenario and units take their canonical spelling.
    A ``published`` table keeps a model the registry or the round lacks, and
    the units of a result whose model run is not the benchmark (v4.1 open
    division: ``neuralmagic_Llama-2-7b-chat-hf-FP8`` under llama2-70b-99.9)."""
    texts = [(f, t) for f, t in (("model", model_text), ("used_model", used_text)) if t]
    problems = [] if texts else _required("model", None)
    known = rules.round_models(round_) if round_ in rules.rounds() else None
    model, field = _benchmark_id(rules, texts, known)
    unregistered = False
    if texts and model is None:
        names = [(f, t) for f, t in texts if not rules.is_category(t)]
        if not names:
            problems.append(("unknown-model", texts[0][0], "a benchmark id from schemas/models.yaml",
                             texts[0][1], "a category or task name, not a benchmark: no field names the "
                             "benchmark"))
        elif published:
            (field, model), unregistered = names[0], True
            problems.append(("unregistered-name", field, "a benchmark id from schemas/models.yaml",
                             model, "model not in the registry: kept with the published table's name "
                             "and units", WARNING))
        else:
            problems.append(("unknown-model", names[0][0], "a benchmark id from schemas/models.yaml",
                             names[0][1], "unknown model" + did_you_mean(
                                 names[0][1], known if known is not None else rules.models())))
    other = next((t for f, t in texts if f != field and not rules.is_category(t)), None)
    used = (rules.canonical_model(other) or other) if other else model
    problems += _required("scenario", scenario_text)
    scenario = rules.canonical_scenario(scenario_text) if scenario_text else None
    if scenario_text and scenario is None:
        problems.append(("unknown-scenario", "scenario", f"one of {list(rules.scenarios())}",
                         scenario_text, "unknown scenario" + did_you_mean(scenario_text, rules.scenarios())))
    problems += _required("units", units)
    benchmarks = known
    if model and not unregistered and benchmarks is not None and model not in benchmarks:
        problems.append(("model-not-in-round", field, f"a benchmark of {round_}: {sorted(benchmarks)}",
                         dict(texts)[field], f"{model} is not a benchmark of {round_} "
                         f"(schemas/rules/{round_}.yaml)") + _severity(published))
        if not published:
            return (model, used, scenario, units), problems
        benchmarks = None
    bench = (benchmarks or rules.models())[model] if model and not unregistered else None
    if bench and scenario and units:
        where = round_ if benchmarks is not None else "any round"
        accepted = bench.units.get(scenario)
        if accepted is None:
            problems.append(("invalid-choice", "scenario",
                             f"a scenario of {model} in {where}: {list(bench.scenarios)}",
                             scenario, f"{model} has no {scenario} scenario in {where}"))
        elif canonical_units(units, accepted) is not None:
            units = canonical_units(units, accepted)
        elif published and used_text and rules.canonical_model(used_text) != model:
            problems.append(("units-mismatch", "units", " or ".join(accepted), units,
                             f"units not those of {model} {scenario} in {where}: the published "
                             f"table's units are kept (the model used is {used_text})", WARNING))
        else:
            problems.append(("units-mismatch", "units", " or ".join(accepted), units,
                             f"wrong units for {model} {scenario} in {where}" + did_you_mean(units, accepted)))
    return (model, used, scenario, units), problems


def resolve_value(rules: Rules, text: str | None):
    if text is None:
        return None, _required("value", text)
    value = parse_number(text)
    low, high = bounds(rules)["value"]
    if value is None and (NUMBER.match(text) or _NOT_FINITE.match(text)):   # 1e999, inf, nan
        return None, [("invalid-value", "value", f"a number from {low:g} to {high:g}", text,
                       "the value is not a finite number")]
    if value is None:
        return None, [("malformed-number", "value", "a plain decimal number such as 100282.5", text,
                       "the value is not a plain finite number")]
    if value <= 0:
        return None, [("invalid-value", "value", "a number greater than 0", text,
                       "the value must be positive")]
    if not low <= value <= high:
        return None, [("invalid-value", "value", f"a number from {low:g} to {high:g}", text,
                       "the value is outside the plausible range of a published result")]
    return value, []


def resolve_choice(name: str, text: str | None, allowed: tuple[str, ...]):
    if text is None:
        return None, [("missing-value", name, f"one of {list(allowed)}", None, f"{name} is empty")]
    value = text.lower()
    if value not in allowed:
        return None, [("invalid-choice", name, f"one of {list(allowed)}", text,
                       f"invalid {name}" + did_you_mean(text, allowed))]
    return value, []


def _count(rules: Rules, name: str, text: str | None, required: bool) -> tuple[int | None, list[Problem]]:
    if text is None:
        return None, ([("missing-value", name, "a whole number >= 1", None, f"{name} is empty")]
                      if required else [])
    value = parse_count(text)
    bound = bounds(rules)[name][1]
    if value is None or not 1 <= value <= bound:
        code = "malformed-number" if value is None else "invalid-value"
        return None, [(code, name, f"a whole number from 1 to {bound}", text,
                       f"{name} is not a whole number from 1 to {bound}")]
    return value, []


def _unregistered(rules: Rules, part: composition.Part) -> Problem:
    vendor = (f"{part.vendor}'s by the words of its name" if part.vendor else
              "vendor unknown (the name carries no vendor's words), so never taken for a partner result")
    return ("unregistered-name", "accelerator",
            f"an entry of schemas/accelerators.yaml: {composition.registry_line(rules, part.text)}", part.text,
            f"accelerator not in the registry: kept as {part.name!r}, {vendor}; add the entry expected "
            "to schemas/accelerators.yaml", WARNING)


# what a mixed cluster's accelerator field must state in a partner's file (a published
# table's is shared evenly, with a warning)
COUNT_PER_TYPE = "a count per type, as '<name> (x8)' or '8x <name>'"


def _unknown_accelerator(rules: Rules, piece: str) -> Problem:
    words = [w for w in re.split(r"[^A-Za-z0-9]+", piece) if any(c.isdigit() for c in w)]
    known = [name for name, _ in rules.accelerator_patterns()]
    hint = next((h for h in (did_you_mean(w, known) for w in words) if h), "")
    return ("unknown-accelerator", "accelerator", "a name known to schemas/accelerators.yaml", piece,
            "unknown accelerator" + hint)


def _per_type_counts(parts: list[composition.Part], per_node: int, nodes: int) -> dict[str, int] | None:
    """The counts the accelerator field states per type, per system (counts
    that add up to one node's are per node); None unless every type has one."""
    if not parts or any(p.count is None for p in parts):
        return None
    counts: dict[str, int] = {}
    for p in parts:
        counts[p.name] = counts.get(p.name, 0) + p.count
    if nodes > 1 and sum(counts.values()) == per_node:
        counts = {n: c * nodes for n, c in counts.items()}
    return counts


@memo(maxsize=65536)
def resolve_accelerators(rules: Rules, text: str | None, platform: str | None, per_node_text: str | None,
                         nodes_text: str | None, total_text: str | None, published: bool = False):
    """((accelerator, variant, composition, per_node, nodes, total), problems).

    A mixed cluster (``A (x8) and B (x8)``, ``2x A + 2x B``, ``A, B`` with the
    counts in the system id) is its composition, every type sorted by name, so
    one cluster has one label (``MI300X+MI325X``) whatever order it is written
    in. One type: a count the name states (``(x87)``, ``87xMI355X_...``) is the
    true count when the nodes need it (87 on 11 x 8). The accelerator must be
    one the system id names, and a count the id states must fit the nodes: in
    a partner's file a contradiction rejects the row (``label-mismatch``); a
    published table keeps its row with a warning and its own count
    (``XE8640_4xH100_vLLM`` published with 1 accelerator).
    """
    if per_node_text is None and text is not None and published:
        per_node, problems = 1, [("missing-value", "accelerators_per_node", "a whole number >= 1",
                                  None, "the published table gives no accelerators per node for a "
                                  "named accelerator (an integrated GPU): 1 is assumed", WARNING)]
    else:
        per_node, problems = _count(rules, "accelerators_per_node", per_node_text, required=True)
    nodes, more = _count(rules, "nodes", nodes_text, required=True)
    problems += more
    total_given, more = _count(rules, "total_accelerators", total_text, required=False)
    problems += more
    fail = (None, None, None, per_node, nodes, None)
    if text is None:
        return fail, problems + [("missing-value", "accelerator", "an accelerator name", "<empty>",
                                  "no accelerator (CPU-only results are not compared)")]
    parts = list(composition.parts_in_name(rules, text))
    unknown = [p for p in parts if not p.registered]
    if unknown and not published:
        return fail, problems + [_unknown_accelerator(rules, unknown[0].text)]
    problems += [_unregistered(rules, p) for p in unknown]
    in_id = composition.parts_in_system_id(rules, platform)
    named = {p.name for p in parts}
    if in_id and not unknown and not named <= set(in_id):
        problems.append(("label-mismatch", "accelerator",
                         f"{' or '.join(in_id)}, as the system id {platform!r} names", text,
                         f"the accelerator ({'+'.join(sorted(named))}) is not the one the system id names")
                        + _severity(published))
        if not published:
            return fail, problems
    by_id = {n: c for n, c in in_id.items() if c is not None}
    variants = {p.name: p.variant for p in parts}
    if len(named) == 1 and len(by_id) > 1 and named <= set(by_id):
        for name in by_id:   # the system id states the whole mix the field names one of
            variants.setdefault(name, name)
        parts = [composition.Part(n, variants[n], None, None, True, n) for n in by_id]
    names = sorted(variants)
    if per_node is None or nodes is None:
        return fail, problems
    prefix = composition.nodes_in_system_id(rules, platform)
    if prefix is not None and (prefix[0] != nodes or prefix[1] != (per_node,)):
        # 1x8xMI355X_... states one node of 8: a row saying 2 nodes contradicts its own id
        said_nodes, said_per_node = prefix
        key = "nodes" if said_nodes != nodes else "accelerators_per_node"
        problems.append(("label-mismatch", key,
                         f"{said_nodes} node(s) of {'/'.join(map(str, said_per_node))} accelerators, as the system "
                         f"id {platform!r} states (<nodes>x<per node>x<accelerator>)",
                         f"nodes {nodes}, accelerators per node {per_node}",
                         "the node count or the accelerators per node contradict the system id's node prefix")
                        + _severity(published))
        if not published:
            return fail, problems
    capacity = per_node * nodes
    stated = _per_type_counts(parts, per_node, nodes)
    if stated is not None and not published:
        clash = {n: (c, by_id[n]) for n, c in stated.items() if n in by_id and by_id[n] != c}
        if clash:
            return fail, problems + [("label-mismatch", "accelerator", ", ".join(
                f"{n}: {b} as the system id {platform!r} states" for n, (_, b) in clash.items()), text,
                "the accelerator's counts are not the system id's")]
    if len(names) > 1:
        counts = stated or ({n: by_id[n] for n in names} if set(by_id) >= set(names) else None)
        if counts is None and not published:
            return fail, problems + [("missing-value", "accelerator", COUNT_PER_TYPE, text,
                                      "several accelerator types without counts")]
        if counts is None:
            share, extra = divmod(total_given or capacity, len(names))
            counts = {n: share + (i < extra) for i, n in enumerate(names)}
            problems.append(("composition-assumed", "accelerator", "a count per type", text,
                             f"several accelerator types without counts: the {total_given or capacity} "
                             f"accelerators are taken as shared evenly ({', '.join(f'{n}: {c}' for n, c in counts.items())})",
                             WARNING))
        total = sum(counts.values())
    else:
        name = names[0]
        stated_total = stated[name] if stated else by_id.get(name)
        published_total = total_given or capacity
        if stated_total is not None and stated_total <= capacity and total_given in (None, capacity, stated_total):
            total = stated_total
        else:
            total = published_total
            if stated_total is not None and stated_total != published_total:
                where = f"{stated_total} stated in the name {text if stated else platform!r}"
                held = (f"nodes {nodes} x per node {per_node}"
                        + (f", total {total_given}" if total_given else ""))
                if not published:
                    # expected: what the name states; found: what the columns hold
                    return fail, problems + [("label-mismatch", "accelerators_per_node",
                                              f"{where}: nodes x per node = {stated_total}",
                                              f"{published_total} ({held})",
                                              "the accelerators per node or the node count contradict the "
                                              "count the system's name states: correct the columns, or the "
                                              "name if it is the one that is wrong")]
                problems.append(("accelerator-count-disagrees", "accelerators_per_node",
                                 f"the published count {published_total} ({held})", where,
                                 f"the published count {published_total} is kept", WARNING))
        counts = {name: total}
    if total > capacity and (not published or len(names) == 1):
        return fail, problems + [("accelerator-count-mismatch", "total_accelerators",
                                  f"at most nodes x per node = {capacity}", total,
                                  "more accelerators than the nodes hold")]
    if not published and (total <= capacity - per_node or total_given not in (None, capacity, total)):
        return fail, problems + [("label-mismatch", "nodes",
                                  f"{-(-total // per_node)} node(s) of {per_node} for the {total} accelerators "
                                  f"the labels state",
                                  (f"total {total_given}" if total_given not in (None, capacity, total)
                                   else f"{nodes} nodes of {per_node} ({capacity} accelerators)"),
                                  "the node count or the accelerators per node contradict the system's "
                                  "accelerator count (a node would hold none)")]
    if total > capacity:
        problems.append(("accelerator-count-disagrees", "total_accelerators", f"at most nodes x per node = "
                         f"{capacity}", total, "the counts per type exceed what the nodes hold: kept as "
                         "published", WARNING))
    if errors(problems):
        return fail, problems
    return ("+".join(names), "+".join(variants[n] for n in names),
            ",".join(f"{n}:{counts[n]}" for n in names), per_node, nodes, total), problems


@memo(maxsize=4096)
def cpu_only(rules: Rules, accelerator: str | None, per_node: str | None, platform: str | None,
             published: bool = False) -> tuple[bool, tuple[Problem, ...]]:
    """Whether a row is a CPU-only result (excluded, never compared); a
    partner's row whose system id names an accelerator is refused instead."""
    if accelerator is not None or per_node not in (None, "0"):
        return False, ()
    named = composition.parts_in_system_id(rules, platform)
    if published or not named:
        return True, ()
    return False, (("label-mismatch", "accelerator", f"{'+'.join(named)}, as the system id {platform!r} names",
                    "<empty>", "the row names no accelerator but its system id does"),)


def labels_to_check(rules: Rules, part: str, value: str | None) -> bool:
    """Whether a part's value calls for :func:`resolve_labels`."""
    if value is None:
        return False
    if part in ("system", "system_name"):
        return rules.power_capped(value)
    return part == "division" and value == "network"


_CAP_WATTS = re.compile(r"power[ _-]?cap[\W_]*?(\d+)\s*_?W", re.IGNORECASE)
NETWORK_SUT = "Network SUT"   # what MLCommons' checker requires of a network-division system's name


@memo(maxsize=4096)
def resolve_labels(rules: Rules, system: str | None, system_name: str | None, accelerator: str | None,
                   division: str | None, power: str | None, power_data: str | None,
                   published: bool = False) -> tuple[Problem, ...]:
    """What a partner's labels must back up (MLCommons checked its own
    tables): a power result carries its power data; a power cap in the system
    id or name (``..._Power_Cap_1000W``) is stated by the accelerator with the
    same watts, as MLCommons publishes it (``... (Power Cap 1000 W)``), or the
    result carries its power data; a network-division system is named a
    ``Network SUT``. Without them the label is refused."""
    if published:
        return ()
    out: list[Problem] = []
    data = parse_number(power_data) if power_data else None
    if power == "true" and not (data and data > 0):
        out.append(("power-data-missing", "power", "the power data of a power result", "no power data",
                    "a power result without its power data: the label is refused"))
    pattern = rules.power_cap_pattern()
    capped = [t for t in (system, system_name) if t and pattern.search(t)]
    if capped and not (data and data > 0):
        stated = {int(w) for t in capped for w in _CAP_WATTS.findall(t)}
        by_accelerator = {int(w) for w in _CAP_WATTS.findall(accelerator or "")}
        if not (accelerator and pattern.search(accelerator)) or (stated and by_accelerator and stated != by_accelerator):
            out.append(("power-data-missing", "accelerator",
                        f"the power cap the system states ({capped[0]!r}) in the accelerator's name, as "
                        "'<accelerator> (Power Cap 1000 W)', or the result's power data",
                        accelerator or "<empty>", "a power-capped system whose cap nothing else states"))
    if division and division.lower() == "network" and NETWORK_SUT not in (system_name or ""):
        out.append(("label-mismatch", "division", f"a system name stating {NETWORK_SUT!r} "
                    "(MLCommons' rule for the network division)", system_name or "<no system name>",
                    "a network-division result whose system is not named a network SUT"))
    return tuple(out)


# a host processor count in a system id: 2xEPYC_9575F, 22xEPYC, 2xXeon-6980P
_HOST_IN_ID = re.compile(r"(?:^|_)(\d+)[xX](EPYC|Xeon|Grace|Intel|AMD|ARM|CPU)", re.IGNORECASE)
DESCRIPTION = ("host_processor", "host_processors_per_node", "framework", "operating_system",
               "weight_data_types")


@functools.lru_cache(maxsize=4096)   # pure: no rule decides it
def resolve_description(host: str | None, host_count: str | None, framework: str | None,
                        operating_system: str | None, weights: str | None, platform: str | None,
                        nodes_text: str | None, published: bool = False):
    """The system description as stated, and a warning when the host count
    contradicts the system id (``8xMI355X_2xEPYC_9575F`` with 8 per node).
    Only a warning, in a partner's file too: the reference vendor's own v6.0
    files state it so, and refusing them would lose the reference. The id may
    count the whole cluster's hosts (``87xMI355X_22xEPYC`` on 11 nodes: 2)."""
    problems: list[Problem] = []
    m = _HOST_IN_ID.search(platform or "")
    stated = parse_count(host_count) if host_count else None
    nodes = parse_count(nodes_text) if nodes_text else None
    if m and stated is not None:
        in_id = int(m.group(1))
        if in_id not in (stated, stated * (nodes or 1)):
            per_node = in_id // nodes if nodes and in_id % nodes == 0 else in_id
            problems.append(("description-contradicts-system-id", "host_processors_per_node",
                             f"{per_node} per node, as the system id {platform!r} states", host_count,
                             "the host processor count contradicts the system id"
                             + (" (kept as published)" if published else ""), WARNING))
    return (host, host_count, framework, operating_system, weights), problems


def host_count_in_id(platform: str | None, nodes: object = None) -> int | None:
    """The host processors per node a system id states (``8xMI355X_2xEPYC_9575F``: 2;
    ``87xMI355X_22xEPYC_9575F`` on 11 nodes: 2), None when it states none."""
    m = _HOST_IN_ID.search(str(platform or ""))
    if not m:
        return None
    count, n = int(m.group(1)), parse_count(str(nodes)) if nodes not in (None, "") else None
    return count // n if n and count % n == 0 and count >= 2 * n else count
