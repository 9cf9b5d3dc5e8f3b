"""Tree ingest: `mlrepro ingest <tree>` on a submission tree of N results,
next to `cat` of the same files, both as processes, interleaved.

The tree is made of the real v5.1 results in tests/real/v5.1-submission-tree
(30 results of 4 submitters), copied as many times as N needs under renamed
submitters: every file a real, distinct file (written, not hard-linked), each
system description relabelled with its copy's submitter. Both commands read
the files from the operating system's page cache (the tree was just written,
and each run warms it for the next): the figure is parsing and judging, not
the disk. The floor is `find <tree> -type f -exec cat {} +` with its output
to /dev/null: the same walk and the same bytes, read by the fastest reader.
Ingest writes the table to Parquet and prints its one-line summary (the
counts the figures take); it does not print the rows (`--format json` would
render every row as JSON, a cost of the report, not of reading the tree).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from common import MLREPRO, QUICK, REPO, RUNS, goal, interleaved, median, run, save, spread

REAL_TREE = REPO / "tests" / "real" / "v5.1-submission-tree"   # tests/real/PROVENANCE.md
RESULTS = 300 if QUICK else 10_000
GOAL_RESULTS_PER_S = 2000.0
GOAL_RATIO = 2.0
METHOD = ("cold `mlrepro ingest <tree> --status verified --round v5.1 -o out.parquet` (the table written, "
          "its one-line summary printed) and `find <tree> -type f -exec cat {} +` (stdout to /dev/null), "
          "each a new process, "
          f"run in turns {RUNS} times (order reversed every other turn); medians. Tree: copies of the "
          "30 real v5.1 results of tests/real under renamed submitters, every file a distinct copy; "
          "both commands read from a warm page cache.")


def replicate(dest: Path, results: int) -> Path:
    """Copies of every real submitter (renamed ``<name>NNN``) until the tree
    holds at least ``results`` results; files copied, never linked."""
    closed = dest / "closed"
    sources = sorted(p for p in (REAL_TREE / "closed").iterdir() if p.is_dir())
    per_copy = {s: sum(1 for _ in (s / "results").glob("*/*/*")) for s in sources}
    made, k = 0, 0
    while made < results:
        for src in sources:
            if made >= results:
                break
            name = f"{src.name}{k:03d}"
            target = closed / name
            closed.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cp", "-R", str(src), str(target)], check=True)   # copies, never links
            (target / "summary.csv").unlink(missing_ok=True)
            for system in (target / "systems").glob("*.json"):
                facts = json.loads(system.read_text(encoding="utf-8"))
                facts["submitter"] = name
                system.write_text(json.dumps(facts, indent=2), encoding="utf-8")
            made += per_copy[src]
        k += 1
    return dest


def counts(stdout: str) -> dict[str, int]:
    """The counts of ingest's summary line (``summary: accepted=N, rejected=N, ...``)."""
    line = next(line for line in stdout.splitlines() if line.startswith("summary: "))
    pairs = (item.split("=", 1) for item in line[len("summary: "):].split(", "))
    return {key: int(value) for key, value in pairs}


def tree_size(root: Path) -> tuple[int, int]:
    files = [p for p in root.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def measure() -> None:
    with tempfile.TemporaryDirectory(prefix="tree-bench-") as tmp:
        tree = replicate(Path(tmp) / "tree", RESULTS)
        files, size = tree_size(tree)
        out = Path(tmp) / "out.parquet"
        ingest = [MLREPRO, "ingest", tree, "--status", "verified", "--round", "v5.1", "-o", out]
        cat = ["find", tree, "-type", "f", "-exec", "cat", "{}", "+"]
        run(cat, stdout_to=Path("/dev/null"))                 # warm the page cache once
        runs = interleaved({"ingest": lambda: run(ingest, ok=(0, 1)),
                            "cat": lambda: run(cat, stdout_to=Path("/dev/null"))}, RUNS)
        summary = counts(runs["ingest"][-1][2])
    results = summary["accepted"] + summary["rejected"] + summary["excluded"]
    ingest_s = median([r[0] for r in runs["ingest"]])
    cat_s = median([r[0] for r in runs["cat"]])
    figures = {
        "results": results, "accepted": summary["accepted"], "files": files,
        "megabytes": round(size / 1e6, 1),
        "ingest": {**spread([r[0] for r in runs["ingest"]]),
                   "peak_rss_mib": round(max(r[1] for r in runs["ingest"]), 1),
                   "results_per_s": round(results / ingest_s, 1),
                   "megabytes_per_s": round(size / 1e6 / ingest_s, 1)},
        "cat": {**spread([r[0] for r in runs["cat"]]), "megabytes_per_s": round(size / 1e6 / cat_s, 1)},
        "ratio_to_cat": round(ingest_s / cat_s, 2),
    }
    goals = [goal(f"tree ingest, {results:,} results: results/s", results / ingest_s,
                  GOAL_RESULTS_PER_S, "results/s", at_most=False),
             goal(f"tree ingest, {results:,} results: time / `cat` of the same files", ingest_s / cat_s,
                  GOAL_RATIO, "x", floor=cat_s, floor_what="`cat` of the same files (s)")]
    save("tree_ingest", figures, goals, METHOD)
    print(f"tree ingest: {results} results in {ingest_s:.2f} s ({results / ingest_s:.0f} results/s), "
          f"cat {cat_s:.2f} s, ratio {ingest_s / cat_s:.2f}")
