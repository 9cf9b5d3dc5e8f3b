"""Synthetic result tables for the scale benchmark: realistic shape (each
system reports several models and scenarios; the reference submitter AMD has
a result for most keys), unique keys, values around a reference."""

from __future__ import annotations

import csv
import random
from pathlib import Path

HEADER = ["submitter", "system", "system_name", "accelerator", "accelerators_per_node", "nodes",
          "model", "scenario", "value", "units", "division", "availability", "result_id", "round"]
SUBMITTERS = ["AMD", "Dell", "HPE", "Supermicro", "GigaComputing", "MiTAC", "Oracle", "Cisco",
              "MangoBoost", "RedHat"]
ACCELERATORS = {"MI300X": "AMD Instinct MI300X 192GB HBM3", "MI325X": "AMD Instinct MI325X 256GB HBM3e",
                "MI355X": "AMD Instinct MI355X 288GB HBM3e"}
MODELS = [("llama2-70b-99", "Tokens/s"), ("llama2-70b-99.9", "Tokens/s")]
SCENARIOS = ["Offline", "Server", "Interactive"]
BASE = {"MI300X": 27800.0, "MI325X": 34500.0, "MI355X": 93000.0}


def write(path: Path, rows: int, seed: int = 6) -> Path:
    """``rows`` results: per system id, every submitter reports every model and scenario."""
    rng = random.Random(seed)
    per_system = len(SUBMITTERS) * len(MODELS) * len(SCENARIOS)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(HEADER)
        written = 0
        system = 0
        while written < rows:
            acc = list(ACCELERATORS)[system % 3]
            nodes = 1 + (system // 3) % 4
            sys_id = f"{8 * nodes}x{acc}_{2 * nodes}xEPYC_{9000 + system}"
            for sub in SUBMITTERS:
                for model, units in MODELS:
                    for scen in SCENARIOS:
                        if written == rows:
                            break
                        value = BASE[acc] * nodes * rng.uniform(0.93, 1.07)
                        out.writerow([sub, sys_id, "", ACCELERATORS[acc], 8, nodes, model, scen,
                                      f"{value:.1f}", units, "closed", "available", "", "v6.0"])
                        written += 1
            system += 1
    assert per_system
    return path
