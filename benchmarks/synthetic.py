"""Synthetic submissions for the scale benchmark, shaped like real data:
30 submitters (AMD, the reference, and 29 partners), each with its own
systems (ids as MLPerf writes them, ``Dell_16xMI325X_4xEPYC_9123``, and a
system name); each system runs a dozen results, as a real one does: 4 models
of round v6.0 (from schemas/rules/v6.0.yaml) in 3 scenarios each. Every row
has its own result id (``6.0-0004242``), values lie around the reference
(some within the 4 % tolerance, some not), one system in ten is in the open
division, and about 15 % of the rows are post-deadline: a partner's late
systems, sealed as a second version declared post-deadline.

Rows are laid out system by system with every submitter in turn, so any
size holds the whole mix, and a partner's i-th system has the same
accelerators, nodes, models and division as the reference's i-th (something
to compare with). At 1,000,000 rows: 2,778 systems of each of the 30
submitters (83,340 distinct system ids), 1,000,000 result ids. Each
submitter's rows are sealed with `mlrepro submit` into a submissions root,
as a partner's would be; :func:`write` returns the root.
"""

from __future__ import annotations

import csv
import itertools
import random
from pathlib import Path

HEADER = ["submitter", "system", "system_name", "accelerator", "accelerators_per_node", "nodes",
          "model", "scenario", "value", "units", "division", "availability", "result_id", "round"]
REFERENCE = "AMD"
PARTNERS = ["Dell", "HPE", "Supermicro", "GigaComputing", "MiTAC", "Oracle", "Cisco", "MangoBoost",
            "RedHat", "Lenovo", "ASUSTeK", "Quanta", "Wiwynn", "Inventec", "Fujitsu", "Vultr",
            "Crusoe", "TensorWave", "Nebius", "Azure", "CoreWeave", "Lambda", "Hewlett", "Eviden",
            "Nutanix", "Krai", "Juniper", "Broadcom", "Sustainable"]
SUBMITTERS = [REFERENCE, *PARTNERS]
ACCELERATORS = {"MI300X": "AMD Instinct MI300X 192GB HBM3", "MI325X": "AMD Instinct MI325X 256GB HBM3e",
                "MI355X": "AMD Instinct MI355X 288GB HBM3e"}
BASE = {"MI300X": 27800.0, "MI325X": 34500.0, "MI355X": 93000.0}
ROUND, VERIFIED_AT, LATE_AT = "v6.0", "2026-02-20T10:00:00+00:00", "2026-03-20T10:00:00+00:00"
MODELS_PER_SYSTEM, SCENARIOS_PER_MODEL = 4, 3
CONFIGS = 12                 # accelerator (3) x node count (4): a system's i % 12


def _models(round_: str = ROUND) -> list[list[tuple[str, str, str]]]:
    """The round's models that run in 3 scenarios or more, each as its first 3
    (model, scenario, units), as schemas/rules/<round>.yaml lists them (a pair
    the round does not have would be refused by `submit`)."""
    from pipeline.core.rules import Rules

    found = [[(m.name, sc, units[0]) for sc, units in list(m.units.items())[:SCENARIOS_PER_MODEL]]
             for m in Rules.load().round_models(round_).values() if len(m.units) >= SCENARIOS_PER_MODEL]
    assert len(found) >= 2 * MODELS_PER_SYSTEM, f"{round_} has only {len(found)} models of 3 scenarios"
    return found


MODELS = _models()
POST_SHARE = 0.15            # of all rows; only partners' rows are late


def system_id(i: int, submitter: str) -> tuple[str, str, int]:
    """A submitter's i-th system: its platform id, accelerator and node count."""
    acc = list(ACCELERATORS)[i % 3]
    nodes = 1 + (i // 3) % 4
    return f"{submitter}_{8 * nodes}x{acc}_{2 * nodes}xEPYC_{9000 + i}", acc, nodes


def benchmarks(i: int) -> list[tuple[str, str, str]]:
    """The dozen (model, scenario, units) the i-th system runs: 4 models, the
    same for every system of a block of CONFIGS, another 4 for the next block."""
    start = (i // CONFIGS) * MODELS_PER_SYSTEM
    return [pair for k in range(MODELS_PER_SYSTEM) for pair in MODELS[(start + k) % len(MODELS)]]


def rows(count: int, seed: int = 6):
    """(submitter, late, csv row) for ``count`` rows."""
    rng = random.Random(seed)
    late_share = POST_SHARE * len(SUBMITTERS) / len(PARTNERS)
    written = 0
    for i in itertools.count():
        division = "open" if i % 10 == 9 else "closed"
        late = {sub: sub != REFERENCE and rng.random() < late_share for sub in SUBMITTERS}
        for model, scenario, units in benchmarks(i):
            for sub in SUBMITTERS:
                if written == count:
                    return
                sys_id, acc, nodes = system_id(i, sub)
                value = BASE[acc] * nodes * rng.uniform(0.93, 1.07)
                written += 1
                yield sub, late[sub], [
                    sub, sys_id, f"{sub} AS-{8125 + i % 40}GS-{nodes}N", ACCELERATORS[acc], 8, nodes, model,
                    scenario, f"{value:.1f}", units, division, "available", f"6.0-{written:07d}", ROUND]


def write(folder: Path, count: int, submit) -> Path:
    """Seal ``count`` rows as submissions under ``folder/submissions``;
    ``submit(args)`` runs `mlrepro submit` with those arguments."""
    sources = folder / "sources"
    sources.mkdir(parents=True)
    files: dict[tuple[str, bool], tuple] = {}
    for sub, is_late, row in rows(count):
        key = (sub, is_late)
        if key not in files:
            fh = open(sources / f"{sub}-{'late' if is_late else 'on-time'}.csv", "w", newline="",
                      encoding="utf-8")
            files[key] = (fh, csv.writer(fh, lineterminator="\n"))
            files[key][1].writerow(HEADER)
        files[key][1].writerow(row)
    for fh, _ in files.values():
        fh.close()
    root = folder / "submissions"
    for (sub, is_late) in sorted(files, key=lambda k: (k[1], k[0])):      # on-time versions first
        status, at = ("post-deadline", LATE_AT) if is_late else ("verified", VERIFIED_AT)
        submit(["submit", str(files[(sub, is_late)][0].name), "--submitter", sub, "--round", ROUND,
                "--status", status, "--submitted-at", at, "--root", str(root),
                *(["--force"] if status == "verified" else [])])   # sealed on time, replayed after the deadline
    return root
