"""Whether a LoadGen performance run follows its round's rules: each check
returns findings at the log's key; the rules are data
(:class:`~.round_rules.RoundRules`), nothing here knows a round."""

from __future__ import annotations

from pipeline.core.findings import Finding, located
from pipeline.readers.base import json_text
from pipeline.readers.loadgen import LoadgenLog, number
from pipeline.readers.round_rules import RoundRules
from pipeline.core.vocabulary import Severity

NS_PER_MS = 1_000_000
QSL_SEED = "effective_qsl_rng_seed"
P99_LATENCY = "result_99.00_percentile_latency_ns"
VALIDITY_FLAGS = {
    "result_min_duration_met": "min duration not met",
    "result_min_queries_met": "min queries not met",
    "result_perf_constraints_met": "performance constraints not met",
    "early_stopping_met": "early stopping not met",
}
# (limit name, requested setting, measured p99)
TOKEN_LATENCIES = (
    ("ttft", "requested_server_ttft_latency", "result_first_token_99.00_percentile_latency_ns"),
    ("tpot", "requested_server_tpot_latency", "result_time_per_output_token_99.00_percentile_ns"),
)
# every key the checks below read, besides each round's seed keys: a log
# parsed for these alone (loadgen.parse(keys=...)) answers every check
LOG_KEYS = (QSL_SEED, "result_validity", "result_invalid_reason", *VALIDITY_FLAGS,
            "effective_test_mode", "effective_scenario", "effective_min_duration_ms",
            "effective_performance_sample_count", "requested_use_token_latencies",
            "effective_min_query_count", "effective_samples_per_query", "effective_target_latency_ns",
            P99_LATENCY,
            *(key for _, setting, p99 in TOKEN_LATENCIES for key in (setting, p99)))


def round_of(log: LoadgenLog, rounds: dict[str, RoundRules], explicit: str | None
             ) -> tuple[RoundRules | None, list[Finding]]:
    """The rules to judge the run by: the round given, else the one whose official qsl seed the run used."""
    if explicit is not None:
        rules = rounds.get(explicit)
        if rules is None:
            return None, [located("rules-missing", log.where,
                                  f"schemas/rules/{explicit}.yaml", "no such file",
                                  f"no rules for round {explicit}")]
        return rules, []
    seed = log.get(QSL_SEED)
    for rules in rounds.values():
        if rules.seeds.get(QSL_SEED) == seed:
            return rules, []
    known = ", ".join(f"{r.round}: {r.seeds.get(QSL_SEED)}" for r in rounds.values())
    return None, [located("wrong-seed", log.at(QSL_SEED),
                          f"the official seed of a round ({known})", json_text(seed),
                          "the run's qsl seed is no round's official seed")]


def check_run(log: LoadgenLog, rules: RoundRules, model: str, scenario: str,
              division: str | None = None) -> list[Finding]:
    out: list[Finding] = []
    _validity(log, rules, out)
    _equal(log, "effective_test_mode", rules.test_mode, "test-mode-mismatch",
           "the performance log is not a PerformanceOnly run", out)
    _equal(log, "effective_scenario", rules.runs_as.get(scenario, scenario), "scenario-mismatch",
           f"the LoadGen scenario does not fit the {scenario} folder", out)
    for key, seed in rules.seeds.items():
        _equal(log, key, seed, "wrong-seed", f"{key} is not the {rules.round} seed", out)
    if model not in rules.min_duration_exempt:
        _at_least(log, "effective_min_duration_ms", rules.min_duration_ms, "min-duration-short",
                  f"the run's minimum duration is below {rules.round}'s", out, unit=" ms")
    if model in rules.sample_count:
        _at_least(log, "effective_performance_sample_count", rules.sample_count[model],
                  "sample-count-low", f"too few performance samples for {model}", out)
    if model in rules.latency_ms:
        _token_mode(log, model, out)
        _token_latencies(log, rules, model, scenario, out)
    run_as = rules.runs_as.get(scenario, scenario)
    early = run_as in rules.early_stopping
    _latency_constraint(log, rules, model, scenario, run_as, early, out)
    _min_queries(log, rules, model, scenario, early, division, out)
    return out


def _latency_constraint(log, rules: RoundRules, model: str, scenario: str, run_as: str,
                        early: bool, out: list[Finding]) -> None:
    """The round's latency constraint for the scenario (else the one it runs as):
    under early stopping on the target latency given, else on the measured p99;
    never for a run judged by TTFT/TPOT limits."""
    if scenario in rules.latency_ms.get(model, {}):
        return
    limits = rules.latency_constraint_ms.get(model, {})
    limit_ms = limits.get(scenario, limits.get(run_as))
    if limit_ms is None:
        return
    key = "effective_target_latency_ns" if early else P99_LATENCY
    found = number(log.get(key))
    if found is None:
        out.append(missing_key(log, key))
    elif found > limit_ms * NS_PER_MS:
        what = "the target latency given to early stopping" if early else "the p99 latency"
        out.append(located("latency-constraint-exceeded", log.at(key),
                           f"<= {limit_ms:g} ms ({model} {scenario}, {rules.round})",
                           f"{found / NS_PER_MS:g} ms", f"{what} is over the round's latency constraint"))


