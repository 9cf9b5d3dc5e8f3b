"""What the completed round rules add to the run checks, on genuine logs: the
latency constraint of non-LLM models, minimum query counts, Offline samples per
query, and upper accuracy limits. Logs are made by mlcommons-loadgen
(tests/_loadgen.py) or are the real v5.1 AMD tree, copied and changed."""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
from pathlib import Path

import pytest

import _loadgen
from _loadgen import REAL_AMD, Run, generated_runs, make_tree, relaxed_rules, run_loadgen
from pipeline.core.findings import CODES
from pipeline.readers import loadgen, round_rules, run_checks, tree
from conftest import RULES

NEW_CODES = ("latency-constraint-exceeded", "min-queries-short", "samples-per-query-low",
             "accuracy-above-limit", "model-not-in-round")


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """The shared generated runs, plus a non-LLM Server run whose target latency
    is resnet's 15 ms (LoadGen's default target is looser)."""
    out = dict(generated_runs(tmp_path_factory))
    base = _loadgen._settings

    def with_target(lg, run):
        settings = base(lg, run)
        settings.server_target_latency_ns = 15_000_000
        return settings
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_loadgen, "_settings", with_target)
        out["server-15ms"] = run_loadgen(tmp_path_factory.mktemp("loadgen-15ms"),
                                         Run(tokens=False, ttft_ms=2000, tpot_ms=200))
    return out


def log_of(run_dir: Path) -> loadgen.LoadgenLog:
    log, found = loadgen.read_log(run_dir / "mlperf_log_detail.txt", "run/mlperf_log_detail.txt", 1 << 26)
    assert log is not None and not found
    return log


def only(findings, code: str) -> list:
    return [f for f in findings if f.code == code]


def test_new_codes_are_registered():
    assert set(NEW_CODES) <= set(CODES)


def test_non_llm_server_target_latency_within_the_constraint(made):
    rules = relaxed_rules()
    ok = run_checks.check_run(log_of(made["server-15ms"]), rules, "resnet", "Server", "closed")
    assert not only(ok, "latency-constraint-exceeded")
    loose = log_of(made["server"])            # LoadGen's default target latency
    assert loose.get("effective_target_latency_ns") > 15_000_000
    [f] = only(run_checks.check_run(loose, rules, "resnet", "Server", "closed"), "latency-constraint-exceeded")
    assert f.where == loose.at("effective_target_latency_ns") and f.place.startswith("line ")
    assert f.expected == "<= 15 ms (resnet Server, v5.1)"
    assert f.found == f"{loose.get('effective_target_latency_ns') / 1e6:g} ms"


def test_an_llm_is_judged_by_its_token_latencies_not_the_query_constraint(made):
    """llama2-70b Server has a 20 s constraint; the run's target latency is
    LoadGen's default, within it, and its p99 is not looked at."""
    found = run_checks.check_run(log_of(made["server"]), relaxed_rules(), "llama2-70b-99", "Server", "closed")
    assert not only(found, "latency-constraint-exceeded")


def test_outside_early_stopping_the_measured_p99_counts(made):
    log = log_of(made["server-15ms"])
    p99 = log.get(run_checks.P99_LATENCY)
    rules = relaxed_rules(early_stopping=frozenset(),
                          latency_constraint_ms={"resnet": {"Server": p99 / 2 / 1e6}})
    [f] = only(run_checks.check_run(log, rules, "resnet", "Server", "closed"), "latency-constraint-exceeded")
    assert f.where == log.at(run_checks.P99_LATENCY)
    rules = dataclasses.replace(rules, latency_constraint_ms={"resnet": {"Server": p99 / 1e6}})
    assert not only(run_checks.check_run(log, rules, "resnet", "Server", "closed"),
                    "latency-constraint-exceeded")   # the bound is inclusive


def test_min_queries_count_outside_early_stopping_only(made):
    single = log_of(made["singlestream"])     # min_query_count 200, resnet's SingleStream minimum 1024
    assert single.get("effective_min_query_count") < 1024
    rules = relaxed_rules()
    assert not only(run_checks.check_run(single, rules, "resnet", "SingleStream", "closed"), "min-queries-short")
    no_early = dataclasses.replace(rules, early_stopping=frozenset())
    [f] = only(run_checks.check_run(single, no_early, "resnet", "SingleStream", "closed"), "min-queries-short")
    assert f.where == single.at("effective_min_query_count")
    assert (f.expected, f.found) == (">= 1024", str(single.get("effective_min_query_count")))
    offline = log_of(made["offline"])         # Offline: minimum 1
    assert not only(run_checks.check_run(offline, rules, "resnet", "Offline", "closed"), "min-queries-short")


