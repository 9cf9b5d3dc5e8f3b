"""``submission-tree``: an MLPerf submission folder as MLCommons receives it
(``<division>/<Submitter>/systems/<system>.json`` and
``results/<system>/<model>/<scenario>/...``), from its root, a division or a
submitter folder. The parent lists only the system folders; the rest runs in
worker processes, a few systems at a time, streamed back in order.
"""

from __future__ import annotations

import atexit
import functools
import multiprocessing
import os
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from pipeline.core import textcheck
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.core.rules import Rules, memo
from pipeline.readers import jsonsafe, round_rules
from pipeline.readers.base import ReadResult, as_source, inside, read_text
from pipeline.readers.folder_checks import missing_file
from pipeline.readers.layout import _subfolders, submitter_folders
from pipeline.readers.round_rules import Formats, RoundRules
from pipeline.readers.tree_result import Outcome, ResultJob, judge, log_keys, system_places

NAME = "submission-tree"
PARALLEL_MIN_SYSTEMS = 16     # below this, a worker pool costs more than it saves
MAX_CHUNK = 8                 # systems per task
MAX_SYSTEM_JSON = 1024 * 1024
_WORKER: dict = {}


def read(path: Path, where: Source | str, rules: Rules, round_: str | None = None, workers: int | None = None,
         rounds: dict[str, RoundRules] | None = None) -> ReadResult:
    """Every result of the tree, each judged by ``round_``'s rules, else by the
    round whose official seeds its log shows; ``rounds`` replaces the round
    rules (tests judge quick runs by relaxed rules)."""
    where = as_source(where)
    out = ReadResult()
    units = systems(rules, path, where)
    stated: set[str] = set()
    records = []
    progress = _Progress(len(units), where.path)
    results = 0
    for judged in _judged(rules, units, round_, workers, rounds):
        progress.step()
        for outcome in judged:
            results += 1
            if outcome.record is None:
                out.reject(outcome.cell, outcome.findings)
                continue
            out.findings.extend(outcome.findings)
            records.append(outcome.record)
            stated.add(outcome.round)
    progress.close()
    out.records = records
    if not results:
        out.findings.append(located("missing-file", where,
                                    "results/<system>/<model>/<scenario>/ folders", "none",
                                    "the submission tree holds no result folder"))
    out.round = stated.pop() if len(stated) == 1 else round_
    return out


