"""One result folder of a submission tree judged by its round's rules: a raw
record, or the findings that reject it. It runs in worker processes, so it
takes all it needs as arguments and reads only the result's own files.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.core.vocabulary import Severity
from pipeline.readers.base import RawRecord, inside, json_text
from pipeline.readers import folder_checks, loadgen, run_checks
from pipeline.readers.round_rules import Formats, RoundRules, metric_for

DETAIL = "performance/run_1/mlperf_log_detail.txt"
SUMMARY = "performance/run_1/mlperf_log_summary.txt"
ACCURACY = "accuracy/accuracy.txt"
METRICS = "schemas/rules/metrics.yaml"   # where a result's units are decided
# canonical field -> key of systems/<system>.json
SYSTEM_KEYS = {
    "submitter": "submitter",
    "system_name": "system_name",
    "accelerator": "accelerator_model_name",
    "accelerators_per_node": "accelerators_per_node",
    "nodes": "number_of_nodes",
    "division": "division",
    "availability": "status",
    "host_processor": "host_processor_model_name",
    "host_processors_per_node": "host_processors_per_node",
    "framework": "framework",
    "operating_system": "operating_system",
    "weight_data_types": "weight_data_types",
}


@dataclass(frozen=True)
class ResultJob:

    scenario_dir: Path
    where: Source                 # the scenario folder, as findings name it
    submitter_dir: Path
    submitter_where: Source
    submitter: str                # submitter folder name
    division: str | None          # division folder name, when the tree shows it
    system: str                   # system folder name (the platform id)
    model_folder: str
    scenario_folder: str
    model: str | None             # canonical benchmark id
    scenario: str | None          # canonical scenario
    family: str | None            # the model's unit family
    system_facts: dict | None     # systems/<system>.json, or None with system_findings
    system_where: Source
    model_where: Source           # the model folder
    system_places: dict[str, Source]   # where the system's fields sit: shared by its results
    system_findings: tuple[Finding, ...] = ()
    compliance_beside: bool = False   # the submitter has compliance/ beside results/ (v5.x)


@dataclass
class Outcome:
    cell: Source                  # the detail log, as a rejected result's disposition names it
    record: RawRecord | None
    findings: list[Finding] = field(default_factory=list)
    round: str | None = None


def log_keys(rounds: dict[str, RoundRules], formats: Formats) -> frozenset[str]:
    """Every LoadGen key a judgement reads."""
    keys = set(run_checks.LOG_KEYS)
    tables = [*formats.families.values(), *formats.model_metrics.values()]
    for rules in rounds.values():
        keys.update(rules.seeds)
        tables += rules.metrics.values()
    keys.update(spec.key for table in tables for spec in table.values())
    return frozenset(keys)


def judge(job: ResultJob, rounds: dict[str, RoundRules], formats: Formats,
          explicit_round: str | None, keys: frozenset[str]) -> Outcome:
    detail_where = inside(job.where, DETAIL)
    cell = Source(detail_where.file)
    base = os.fspath(job.scenario_dir)
    detail = f"{base}/{DETAIL}"
    early = _before_log(job)
    if early:
        if not os.path.isfile(detail):
            early.append(folder_checks.missing_file(detail_where, "the performance detail log"))
        return Outcome(cell, None, early)
    log, found = loadgen.read_log(detail, detail_where, formats.file_bytes, keys)
    if log is None:   # read first, asked why after: one system call less for a log that is there
        if not os.path.isfile(detail):
            found = [folder_checks.missing_file(detail_where, "the performance detail log")]
        return Outcome(cell, None, found)
    found = list(log.findings)
    rules, why = run_checks.round_of(log, rounds, explicit_round)
    found += why
    if rules is None:
        return Outcome(cell, None, found)
    found += run_checks.check_run(log, rules, job.model, job.scenario, job.division)
    found += folder_checks.check_system(job.system_facts, job.system_where, rules,
                                        job.submitter, job.division)
    found += _companions(job, base, rules, formats)
    value, more = _value(log, job, rules, formats)
    found += more
    if any(f.severity == Severity.ERROR for f in found):
        return Outcome(cell, None, found, rules.round)
    return Outcome(cell, _record(job, log, rules, value), found, rules.round)


def _before_log(job: ResultJob) -> list[Finding]:
    found = list(job.system_findings)
    if job.model is None:
        found.append(located("unknown-model", job.model_where,
                             "a benchmark id from schemas/models.yaml", job.model_folder, "unknown model"))
    if job.scenario is None:
        found.append(located("unknown-scenario", job.where, "an MLPerf scenario", job.scenario_folder,
                             "unknown scenario"))
    return found


def system_places(submitter_where: Source, system: str, system_where: Source) -> dict[str, Source]:
    """Where the fields a result takes from its system sit."""
    folder = inside(submitter_where, f"results/{system}")
    return {**{name: system_where.at(key=key) for name, key in SYSTEM_KEYS.items()},
            "system": folder, "platform": folder}


@functools.lru_cache(maxsize=1024)
def _units_place(model: str, scenario: str) -> Source:
    return Source(METRICS, key=f"{model} {scenario}")


def _companions(job: ResultJob, base: str, rules: RoundRules, formats: Formats) -> list[Finding]:
    """``base``: the scenario folder as text (joined thousands of times per tree)."""
    found: list[Finding] = []
    if not os.path.isfile(f"{base}/{SUMMARY}"):
        found.append(folder_checks.missing_file(inside(job.where, SUMMARY), "the performance summary"))
    targets = rules.accuracy_targets(job.model, job.scenario)
    if targets and rules.enforced("accuracy", job.division):
        found += folder_checks.check_accuracy(f"{base}/{ACCURACY}", inside(job.where, ACCURACY),
                                              targets, formats)
    tests = rules.compliance.get(job.model)
    if tests and rules.enforced("compliance", job.division):
        found += folder_checks.check_compliance(lambda t: _test_folder(job, base, t), tests, rules,
                                                targets, formats, job.model)
    return found


def _test_folder(job: ResultJob, base: str, test: str) -> tuple[str, Source]:
    """The test's folder inside the scenario folder (v6.x) when it is there,
    else beside results/ (v5.x) when the submitter has compliance/."""
    rel = f"results/{job.system}/{job.model_folder}/{job.scenario_folder}/{test}"
    if job.compliance_beside and not os.path.isdir(f"{base}/{test}"):
        rel = f"compliance/{job.system}/{job.model_folder}/{job.scenario_folder}/{test}"
    return f"{os.fspath(job.submitter_dir)}/{rel}", inside(job.submitter_where, rel)


def _value(log, job: ResultJob, rules: RoundRules, formats: Formats):
    spec = metric_for(rules, formats, job.model, job.family or "", job.scenario)
    if spec is None or spec.key in formats.never_use:
        return None, [located("invalid-choice", job.where,
                              "a scenario with a result key in schemas/rules/metrics.yaml",
                                    f"{job.model} {job.scenario}", f"{job.model} has no {job.scenario} result")]
    text = loadgen.result_text(log, spec)
    if text is None:
        return None, [run_checks.missing_key(log, spec.key)]
    return (text, spec.units, spec.key), []


def _record(job: ResultJob, log, rules: RoundRules, value) -> RawRecord:
    """The result's fields, each placed where it was read."""
    facts = job.system_facts or {}
    fields = {name: json_text(facts.get(key)) for name, key in SYSTEM_KEYS.items() if facts.get(key) is not None}
    fields.update(system=job.system, platform=job.system, model=job.model, scenario=job.scenario,
                  value=value[0], units=value[1], round=rules.round)
    elsewhere = {**job.system_places, "model": job.model_where, "scenario": job.where,
                 "value": log.at(value[2]), "units": _units_place(job.model, job.scenario),
                 "round": log.at(run_checks.QSL_SEED)}
    return RawRecord(log.where, log.lines.get(value[2]), fields, elsewhere=elsewhere)
