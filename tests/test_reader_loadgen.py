"""The LoadGen detail-log parser and the round rules applied to a run.

Logs are genuine: made in the session by mlcommons-loadgen with a tiny SUT
(tests/_loadgen.py), plus the real v5.1 logs in tests/real.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from _loadgen import RUNS, V51_SEEDS, generated_runs, relaxed_rules
from pipeline.core.findings import CODES
from pipeline.readers import loadgen, round_rules, run_checks
from pipeline.readers.round_rules import MetricSpec, metric_for
from conftest import RULES

SHARED = Path(__file__).resolve().parent / "real"   # tests/real/PROVENANCE.md
TREE = SHARED / "v5.1-submission-tree" / "closed"
AMD_RUNS = TREE / "AMD" / "results" / "8xMI300X_2xEPYC_9575F" / "llama2-70b-99"
DETAIL = "performance/run_1/mlperf_log_detail.txt"
SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    return generated_runs(tmp_path_factory)


def parsed(run_dir: Path, name: str = "log") -> loadgen.LoadgenLog:
    log, found = loadgen.read_log(run_dir / "mlperf_log_detail.txt", name, 1 << 26)
    assert log is not None and not found and not log.findings
    return log


def codes(findings) -> set[str]:
    return {f.code for f in findings}


def errors(findings) -> list:
    return [f for f in findings if f.severity == "error"]


def mllog(key: str, value: object) -> str:
    return ":::MLLOG " + json.dumps({"key": key, "value": value, "time_ms": 0.0,
                                     "namespace": "mlperf::logging", "event_type": "POINT_IN_TIME",
                                     "metadata": {"is_error": False}})


# ---- parsing --------------------------------------------------------------------------

def test_first_occurrence_of_a_key_wins():
    log = loadgen.parse("\n".join([mllog("result_validity", "VALID"),
                                   mllog("result_validity", "INVALID")]), "x")
    assert log.get("result_validity") == "VALID"
    assert log.lines["result_validity"] == 1
    assert log.at("result_validity").place == "line 1, key result_validity"


def test_a_malformed_line_is_a_finding_with_its_line_number():
    text = "\n".join([mllog("a", 1), ':::MLLOG {"key": "b", "value": 2', mllog("c", 3),
                      ':::MLLOG ["not", "an", "object"]', ':::MLLOG {"value": "no key"}'])
    log = loadgen.parse(text, "detail.txt")
    assert [f.place for f in log.findings] == ["line 2", "line 4", "line 5"]
    assert codes(log.findings) == {"malformed-log-line"}
    assert log.get("a") == 1 and log.get("c") == 3 and log.get("b") is None


def test_deep_nesting_in_a_line_is_malformed_not_a_recursion_error():
    text = ':::MLLOG {"key": "deep", "value": ' + "[" * 200_000 + "]" * 200_000 + "}"
    log = loadgen.parse(text, "x")
    assert codes(log.findings) == {"malformed-log-line"}


def test_many_malformed_lines_are_summarised():
    log = loadgen.parse("\n".join([":::MLLOG {"] * 50), "x")
    assert len(log.findings) == loadgen.MAX_MALFORMED_REPORTED + 1
    assert "40 more" in log.findings[-1].found


def test_lines_without_the_marker_are_ignored():
    log = loadgen.parse("\n".join(["hello", "", mllog("k", "v"), "MLLOG junk"]), "x")
    assert log.get("k") == "v" and not log.findings


@given(st.text(max_size=300))
def test_parse_never_raises(text):
    loadgen.parse(":::MLLOG " + text + "\n" + text, "x")


@given(st.lists(st.integers(min_value=0, max_value=10**12), min_size=1, max_size=3000))
def test_long_integer_arrays_are_checked_not_kept(values):
    line = mllog("loaded_qsl_set", values)
    log = loadgen.parse(line + "\n" + mllog("after", 1), "x")
    assert not log.findings and log.get("after") == 1
    if len(line) > 4096:
        assert log.get("loaded_qsl_set") == []      # elided: never used
    else:
        assert log.get("loaded_qsl_set") == values


@pytest.mark.parametrize("array", ["[1,,2", "[1,2,]", "[,1,2]", "[1,02]", "[07,1]", "[1,2"])
def test_a_broken_long_array_is_still_malformed(array):
    body = array.replace("2", ",".join(["2"] * 3000), 1)
    text = ':::MLLOG {"key": "loaded_qsl_set", "value": ' + body + ', "time_ms": 0}'
    assert codes(loadgen.parse(text, "x").findings) == {"malformed-log-line"}


def test_real_v51_logs_parse_without_findings():
    logs = sorted(TREE.glob(f"*/results/*/*/*/{DETAIL}"))
    assert len(logs) == 30
    for path in logs:
        log = parsed(path.parent)
        assert log.get("result_validity") == "VALID"
        assert log.get("effective_qsl_rng_seed") == V51_SEEDS[0]


# ---- rules as data ----------------------------------------------------------------------

def test_every_round_has_rules_and_they_load():
    rounds = round_rules.all_rounds(RULES)
    assert {"v4.1", "v5.0", "v5.1", "v6.0"} <= set(rounds)
    v51, v60 = rounds["v5.1"], rounds["v6.0"]
    assert v51.seeds["effective_qsl_rng_seed"] == 1780908523862526354
    assert v60.seeds["effective_qsl_rng_seed"] == 2465351861681999779
    assert v51.min_duration_ms == 600000 and v51.sample_count["llama2-70b-99"] == 24576
    assert v51.latency_ms["llama2-70b-99"] == {"Server": {"ttft": 2000, "tpot": 200},
                                               "Interactive": {"ttft": 450, "tpot": 40}}
    assert v51.compliance["llama2-70b-99"] == ("TEST06",)
    assert v51.enforced("accuracy", "closed") and not v51.enforced("accuracy", "open")
    assert v60.compliance_layout.startswith("results/") and v51.compliance_layout.startswith("compliance/")


def test_the_v51_seeds_are_the_ones_real_v51_logs_show():
    log = parsed(AMD_RUNS / "Server" / "performance" / "run_1")
    for key, seed in round_rules.all_rounds(RULES)["v5.1"].seeds.items():
        assert log.get(key) == seed


def test_llama2_accuracy_targets():
    targets = {t.metric: t for t in round_rules.all_rounds(RULES)["v5.1"].accuracy["llama2-70b-99"]}
    assert targets["ROUGE1"].low == pytest.approx(44.4312 * 0.99) and targets["ROUGE1"].high is None
    assert targets["ROUGE2"].low == pytest.approx(22.0352 * 0.99)
    assert targets["ROUGEL"].low == pytest.approx(28.6162 * 0.99)
    strict = {t.metric: t for t in round_rules.all_rounds(RULES)["v5.1"].accuracy["llama2-70b-99.9"]}
    assert strict["ROUGE1"].low == pytest.approx(44.4312 * 0.999)
    tps = targets["TOKENS_PER_SAMPLE"]
    assert tps.low == pytest.approx(294.45 * 0.9) and tps.high == pytest.approx(294.45 * 1.1)
    assert tps.failed_bound(tps.low) is None and tps.failed_bound(tps.high) is None     # inclusive
    assert tps.failed_bound(tps.high + 1e-9) == "high" and tps.failed_bound(tps.low - 1e-9) == "low"


@pytest.mark.parametrize("model, scenario, key, units", [
    ("llama2-70b-99", "Offline", "result_tokens_per_second", "Tokens/s"),
    ("llama2-70b-99", "Server", "result_completed_tokens_per_second", "Tokens/s"),
    ("llama2-70b-99", "Interactive", "result_completed_tokens_per_second", "Tokens/s"),
    ("resnet", "Offline", "result_samples_per_second", "Samples/s"),
    ("resnet", "Server", "result_completed_samples_per_sec", "Queries/s"),
    ("resnet", "SingleStream", "early_stopping_latency_ss", "Latency (ms)"),
    ("resnet", "MultiStream", "early_stopping_latency_ms", "Latency (ms)"),
])
def test_which_key_holds_the_result(model, scenario, key, units):
    from pipeline.core import rules

    spec = metric_for(round_rules.all_rounds(RULES)["v5.1"], round_rules.formats(RULES), model,
                      RULES.models()[model].family, scenario)
    assert (spec.key, spec.units) == (key, units)


def test_result_token_throughput_is_never_read():
    data = yaml.safe_load((SCHEMAS / "rules" / "metrics.yaml").read_text())
    assert "result_token_throughput" in data["never_use"]
    for path in (SCHEMAS / "rules").glob("*.yaml"):
        assert "key: result_token_throughput}" not in path.read_text()


def test_latencies_are_published_in_ms():
    log = loadgen.parse(mllog("early_stopping_latency_ss", 1234567), "x")
    assert loadgen.result_text(log, MetricSpec("early_stopping_latency_ss", "Latency (ms)", 1e6)) == "1.234567"


def test_every_new_finding_code_is_registered():
    for code in ("malformed-log-line", "run-invalid", "wrong-seed", "min-duration-short",
                 "latency-limit-exceeded", "latency-setting-mismatch", "too-deeply-nested"):
        assert code in CODES


# ---- genuine LoadGen runs ---------------------------------------------------------------

@pytest.mark.parametrize("name, scenario, key", [
    ("offline", "Offline", "result_tokens_per_second"),
    ("server", "Server", "result_completed_tokens_per_second"),
    ("interactive", "Interactive", "result_completed_tokens_per_second"),
])
def test_valid_llm_runs_pass_relaxed_rules(runs, name, scenario, key):
    log = parsed(runs[name])
    assert log.get("result_validity") == "VALID"
    assert run_checks.check_run(log, relaxed_rules(), "llama2-70b-99", scenario) == []
    spec = metric_for(relaxed_rules(), round_rules.formats(RULES), "llama2-70b-99", "llm", scenario)
    assert spec.key == key
    assert float(loadgen.result_text(log, spec)) == log.get(key) > 0


def test_interactive_is_a_server_run_told_apart_by_its_limits(runs):
    log = parsed(runs["interactive"])
    assert log.get("effective_scenario") == "Server"
    assert log.get("requested_server_ttft_latency") == 450_000_000
    assert log.get("requested_server_tpot_latency") == 40_000_000


def test_a_server_run_filed_as_interactive_is_judged_by_its_measured_latencies(runs):
    """As MLCommons' checker: the measured p99 TTFT/TPOT decide, the limits the
    run was made with are only noted (this run's p99 is within Interactive's)."""
    found = run_checks.check_run(parsed(runs["server"]), relaxed_rules(), "llama2-70b-99", "Interactive")
    assert not errors(found) and codes(found) == {"latency-setting-mismatch"}
    ttft = next(f for f in found if "ttft" in f.place)
    assert (ttft.expected, ttft.found, ttft.severity) == ("450 ms (Interactive)", "2000 ms", "warning")
    assert "Interactive folder whose log carries Server's limits" in ttft.message


def test_a_server_run_over_the_interactive_limits_filed_as_interactive_is_rejected(runs):
    log = parsed(runs["server"])
    log.values["result_first_token_99.00_percentile_latency_ns"] = 451_000_000
    found = run_checks.check_run(log, relaxed_rules(), "llama2-70b-99", "Interactive")
    assert codes(errors(found)) == {"latency-limit-exceeded"}
    (over,) = errors(found)
    assert (over.expected, over.found) == ("<= 450 ms (Interactive TTFT limit)", "451 ms")


def test_an_interactive_run_filed_as_server_is_only_noted(runs):
    found = run_checks.check_run(parsed(runs["interactive"]), relaxed_rules(), "llama2-70b-99", "Server")
    assert found and not errors(found)
    assert codes(found) == {"latency-setting-mismatch"}


def test_a_too_short_run_is_invalid(runs):
    log = parsed(runs["offline-too-short"])
    found = run_checks.check_run(log, relaxed_rules(), "llama2-70b-99", "Offline")
    assert codes(found) == {"run-invalid"}
    assert (found[0].expected, found[0].found) == ("VALID", "INVALID")
    assert "min duration not met" in found[0].message
    assert found[0].where == log.at("result_validity")


def test_a_slow_first_token_breaks_the_interactive_ttft_limit(runs):
    log = parsed(runs["interactive-slow-first-token"])
    found = run_checks.check_run(log, relaxed_rules(), "llama2-70b-99", "Interactive")
    over = [f for f in found if f.code == "latency-limit-exceeded"]
    assert over and over[0].place.endswith("key result_first_token_99.00_percentile_latency_ns")
    assert over[0].expected == "<= 450 ms (Interactive TTFT limit)"
    assert float(over[0].found.split()[0]) > 450
    assert "run-invalid" in codes(found)     # LoadGen itself saw the constraint fail


def test_real_rules_reject_a_sub_second_run(runs):
    log = parsed(runs["server"])
    found = run_checks.check_run(log, round_rules.all_rounds(RULES)["v5.1"], "llama2-70b-99", "Server")
    assert codes(found) == {"min-duration-short", "sample-count-low"}
    short = next(f for f in found if f.code == "min-duration-short")
    assert (short.expected, short.found) == (">= 600000 ms", "200 ms")


def test_a_wrong_seed_names_key_expected_and_found(runs):
    rules = relaxed_rules(seeds={**relaxed_rules().seeds, "effective_schedule_rng_seed": 42})
    found = run_checks.check_run(parsed(runs["server"]), rules, "llama2-70b-99", "Server")
    assert codes(found) == {"wrong-seed"}
    assert found[0].place.endswith("key effective_schedule_rng_seed")
    assert (found[0].expected, found[0].found) == ("42", str(V51_SEEDS[2]))


def test_token_latencies_are_required_for_llms(runs):
    found = run_checks.check_run(parsed(runs["singlestream"]), relaxed_rules(), "llama2-70b-99", "SingleStream")
    assert "token-latencies-off" in codes(found)


def test_a_sample_based_singlestream_run(runs):
    log = parsed(runs["singlestream"])
    assert run_checks.check_run(log, relaxed_rules(), "resnet", "SingleStream") == []
    spec = metric_for(relaxed_rules(), round_rules.formats(RULES), "resnet", "samples", "SingleStream")
    assert float(loadgen.result_text(log, spec)) == pytest.approx(log.get("early_stopping_latency_ss") / 1e6)


def test_the_round_is_known_from_the_seeds(runs):
    rounds = round_rules.all_rounds(RULES)
    rules, found = run_checks.round_of(parsed(runs["server"]), rounds, None)
    assert rules.round == "v5.1" and not found
    rules, found = run_checks.round_of(parsed(runs["server"]), rounds, "v6.0")
    assert rules.round == "v6.0"                 # a stated round wins; its seeds then fail
    assert "wrong-seed" in codes(run_checks.check_run(parsed(runs["server"]), rules, "llama2-70b-99", "Server"))
    rules, found = run_checks.round_of(parsed(runs["server"]), rounds, "v9.9")
    assert rules is None and codes(found) == {"rules-missing"}


def test_runs_cover_every_scenario_the_tests_need():
    assert {r.scenario for r in RUNS.values()} == {"Offline", "Server", "SingleStream"}


# ---- parsing only the keys that count ---------------------------------------------------

def counted_keys() -> frozenset[str]:
    from pipeline.readers.tree_result import log_keys

    return log_keys(round_rules.all_rounds(RULES), round_rules.formats(RULES))


def test_the_keys_that_count_include_every_key_the_checks_read():
    keys = counted_keys()
    assert set(run_checks.LOG_KEYS) <= keys
    assert {"effective_sample_index_rng_seed", "result_tokens_per_second",
            "early_stopping_latency_ms"} <= keys
    assert "loaded_qsl_set" not in keys and "result_token_throughput" not in keys


def test_real_logs_parsed_for_the_keys_that_count_equal_the_whole_parse():
    keys = counted_keys()
    for path in sorted(TREE.glob(f"*/results/*/*/*/{DETAIL}")):
        text = path.read_text(encoding="utf-8")
        whole, few = loadgen.parse(text, "x"), loadgen.parse(text, "x", keys)
        assert few.values == {k: v for k, v in whole.values.items() if k in keys}
        assert few.lines == {k: v for k, v in whole.lines.items() if k in keys}
        assert not few.findings


def test_asking_for_a_key_not_parsed_is_a_bug_not_a_none():
    log = loadgen.parse(mllog("result_validity", "VALID"), "x", frozenset({"result_validity"}))
    assert log.get("result_validity") == "VALID"
    with pytest.raises(LookupError):
        log.get("loaded_qsl_set")


def test_a_duplicate_among_the_keys_that_count_is_found_and_others_are_not_read():
    text = "\n".join([mllog("result_validity", "VALID"), mllog("sut_name", "a"),
                      mllog("sut_name", "b"), mllog("result_validity", "INVALID")])
    log = loadgen.parse(text, "x", frozenset({"result_validity"}))
    assert [(f.code, f.place) for f in log.findings] == [("duplicate-key", "line 4, key result_validity")]
    assert log.values == {"result_validity": "VALID"}


def test_a_line_of_another_key_cut_short_is_still_malformed():
    keys = frozenset({"result_validity"})
    for cut in (1, 2, 10, 100):
        line = mllog("sut_name", "x" * 200)
        text = "\n".join([mllog("result_validity", "VALID"), line[:-cut]])
        log = loadgen.parse(text, "x", keys)
        assert [(f.code, f.place) for f in log.findings] == [("malformed-log-line", "line 2")], cut


def test_a_line_that_may_hide_a_key_that_counts_is_decoded():
    keys = frozenset({"result_validity"})
    escaped = ':::MLLOG {"key": "result_\\u0076alidity", "value": "VALID", "metadata": {}}'
    assert loadgen.parse(escaped, "x", keys).get("result_validity") == "VALID"
    twice = ':::MLLOG {"key": "sut_name", "value": 1, "key": "result_validity", "metadata": {}}'
    assert loadgen.parse(twice, "x", keys).lines == {"result_validity": 1}
    spaced = ':::MLLOG  {"key":"result_validity","value":"INVALID"}'
    assert loadgen.parse(spaced, "x", keys).get("result_validity") == "INVALID"


def test_a_log_with_no_marked_line_is_still_no_log_when_parsed_for_few_keys():
    log = loadgen.parse("hello\nworld\n", "x", frozenset({"result_validity"}))
    assert codes(log.findings) == {"format-mismatch"}


@given(st.lists(st.sampled_from(["result_validity", "sut_name", "effective_scenario", "loaded_qsl_set"]),
                max_size=8),
       st.lists(st.integers(min_value=0, max_value=3), max_size=8))
def test_parsing_few_keys_agrees_with_the_whole_parse_on_those_keys(names, values):
    keys = frozenset({"result_validity", "effective_scenario"})
    text = "\n".join(mllog(n, v) for n, v in zip(names, values))
    whole, few = loadgen.parse(text, "x"), loadgen.parse(text, "x", keys)
    assert few.values == {k: v for k, v in whole.values.items() if k in keys}
    assert [f for f in few.findings if f.code != "duplicate-key" or any(k in f.place for k in keys)] == \
        [f for f in whole.findings if f.code != "duplicate-key" or any(k in f.place for k in keys)]