def _min_queries(log, rules: RoundRules, model: str, scenario: str, early: bool,
                 division: str | None, out: list[Finding]) -> None:
    """The minimum query count outside early stopping; samples per query of a closed Offline run."""
    minimum = rules.min_queries.get(model, {}).get(scenario)
    if minimum is not None and not early:
        _at_least(log, "effective_min_query_count", minimum, "min-queries-short",
                  f"the run's minimum query count is below {rules.round}'s for {model} {scenario}", out)
    spq = rules.offline_min_spq.get(model)
    if spq is not None and scenario == "Offline" and division in (None, "closed"):
        _at_least(log, "effective_samples_per_query", spq, "samples-per-query-low",
                  f"an Offline query of {model} must hold at least {spq} samples", out)


def _validity(log: LoadgenLog, rules: RoundRules, out: list[Finding]) -> None:
    key = "result_validity"
    found = log.get(key)
    if found is None:
        out.append(missing_key(log, key))
    elif found != rules.result_validity:
        reasons = [why for flag, why in VALIDITY_FLAGS.items() if log.get(flag) is False]
        extra = str(log.get("result_invalid_reason") or "").strip()
        detail = "; ".join(reasons + ([extra] if extra else [])) or "no reason logged"
        out.append(located("run-invalid", log.at(key), rules.result_validity,
                           json_text(found), f"LoadGen marked the run {found} ({detail})"))


def _token_mode(log: LoadgenLog, model: str, out: list[Finding]) -> None:
    """LoadGen logs requested_use_token_latencies only when it is on."""
    key = "requested_use_token_latencies"
    if log.get(key) is not True:
        found = "absent (off)" if log.get(key) is None else json_text(log.get(key))
        out.append(located("token-latencies-off", log.at(key), "true", found,
                           f"{model} must run with token latencies"))


def _token_latencies(log, rules: RoundRules, model: str, scenario: str, out: list[Finding]) -> None:
    limits = rules.latency_ms[model].get(scenario)
    if not limits:
        return
    others = {sc: lim for sc, lim in rules.latency_ms[model].items() if sc != scenario}
    for kind, setting, p99_key in TOKEN_LATENCIES:
        limit_ns = limits[kind] * NS_PER_MS
        requested = number(log.get(setting))
        if requested is not None and requested != limit_ns:
            _setting_mismatch(log, scenario, kind, setting, requested, limit_ns, others, out)
        p99 = number(log.get(p99_key))
        if p99 is None:
            out.append(missing_key(log, p99_key))
        elif p99 > limit_ns:
            out.append(located("latency-limit-exceeded", log.at(p99_key),
                               f"<= {limits[kind]:g} ms ({scenario} {kind.upper()} limit)",
                               f"{p99 / NS_PER_MS:g} ms",
                               f"p99 {kind.upper()} is over the {scenario} limit"))


def _setting_mismatch(log, scenario, kind, setting, requested, limit_ns, others, out) -> None:
    """Noted only: as in MLCommons' checker, the measured p99 decides."""
    twin = next((sc for sc, lim in others.items() if lim[kind] * NS_PER_MS == requested), None)
    label = f"{scenario} folder whose log carries {twin}'s limits" if twin else \
        f"{scenario} run made with another {kind.upper()} limit"
    out.append(located("latency-setting-mismatch", log.at(setting),
                       f"{limit_ns / NS_PER_MS:g} ms ({scenario})", f"{requested / NS_PER_MS:g} ms",
                       f"a {label}", severity=Severity.WARNING))


def _equal(log, key, expected, code, message, out) -> None:
    found = log.get(key)
    if found is None:
        out.append(missing_key(log, key))
    elif found != expected or isinstance(found, bool) != isinstance(expected, bool):
        out.append(located(code, log.at(key), json_text(expected), json_text(found), message))


def _at_least(log, key, minimum, code, message, out, unit: str = "") -> None:
    found = number(log.get(key))
    if found is None:
        out.append(missing_key(log, key))
    elif found < minimum:
        out.append(located(code, log.at(key), f">= {minimum}{unit}",
                           f"{log.get(key)}{unit}", message))


def missing_key(log: LoadgenLog, key: str) -> Finding:
    return located("missing-log-key", log.where.at(key=key), f"a {key} entry",
                   "<absent or not a value>", f"the log has no usable {key}")
