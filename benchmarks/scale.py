"""Scale: `mlrepro ingest`, `compare` and `partition` (each a new process;
the DVC pipeline runs the same steps as `ingest-all` and `compare`, with
more outputs) on a submissions root of N synthetic rows
(benchmarks/synthetic.py: 30 submitters with their own systems, a dozen
results per system, every result id distinct, about 15 % post-deadline), next to benchmarks/polars_floor.py doing the same join,
deviation and split, interleaved; at two sizes, for the growth exponent."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import synthetic
from common import MLREPRO, PYTHON, QUICK, REPO, RUNS, goal, interleaved, median, run, save, spread

SIZES = (2_000, 8_000) if QUICK else (100_000, 1_000_000)
GOAL_RATIO = 10.0
GOAL_PEAK_MIB = 1536.0
GOAL_GROWTH = 1.1            # time ~ rows^k; linear is 1
FLOOR = REPO / "benchmarks" / "polars_floor.py"
METHOD = ("`mlrepro ingest <root> -o table.parquet --exit-zero`, `mlrepro compare table.parquet -o agreement.parquet "
          "--exit-zero --params <an empty parameters file>`, `mlrepro partition table.parquet --verified-out "
          "verified.parquet --post-deadline-out post_deadline.parquet --exit-zero` (three new processes, each "
          "printing its text report and writing its tables as Parquet files; times summed, peak = the largest "
          "of the three; `dvc repro` runs these steps as `ingest-all` and `compare`, which write more) and "
          "`python benchmarks/polars_floor.py <root> <out>` (one process), "
          f"run in turns {RUNS} times (order reversed every other turn); medians. Rows: "
          "benchmarks/synthetic.py sealed with `mlrepro submit`, shaped like real data: 30 submitters, a dozen "
          "results per system (4 models x 3 scenarios; 83,340 system ids at 1,000,000 rows), every result id "
          "distinct, 15 % post-deadline. Growth: log(t2/t1)/log(n2/n1) of the pipeline's medians.")


def pipeline_commands(root: Path, out: Path) -> list[list]:
    """The three commands (arguments after `mlrepro`): tables written with
    -o, the text report (findings and a summary line) printed. Not --format
    json, which prints every row and finding (a gigabyte of JSON at 1M rows)
    and is no part of the pipeline."""
    table = out / "table.parquet"
    params = out / "defaults.yaml"   # an empty parameters file: the built-in defaults, whatever the folder
    params.write_text("{}\n", encoding="utf-8")
    return [["ingest", root, "-o", table, "--exit-zero"],
            ["compare", table, "-o", out / "agreement.parquet", "--exit-zero", "--params", params],
            ["partition", table, "--verified-out", out / "verified.parquet",
             "--post-deadline-out", out / "post_deadline.parquet", "--exit-zero"]]


def summary_of(stdout: str) -> dict:
    """The counts of a text report's last line (``summary: accepted=10, ...``)."""
    line = next(text for text in reversed(stdout.splitlines()) if text.startswith("summary: "))
    pairs = (item.split("=", 1) for item in line.removeprefix("summary: ").split(", "))
    return {key: int(value) if value.isdigit() else value for key, value in pairs}


def _pipeline(root: Path, out: Path) -> tuple[float, float, str]:
    walls, peaks, outputs = [], [], []
    for args in pipeline_commands(root, out):
        wall, rss, stdout = run([MLREPRO, *args])
        walls.append(wall)
        peaks.append(rss)
        outputs.append(stdout)
    return sum(walls), max(peaks), json.dumps({"summaries": [summary_of(o) for o in outputs],
                                               "stage_s": walls, "stage_peak_mib": peaks})


def one_size(tmp: Path, rows: int) -> dict:
    root = synthetic.write(tmp / f"n{rows}", rows, lambda args: run([MLREPRO, *args]))
    out, floor_out = tmp / f"n{rows}" / "pipeline", tmp / f"n{rows}" / "floor"
    out.mkdir()
    runs = interleaved({"pipeline": lambda: _pipeline(root, out),
                        "floor": lambda: run([PYTHON, FLOOR, root, floor_out])}, RUNS)
    stages = [json.loads(r[2]) for r in runs["pipeline"]]
    ingest, compare, partition = stages[-1]["summaries"]
    floor = json.loads(runs["floor"][-1][2])
    names = ("ingest", "compare", "partition")
    per_stage = {name: {"median_s": round(median([s["stage_s"][i] for s in stages]), 3),
                        "peak_rss_mib": round(max(s["stage_peak_mib"][i] for s in stages), 1)}
                 for i, name in enumerate(names)}
    return {"rows": rows, "accepted": ingest["accepted"], "verified": partition["verified"],
            "post_deadline": partition["post_deadline"], "agree": compare["agree"],
            "deviates": compare["deviates"], "no_reference": compare["no-reference"],
            "floor_counts": floor,
            # the floor does the same work only if it reaches the same verdicts
            "same_verdicts": all(floor[v] == compare[v] for v in ("agree", "deviates")),
            "pipeline": {**spread([r[0] for r in runs["pipeline"]]),
                         "peak_rss_mib": round(max(r[1] for r in runs["pipeline"]), 1), "stages": per_stage},
            "floor": {**spread([r[0] for r in runs["floor"]]),
                      "peak_rss_mib": round(max(r[1] for r in runs["floor"]), 1)}}


def measure() -> None:
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        sizes = [one_size(Path(tmp), n) for n in SIZES]
    small, large = sizes
    t1, t2 = small["pipeline"]["median_s"], large["pipeline"]["median_s"]
    growth = math.log(t2 / t1) / math.log(large["rows"] / small["rows"])
    rows = f"{large['rows']:,} rows"
    goals = [goal(f"ingest + compare + partition, {rows}: time / polars script", t2 / large["floor"]["median_s"],
                  GOAL_RATIO, "x", floor=large["floor"]["median_s"], floor_what="polars script (s)"),
             goal(f"ingest + compare + partition, {rows}: peak memory", large["pipeline"]["peak_rss_mib"],
                  GOAL_PEAK_MIB, "MiB"),
             goal(f"ingest + compare + partition, {small['rows']:,} -> {rows}: growth exponent", growth,
                  GOAL_GROWTH, "")]
    save("scale", {"sizes": sizes, "growth_exponent": round(growth, 3)}, goals, METHOD)
    print(f"scale: {large['rows']} rows pipeline {t2:.2f} s, polars {large['floor']['median_s']:.2f} s, "
          f"peak {large['pipeline']['peak_rss_mib']} MiB, growth {growth:.2f}")
