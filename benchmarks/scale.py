"""Scale: synthetic result tables of 10,000, 100,000 and 1,000,000 rows through
ingest (with validation), compare and partition, each stage a fresh `mlrepro`
process as in the DVC pipeline: time, peak memory, growth exponent."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import synthetic
from common import MLREPRO, run

SIZES = (10_000, 100_000, 1_000_000)
GOAL = {"rows": 1_000_000, "seconds": 15.0, "peak_mib": 2048}


def stages(tmp: Path, rows: int) -> dict:
    source = synthetic.write(tmp / f"rows{rows}.csv", rows)
    env = {"MLREPRO_MAX_FILE_BYTES": str(2 * source.stat().st_size)}
    table, agreement = tmp / "results.parquet", tmp / "agreement.parquet"
    steps = {
        "ingest": [MLREPRO, "ingest", source, "--status", "verified", "-o", table],
        "compare": [MLREPRO, "compare", table, "-o", agreement, "--exit-zero"],
        "partition": [MLREPRO, "partition", table, "--verified-out", tmp / "verified.parquet",
                      "--post-deadline-out", tmp / "post.parquet"],
    }
    out = {"rows": rows, "csv_megabytes": round(source.stat().st_size / 1e6, 1)}
    for name, args in steps.items():
        wall, rss, _ = run(args, env=env)
        out[f"{name}_s"], out[f"{name}_peak_mib"] = round(wall, 3), round(rss, 1)
    out["total_s"] = round(sum(out[f"{n}_s"] for n in steps), 3)
    out["peak_mib"] = max(out[f"{n}_peak_mib"] for n in steps)
    return out


def measure(sizes=SIZES) -> dict:
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        runs = [stages(Path(tmp), n) for n in sizes]
    growth = [round(math.log(b["total_s"] / a["total_s"]) / math.log(b["rows"] / a["rows"]), 3)
              for a, b in zip(runs, runs[1:])]
    last = runs[-1]
    return {"what": "each stage a cold mlrepro process (text output), rows of benchmarks/synthetic.py",
            "runs": runs, "growth_exponents": growth, "goal": GOAL,
            "meets_goal": last["rows"] == GOAL["rows"] and last["total_s"] <= GOAL["seconds"]
            and last["peak_mib"] <= GOAL["peak_mib"]}
