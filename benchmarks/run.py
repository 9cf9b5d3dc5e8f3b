"""`make bench`: every benchmark, its figures printed and merged into
benchmarks/results.json, then docs/benchmarks.md's table regenerated from
it. None of these is a test: figures depend on the machine and its load, so
they are recorded with the machine, date, commit and method, not asserted.

    .venv/bin/python benchmarks/run.py [fresh_install|make_run|gate|gate_hostile|scale|tree ...]

MLREPRO_BENCH_QUICK=1: small inputs, few runs (`make run` measured once);
MLREPRO_BENCH_OUT=FILE: write the figures there; docs/benchmarks.md is then left
as it is (only the real figures of benchmarks/results.json go into the page).
"""

from __future__ import annotations

import json
import sys

import fresh_install
import gate_hostile
import gate_latency
import incremental
import page
import scale
import tree_ingest
from common import QUICK, REPO, RESULTS, machine, out_path

BENCHMARKS = {"fresh_install": fresh_install.measure, "make_run": incremental.measure, "gate": gate_latency.measure,
              "gate_hostile": gate_hostile.measure,
              "scale": scale.measure, "tree": tree_ingest.measure}


def main(argv: list[str]) -> int:
    chosen = argv or list(BENCHMARKS)
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}", file=sys.stderr)
        return 2
    print(f"machine: {json.dumps(machine())}; {'quick' if QUICK else 'full'} mode")
    for name in chosen:
        BENCHMARKS[name]()
    if out_path() == RESULTS:
        page.rewrite(RESULTS, REPO / "docs" / "benchmarks.md")
        print("wrote benchmarks/results.json and docs/benchmarks.md's table")
    else:
        print(f"wrote {out_path()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