def test_offline_samples_per_query_in_the_closed_division(made):
    log = log_of(made["offline"])
    real = round_rules.all_rounds(RULES)["v5.1"]
    rules = relaxed_rules(offline_min_spq=real.offline_min_spq)
    [f] = only(run_checks.check_run(log, rules, "resnet", "Offline", "closed"), "samples-per-query-low")
    assert f.expected == ">= 24576" and f.where == log.at("effective_samples_per_query")
    assert not only(run_checks.check_run(log, rules, "resnet", "Offline", "open"), "samples-per-query-low")


# ---- the real v5.1 AMD tree ------------------------------------------------------------

SYSTEM = "8xMI300X_2xEPYC_9575F"


@pytest.fixture
def amd(tmp_path) -> Path:
    dst = tmp_path / "closed" / "AMD"
    shutil.copytree(REAL_AMD, dst)
    for folder, dirs, files in os.walk(dst):
        for name in dirs + files:
            path = Path(folder) / name
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return dst


def test_the_real_tree_meets_the_completed_rules(amd):
    result = tree.read(amd.parent.parent, "real", RULES)
    assert result.records and not result.dispositions
    assert not [f for f in result.findings if f.code in NEW_CODES]


def test_an_llm_server_log_is_not_judged_by_the_query_latency(amd):
    """llama2-70b Server: a 20 s constraint in the checker's table, but the run
    is judged by TTFT/TPOT; a target latency over 20 s changes nothing."""
    detail = amd / "results" / SYSTEM / "llama2-70b-99" / "Server" / "performance" / "run_1" / "mlperf_log_detail.txt"
    text = detail.read_text()
    old = '"key": "effective_target_latency_ns", "value": 0,'
    assert text.count(old) == 1
    detail.write_text(text.replace(old, '"key": "effective_target_latency_ns", "value": 30000000000,'))
    result = tree.read(amd.parent.parent, "real", RULES)
    assert result.records and not result.dispositions


def test_a_looser_target_latency_in_a_tree_is_located(tmp_path, made):
    """A resnet Server result built around a genuine LoadGen log made with
    LoadGen's default target latency (looser than resnet's 15 ms)."""
    make_tree(tmp_path, {"Server": made["server"]}, model="resnet")
    result = tree.read(tmp_path, "gen", RULES, rounds={"v5.1": relaxed_rules()})
    [f] = [f for f in result.findings if f.code == "latency-constraint-exceeded"]
    detail = tmp_path / "closed" / "TestCo" / "results" / SYSTEM / "resnet" / "Server" / "performance" / "run_1" \
        / "mlperf_log_detail.txt"
    line = next(n for n, s in enumerate(detail.read_text().splitlines(), 1) if "effective_target_latency_ns" in s)
    assert f.file.endswith("TestCo/results/8xMI300X_2xEPYC_9575F/resnet/Server/performance/run_1/mlperf_log_detail.txt")
    assert f.place == f"line {line}, key effective_target_latency_ns" and f.severity == "error"
    assert not result.records


def test_tokens_per_sample_over_the_upper_limit_on_a_real_accuracy_file(amd):
    accuracy = amd / "results" / SYSTEM / "llama2-70b-99" / "Offline" / "accuracy" / "accuracy.txt"
    text = accuracy.read_text()
    assert "'tokens_per_sample': 301.1" in text
    accuracy.write_text(text.replace("'tokens_per_sample': 301.1", "'tokens_per_sample': 330.0"))
    result = tree.read(amd.parent.parent, "real", RULES)
    [f] = [f for f in result.findings if f.code == "accuracy-above-limit"]
    line = next(n for n, s in enumerate(accuracy.read_text().splitlines(), 1) if "tokens_per_sample" in s)
    assert (f.line, f.where.key) == (line, "TOKENS_PER_SAMPLE")   # the metric, typed as the key
    assert f.expected == "265.005 <= TOKENS_PER_SAMPLE <= 323.895" and f.found == "330"
    assert [d.codes for d in result.dispositions] == ["accuracy-above-limit"]


def test_the_findings_reference_has_the_round_rule_codes_with_their_meaning():
    page = (Path(__file__).resolve().parents[1] / "docs" / "findings.md").read_text(encoding="utf-8")
    for code in (*NEW_CODES, "accuracy-below-target"):
        assert f"| `{code}` | {CODES[code]} |" in page, code
