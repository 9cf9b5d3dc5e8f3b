"""Synthetic submissions for the scale benchmark, with a realistic mix:
30 submitters (AMD, the reference, and 29 partners), each with its own
systems (ids as MLPerf writes them, ``Dell_16xMI325X_4xEPYC_9123``, and a
system name), 54 model and scenario pairs of round v6.0 (from
schemas/rules/v6.0.yaml) in the closed and open divisions, a result id per
submitter, system and division as MLCommons numbers them (``6.0-00042``),
values around the reference (some within the 4 % tolerance, some not), and
about 15 % of the rows post-deadline: a partner's late systems, sealed as a
second version declared post-deadline.

Rows are laid out system by system with every submitter in turn, so any
size holds the whole mix; at 1,000,000 rows: 310 systems of each of the 30
submitters (9,300 distinct system ids), both divisions, 18,600 result ids.
Each submitter's rows are sealed with `mlrepro submit` into a submissions
root, as a partner's would be; :func:`write` returns the root.
"""

from __future__ import annotations

import csv
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
PAIR_COUNT = 54


def _pairs(round_: str = ROUND) -> list[tuple[str, str, str]]:
    """The round's (model, scenario, units) as schemas/rules/<round>.yaml lists
    them (a pair the round does not have would be refused by `submit`)."""
    from pipeline.core.rules import Rules

    found = [(m.name, sc, units[0]) for m in Rules.load().round_models(round_).values()
             for sc, units in m.units.items()]
    assert len(found) >= PAIR_COUNT, f"{round_} has only {len(found)} model and scenario pairs"
    return found[:PAIR_COUNT]


PAIRS = _pairs()
DIVISIONS = ("closed", "open")
SYSTEMS = 310
POST_SHARE = 0.15            # of all rows; only partners' rows are late


def system_id(i: int, submitter: str) -> tuple[str, str, int]:
    """A submitter's i-th system: its platform id, accelerator and node count."""
    acc = list(ACCELERATORS)[i % 3]
    nodes = 1 + (i // 3) % 4
    return f"{submitter}_{8 * nodes}x{acc}_{2 * nodes}xEPYC_{9000 + i}", acc, nodes


def rows(count: int, seed: int = 6):
    """(submitter, late, csv row) for ``count`` rows."""
    rng = random.Random(seed)
    late_share = POST_SHARE * len(SUBMITTERS) / len(PARTNERS)
    late = {(s, i): rng.random() < late_share for s in PARTNERS for i in range(SYSTEMS)}
    written = 0
    for d, division in enumerate(DIVISIONS):
        for i in range(SYSTEMS):
            for model, scenario, units in PAIRS:
                for s, sub in enumerate(SUBMITTERS):
                    if written == count:
                        return
                    sys_id, acc, nodes = system_id(i, sub)
                    value = BASE[acc] * nodes * rng.uniform(0.93, 1.07)
                    result_id = f"6.0-{(d * SYSTEMS + i) * len(SUBMITTERS) + s + 1:05d}"
                    yield sub, late.get((sub, i), False), [
                        sub, sys_id, f"{sub} AS-{8125 + i % 40}GS-{nodes}N", ACCELERATORS[acc], 8, nodes, model,
                        scenario, f"{value:.1f}", units, division, "available", result_id, ROUND]
                    written += 1


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
