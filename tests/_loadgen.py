"""Genuine LoadGen logs for the reader tests, made with mlcommons-loadgen
(``mlperf_loadgen``) and a tiny system under test: a QSL of a few samples and
an SUT that answers at once (or after a set delay), reporting its first token
through ``FirstTokenComplete`` when token latencies are on.

Runs are short (a fraction of a second), so they are judged by a relaxed,
test-only copy of the v5.1 rules (:func:`relaxed_rules`), or checked for the
right rejection under the real ones. Generated logs are cached for the whole
session (:func:`generated_runs`).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import threading
from pathlib import Path

import numpy as np

from pipeline.readers import round_rules
from conftest import RULES

SAMPLES = 8
V51_SEEDS = (1780908523862526354, 14771362308971278857, 18209322760996052031)
TOKENS = np.arange(1, 9, dtype=np.int32)          # the answer to every query: 8 tokens


@dataclasses.dataclass(frozen=True)
class Run:
    """How to drive one LoadGen run."""

    scenario: str = "Server"            # LoadGen scenario (Interactive runs as Server)
    tokens: bool = True                 # use_token_latencies (LLMs)
    ttft_ms: float = 450                # requested TTFT / TPOT limits (Server runs)
    tpot_ms: float = 40
    min_duration_ms: int = 200
    min_query_count: int = 1000
    target_qps: float = 2000            # Server
    expected_qps: float = 1000          # Offline
    expected_latency_ns: int = 10_000   # SingleStream: small, so LoadGen queues enough queries
    first_token_delay_s: float = 0.0    # SUT: wait before the first token
    done_delay_s: float = 0.0           # SUT: wait before completing (Offline: fill min duration)
    seeds: tuple[int, int, int] = V51_SEEDS


def run_loadgen(outdir: Path, run: Run) -> Path:
    """Make one run; returns the folder holding mlperf_log_detail.txt and summary."""
    import mlperf_loadgen as lg

    outdir.mkdir(parents=True, exist_ok=True)
    timers: list[threading.Timer] = []

    def answer(samples) -> None:
        if run.tokens:
            lg.FirstTokenComplete([lg.QuerySampleResponse(s.id, TOKENS.ctypes.data, 4, 1) for s in samples])
        done = [lg.QuerySampleResponse(s.id, TOKENS.ctypes.data, TOKENS.nbytes, len(TOKENS))
                for s in samples] if run.tokens else \
            [lg.QuerySampleResponse(s.id, TOKENS.ctypes.data, TOKENS.nbytes) for s in samples]
        if run.done_delay_s:
            _later(timers, run.done_delay_s, lg.QuerySamplesComplete, done)
        else:
            lg.QuerySamplesComplete(done)

    def issue(samples) -> None:
        if run.first_token_delay_s:
            _later(timers, run.first_token_delay_s, answer, samples)
        else:
            answer(samples)

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(SAMPLES, SAMPLES, lambda s: None, lambda s: None)
    try:
        lg.StartTestWithLogSettings(sut, qsl, _settings(lg, run), _log_settings(lg, outdir))
    finally:
        for timer in timers:
            timer.join()
        lg.DestroyQSL(qsl)
        lg.DestroySUT(sut)
    return outdir


def _later(timers: list, delay: float, fn, *args) -> None:
    timer = threading.Timer(delay, fn, args)
    timers.append(timer)
    timer.start()


def _settings(lg, run: Run):
    s = lg.TestSettings()
    s.scenario = getattr(lg.TestScenario, run.scenario)
    s.mode = lg.TestMode.PerformanceOnly
    s.min_duration_ms = run.min_duration_ms
    s.min_query_count = run.min_query_count
    s.use_token_latencies = run.tokens
    s.server_target_qps = run.target_qps
    s.offline_expected_qps = run.expected_qps
    s.single_stream_expected_latency_ns = run.expected_latency_ns
    s.ttft_latency = int(run.ttft_ms * 1_000_000)
    s.tpot_latency = int(run.tpot_ms * 1_000_000)
    s.qsl_rng_seed, s.sample_index_rng_seed, s.schedule_rng_seed = run.seeds
    s.performance_sample_count_override = SAMPLES
    return s


def _log_settings(lg, outdir: Path):
    ls = lg.LogSettings()
    ls.log_output.outdir = str(outdir)
    ls.log_output.copy_summary_to_stdout = False
    return ls


# The runs the tests use. Interactive is a Server run with Interactive's limits.
RUNS = {
    "offline": Run(scenario="Offline", min_query_count=1, done_delay_s=0.25),
    "server": Run(ttft_ms=2000, tpot_ms=200),
    "interactive": Run(ttft_ms=450, tpot_ms=40),
    "offline-too-short": Run(scenario="Offline", min_query_count=1),
    "interactive-slow-first-token": Run(ttft_ms=450, tpot_ms=40, min_query_count=100, target_qps=200,
                                        first_token_delay_s=0.47),
    "singlestream": Run(scenario="SingleStream", tokens=False, min_query_count=200, min_duration_ms=50,
                        expected_latency_ns=1_000),  # enough queries pre-generated on a loaded machine
}
_CACHE: dict[str, dict[str, Path]] = {}


def generated_runs(tmp_path_factory) -> dict[str, Path]:
    """Every run of :data:`RUNS`, made once per test session."""
    if "runs" not in _CACHE:
        base = tmp_path_factory.mktemp("loadgen")
        _CACHE["runs"] = {name: run_loadgen(base / name, run) for name, run in RUNS.items()}
    return _CACHE["runs"]


def relaxed_rules(**changes) -> round_rules.RoundRules:
    """The real v5.1 rules with what a sub-second run cannot meet relaxed:
    the minimum duration, the performance sample count and the Offline
    samples per query."""
    real = round_rules.all_rounds(RULES)["v5.1"]
    relaxed = dataclasses.replace(
        real, min_duration_ms=50,
        sample_count={model: min(count, SAMPLES) for model, count in real.sample_count.items()},
        offline_min_spq={model: min(count, SAMPLES) for model, count in real.offline_min_spq.items()})
    return dataclasses.replace(relaxed, **changes)


# ---- a tiny submission tree around generated logs ----------------------------------

SYSTEM = "8xMI300X_2xEPYC_9575F"
REAL_AMD = Path(__file__).resolve().parent / "real" / "v5.1-submission-tree" / "closed" / "AMD"


def make_tree(root: Path, runs: dict[str, Path], submitter: str = "TestCo",
              model: str = "llama2-70b-99") -> Path:
    """``root/closed/<submitter>`` with one result per {scenario folder: run}.
    The system description, accuracy.txt and TEST06 files are the real AMD
    ones (a passing accuracy and compliance), re-labelled for ``submitter``."""
    sub = root / "closed" / submitter
    facts = json.loads((REAL_AMD / "systems" / f"{SYSTEM}.json").read_text())
    facts["submitter"] = submitter
    (sub / "systems").mkdir(parents=True, exist_ok=True)
    (sub / "systems" / f"{SYSTEM}.json").write_text(json.dumps(facts, indent=1))
    real_results = REAL_AMD / "results" / SYSTEM / "llama2-70b-99"
    real_tests = REAL_AMD / "compliance" / SYSTEM / "llama2-70b-99"
    for folder, run_dir in runs.items():
        scenario = sub / "results" / SYSTEM / model / folder
        perf = scenario / "performance" / "run_1"
        perf.mkdir(parents=True, exist_ok=True)
        for name in ("mlperf_log_detail.txt", "mlperf_log_summary.txt"):
            shutil.copyfile(run_dir / name, perf / name)
        (scenario / "accuracy").mkdir(exist_ok=True)
        shutil.copyfile(real_results / "Server" / "accuracy" / "accuracy.txt",
                        scenario / "accuracy" / "accuracy.txt")
        test = sub / "compliance" / SYSTEM / model / folder / "TEST06"
        test.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real_tests / "Server" / "TEST06" / "verify_accuracy.txt", test / "verify_accuracy.txt")
    return sub
