"""Round rules for real MLPerf inputs, loaded from ``schemas/rules/``.

``<round>.yaml`` holds what a result of a round must show; ``metrics.yaml``
which LoadGen key holds a result and in which units; ``accuracy.yaml`` how to
read a metric from accuracy.txt. Nothing here is a literal of a round. Each
file is checked against its JSON Schema when loaded; what is checked here is
what a schema cannot say: that the models a section names are the round's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.core import limits
from pipeline.core.errors import ConfigError
from pipeline.core.rules import RULES_DIR, Model, Rules, memo

_ROUND_FILE = re.compile(r"^v\d+\.\d+\.yaml$")


@dataclass(frozen=True)
class MetricSpec:
    """Where a result sits in the detail log, and how to publish it."""

    key: str
    units: str
    divide_by: float = 1.0


@dataclass(frozen=True)
class AccuracyTarget:
    """One bound pair on one accuracy metric; None means no bound that side."""

    metric: str
    low: float | None
    high: float | None
    scenarios: frozenset[str] = frozenset()   # empty: every scenario

    def expected(self) -> str:
        if self.high is None:
            return f"{self.metric} >= {self.low:.6g}"
        if self.low is None:
            return f"{self.metric} <= {self.high:.6g}"
        return f"{self.low:.6g} <= {self.metric} <= {self.high:.6g}"

    def failed_bound(self, value: float) -> str | None:
        """'low' when the value is under the target, 'high' when over the upper limit."""
        if self.low is not None and value < self.low:
            return "low"
        if self.high is not None and value > self.high:
            return "high"
        return None

    def applies_to(self, scenario: str | None) -> bool:
        return not self.scenarios or scenario in self.scenarios


@dataclass(frozen=True)
class RoundRules:
    round: str
    compliance_layout: str
    seeds: dict[str, int]
    min_duration_ms: int
    result_validity: str
    test_mode: str
    runs_as: dict[str, str]
    sample_count: dict[str, int]
    latency_ms: dict[str, dict[str, dict[str, float]]]
    accuracy: dict[str, tuple[AccuracyTarget, ...]]
    compliance: dict[str, tuple[str, ...]]            # model -> required tests
    compliance_pass: dict[str, dict[str, tuple[tuple[str, ...], ...]]]  # test -> file -> lines (alternatives)
    not_enforced: dict[str, frozenset[str]]           # division -> check names
    system_fields: tuple[str, ...]
    metrics: dict[str, dict[str, MetricSpec]] = field(default_factory=dict)
    folder_models: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    benchmarks: dict[str, Model] = field(default_factory=dict)   # the round's models
    min_queries: dict[str, dict[str, int]] = field(default_factory=dict)
    early_stopping: frozenset[str] = frozenset()          # LoadGen scenarios judged by early stopping
    offline_min_spq: dict[str, int] = field(default_factory=dict)
    latency_constraint_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    # TEST01 in non-deterministic mode: (default %, model -> % or metric -> %)
    compliance_delta_pct: tuple[float, dict] = (1.0, {})
    min_duration_exempt: frozenset[str] = frozenset()     # models the minimum duration does not apply to

    def enforced(self, check: str, division: str | None) -> bool:
        return check not in self.not_enforced.get((division or "").lower(), frozenset())

    def accuracy_delta_pct(self, model: str, metric: str) -> float:
        """How far (%) TEST01's compliance accuracy may lie from its baseline."""
        default, models = self.compliance_delta_pct
        given = models.get(model, default)
        return float(given.get(metric, default) if isinstance(given, dict) else given)

    def accuracy_targets(self, model: str | None, scenario: str | None) -> tuple[AccuracyTarget, ...]:
        return tuple(t for t in self.accuracy.get(model or "", ()) if t.applies_to(scenario))


@dataclass(frozen=True)
class Formats:
    """What does not change by round: metric keys by family, accuracy patterns."""

    families: dict[str, dict[str, MetricSpec]]
    model_metrics: dict[str, dict[str, MetricSpec]]
    never_use: frozenset[str]
    patterns: dict[str, re.Pattern]
    file_bytes: int                  # caps.file_bytes: the largest LoadGen log a judgement reads


def metric_for(rules: RoundRules, formats: Formats, model: str, family: str,
               scenario: str) -> MetricSpec | None:
    """The round's override, else the model's exception, else the family's key,
    in the units the round published."""
    for table in (rules.metrics.get(model), formats.model_metrics.get(model),
                  formats.families.get(family)):
        if table and scenario in table:
            spec = table[scenario]
            bench = rules.benchmarks.get(model)
            published = bench.units.get(scenario) if bench else None
            if published and published[0] != spec.units:
                spec = MetricSpec(spec.key, published[0], spec.divide_by)
            return spec
    return None


@memo()
def formats(rules: Rules) -> Formats:
    metrics = rules.load_yaml(f"{RULES_DIR}/metrics.yaml")
    patterns = rules.load_yaml(f"{RULES_DIR}/accuracy.yaml")["patterns"]
    out = Formats(
        families={f: _metric_table(t) for f, t in metrics["families"].items()},
        model_metrics={m: _metric_table(t) for m, t in (metrics.get("models") or {}).items()},
        never_use=frozenset(metrics.get("never_use") or ()),
        patterns={name: re.compile(text) for name, text in patterns.items()},
        file_bytes=limits.file_bytes(rules))
    for table in [*out.families.values(), *out.model_metrics.values()]:
        if any(spec.key in out.never_use for spec in table.values()):
            raise ConfigError(f"rules/metrics.yaml reads a key listed in never_use: {table}")
    return out