class _Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal."""

    def __init__(self, total: int, what: str, every: int = 5):
        self.total, self.what, self.every, self.done = total, what, every, 0
        self.on = total >= every and sys.stderr.isatty()

    def step(self) -> None:
        self.done += 1
        if self.on and (self.done % self.every == 0 or self.done == self.total):
            width = 30
            filled = width * self.done // self.total
            sys.stderr.write(f"\r{self.what}: [{'#' * filled}{'.' * (width - filled)}] "
                             f"{self.done}/{self.total} systems")
            sys.stderr.flush()

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _judged(rules: Rules, units: list[SystemUnit], round_: str | None, workers: int | None,
            rounds: dict[str, RoundRules] | None) -> Iterator[list[Outcome]]:
    """The outcomes of each system folder, in order: in a pool of workers when
    there are enough systems, else (or what a broken pool leaves) here."""
    rounds = round_rules.all_rounds(rules) if rounds is None else rounds
    formats = round_rules.formats(rules)
    keys = log_keys(rounds, formats)

    def here(todo) -> Iterator[list[Outcome]]:
        return (judge_system(rules, unit, rounds, formats, round_, keys) for unit in todo)

    count = workers or os.cpu_count() or 1
    if count <= 1 or len(units) < PARALLEL_MIN_SYSTEMS:
        yield from here(units)
        return
    size = max(1, min(MAX_CHUNK, len(units) // (count * 4)))
    chunks = [units[i:i + size] for i in range(0, len(units), size)]
    done, stop = 0, None
    try:
        pool = ProcessPoolExecutor(max_workers=count, mp_context=_context(), initializer=_init_worker,
                                   initargs=(rules, rounds, formats, round_, keys))
        stop = functools.partial(pool.shutdown, wait=True, cancel_futures=True)
        atexit.register(stop)
        for judged in pool.map(_judge_chunk, chunks):
            done += 1
            yield from judged
    except (OSError, BrokenProcessPool):   # no processes to be had, or a worker died (no usable __main__)
        yield from here(u for chunk in chunks[done:] for u in chunk)
    finally:
        if stop is not None:
            stop()
            atexit.unregister(stop)


def _context():
    """fork when the parent runs one thread (cheap, and no re-import of the
    caller's __main__); forkserver otherwise, as forking a threaded process
    is unsafe; spawn where neither exists."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _init_worker(rules, rounds, formats, round_, keys) -> None:
    _WORKER.update(rules=rules, rounds=rounds, formats=formats, round=round_, keys=keys)


def _judge_chunk(units: list[SystemUnit]) -> list[list[Outcome]]:
    w = _WORKER
    return [judge_system(w["rules"], unit, w["rounds"], w["formats"], w["round"], w["keys"]) for unit in units]


def judge_system(rules: Rules, unit: SystemUnit, rounds: dict[str, RoundRules], formats: Formats,
                 round_: str | None, keys: frozenset[str]) -> list[Outcome]:
    return [judge(job, rounds, formats, round_, keys) for job in jobs_of(rules, unit)]


# -- walking the tree -------------------------------------------------------

@dataclass(frozen=True)
class SystemUnit:
    """One ``results/<system>`` folder of a submitter: the unit of work."""

    folder: Path                  # the submitter folder
    where: Source                 # the submitter folder, as findings name it
    division: str | None
    system: str


def systems(rules: Rules, path: Path, where: Source) -> list[SystemUnit]:
    return [SystemUnit(folder, shown, division, system_dir.name)
            for folder, shown, division in submitter_folders(rules, path, where)
            for system_dir in _subfolders(folder / "results")]


def jobs_of(rules: Rules, unit: SystemUnit) -> list[ResultJob]:
    system_dir = unit.folder / "results" / unit.system
    facts, sys_where, why = _system(unit.folder, unit.where, unit.system)
    beside = (unit.folder / "compliance").is_dir()
    places = system_places(unit.where, unit.system, sys_where)   # one set per system, shared by its results
    jobs = []
    for model_dir in _subfolders(system_dir):
        model_where = inside(unit.where, f"results/{unit.system}/{model_dir.name}")
        for scenario_dir in _subfolders(model_dir):
            model, scenario, family = _benchmark(rules, model_dir.name, scenario_dir.name)
            jobs.append(ResultJob(
                scenario_dir=scenario_dir, where=inside(model_where, scenario_dir.name), model_where=model_where,
                system_places=places, submitter_dir=unit.folder, submitter_where=unit.where,
                submitter=unit.folder.name, division=unit.division, system=unit.system, model_folder=model_dir.name,
                scenario_folder=scenario_dir.name, model=model, scenario=scenario, family=family,
                system_facts=facts, system_where=sys_where, system_findings=why, compliance_beside=beside))
    return jobs


@memo(maxsize=4096)
def _benchmark(rules: Rules, model_folder: str, scenario_folder: str) -> tuple[str | None, str | None, str | None]:
    """Benchmark, scenario and unit family of a result folder (memoised: a tree repeats a few names)."""
    model, scenario = _canonical(rules, model_folder, scenario_folder)
    return model, scenario, rules.models()[model].family if model else None


def _canonical(rules: Rules, model_folder: str, scenario_folder: str) -> tuple[str | None, str | None]:
    """Benchmark and scenario of a result folder; a round may rename folders
    (v5.0's llama2-70b-interactive-99/Server is llama2-70b-99 Interactive)."""
    for round_ in round_rules.all_rounds(rules).values():
        if model_folder in round_.folder_models:
            model, scenarios = round_.folder_models[model_folder]
            scenario_folder = scenarios.get(scenario_folder, scenario_folder)
            return rules.canonical_model(model), rules.canonical_scenario(scenario_folder)
    return rules.canonical_model(model_folder), rules.canonical_scenario(scenario_folder)


def _system(folder: Path, shown: Source, system: str) -> tuple[dict | None, Source, tuple[Finding, ...]]:
    where = inside(shown, f"systems/{system}.json")
    path = folder / "systems" / f"{system}.json"
    if not path.is_file():
        return None, where, (missing_file(where, f"the system description of {system}"),)
    text, found = read_text(path, where, MAX_SYSTEM_JSON, checks=textcheck.JSON)
    if text is None:
        return None, where, tuple(found)
    data, _, found = jsonsafe.loads(text, where)
    if found:
        return None, where, tuple(found)
    if not isinstance(data, dict):
        return None, where, (located("format-mismatch", where, "a JSON object", type(data).__name__,
                                     "the system description is not an object"),)
    repeated = jsonsafe.repeated_key(data, where, "the system description states a key twice")
    if repeated:
        return None, where, (repeated,)
    return data, where, ()
