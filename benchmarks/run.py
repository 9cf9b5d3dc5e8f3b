"""`make bench`: every benchmark, its figures printed and merged into
benchmarks/results.json. None of these is a test: figures depend on the
machine and its load, so they are recorded, not asserted.

    .venv/bin/python benchmarks/run.py [tree|gate|scale|incremental ...]
"""

from __future__ import annotations

import json
import sys

import incremental
import scale
import tree_ingest
from common import machine, save

import gate_latency


def main(argv: list[str]) -> int:
    chosen = argv or ["tree", "gate", "scale", "incremental"]
    print(f"machine: {json.dumps(machine())}")
    for name in chosen:
        if name == "gate":
            gate_latency.main([])
            continue
        key, fn = {"tree": ("tree_ingest", tree_ingest.measure), "scale": ("scale", scale.measure),
                   "incremental": ("incremental_pipeline", incremental.measure)}[name]
        figures = fn()
        save(key, figures)
        print(f"{key}: {json.dumps(figures, indent=2)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