@memo()
def all_rounds(rules: Rules) -> dict[str, RoundRules]:
    """Every round that has a rules file, by name."""
    rules_dir = rules.folder / RULES_DIR
    if not rules_dir.is_dir():
        raise ConfigError(f"round rules folder not found: {rules_dir}")
    loaded = (from_mapping(rules, rules.load_yaml(f"{RULES_DIR}/{path.name}"), path.name)
              for path in sorted(rules_dir.iterdir()) if _ROUND_FILE.match(path.name))
    return {round_.round: round_ for round_ in loaded}


def from_mapping(rules: Rules, data: dict, where: str) -> RoundRules:
    """The rules of one round, from its file's mapping (checked by rules/round.schema.json)."""
    def get(section: str) -> dict:   # a section the round may leave out
        return data.get(section) or {}

    out = RoundRules(
        round=data["round"],
        compliance_layout=data["layout"]["compliance"],
        seeds=dict(data["seeds"]),
        min_duration_ms=data["min_duration_ms"],
        result_validity=data["result_validity"],
        test_mode=data["test_mode"],
        runs_as=dict(get("runs_as")),
        sample_count=dict(get("performance_sample_count")),
        latency_ms={m: {s: {k: float(v) for k, v in lim.items()} for s, lim in sc.items()}
                    for m, sc in get("llm_latency_ms").items()},
        accuracy={m: tuple(_target(t) for t in ts) for m, ts in get("accuracy").items()},
        compliance=_tests_by_model(get("compliance")),
        compliance_pass={t: {f: tuple(_alternatives(x) for x in lines) for f, lines in files.items()}
                         for t, files in get("compliance_pass").items()},
        # checker_not_enforced: the released not_enforced, corrected (see the round files)
        not_enforced={d: frozenset(c) for d, c in (data.get("checker_not_enforced", get("not_enforced"))).items()},
        system_fields=tuple(data.get("system_required_fields") or ()),
        metrics={m: _metric_table(t) for m, t in get("metrics").items()},
        folder_models={f: (v["model"], dict(v["scenarios"])) for f, v in get("folder_models").items()},
        benchmarks=rules.round_benchmarks(data, where),
        min_queries={m: dict(sc) for m, sc in get("min_queries").items()},
        early_stopping=frozenset(data.get("early_stopping") or ()),
        offline_min_spq=dict(get("offline_min_samples_per_query")),
        latency_constraint_ms={m: {s: float(v) for s, v in sc.items()}
                               for m, sc in get("latency_constraint_ms").items()},
        compliance_delta_pct=_delta_pct(get("compliance_accuracy_delta_pct")),
        min_duration_exempt=frozenset(data.get("min_duration_exempt") or ()),
    )
    _check_models_known(out, where)
    return out


def _check_models_known(r: RoundRules, where: str) -> None:
    """Every model a section names is one of the round's models (one registry per fact)."""
    sections = {"performance_sample_count": r.sample_count, "llm_latency_ms": r.latency_ms,
                "accuracy": r.accuracy, "compliance": r.compliance, "metrics": r.metrics,
                "min_queries": r.min_queries, "offline_min_samples_per_query": r.offline_min_spq,
                "latency_constraint_ms": r.latency_constraint_ms,
                "compliance_accuracy_delta_pct": r.compliance_delta_pct[1],
                "min_duration_exempt": {m: None for m in r.min_duration_exempt},
                "folder_models": {m: None for m, _ in r.folder_models.values()}}
    if not r.benchmarks:       # a rules file without a model list (tests' relaxed copies)
        return
    for name, table in sections.items():
        unknown = sorted(set(table) - set(r.benchmarks))
        if unknown:
            raise ConfigError(f"{where}: {name} names {unknown}, which are not in the round's models")


def _metric_table(table: dict) -> dict[str, MetricSpec]:
    return {sc: MetricSpec(s["key"], s["units"], float(s.get("divide_by", 1))) for sc, s in table.items()}


def _target(entry: dict) -> AccuracyTarget:
    """reference x low / high factors, or absolute min / max (the schema asks for one bound at least)."""
    if "reference" in entry:
        low, high = (float(entry["reference"]) * entry[k] if k in entry else None for k in ("low", "high"))
    else:
        low, high = (float(entry[k]) if k in entry else None for k in ("min", "max"))
    return AccuracyTarget(entry["metric"], low, high, frozenset(entry.get("scenarios") or ()))


def _delta_pct(entry: dict) -> tuple[float, dict]:
    models = {m: ({k: float(v) for k, v in d.items()} if isinstance(d, dict) else float(d))
              for m, d in (entry.get("models") or {}).items()}
    return float(entry.get("default", 1.0)), models


def _alternatives(line: str | list[str]) -> tuple[str, ...]:
    """A required line, or a list of lines any one of which will do."""
    return tuple(line) if isinstance(line, list) else (line,)


def _tests_by_model(by_test: dict) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for test, models in by_test.items():
        for model in models:
            out.setdefault(model, []).append(test)
    return {m: tuple(t) for m, t in out.items()}
