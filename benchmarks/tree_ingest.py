"""Tree ingest: results/s and MB/s of `mlrepro ingest` on a replicated copy of
tests/real/v5.1-submission-tree (the MLCommons checker's reference
figure on this machine class: 450 results, 307 MB, 1.98 s, about 230 results/s
on one core), next to the time to just read the same bytes (`cat`)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from common import MLREPRO, REPO, run

REAL_TREE = REPO / "tests" / "real" / "v5.1-submission-tree"   # tests/real/PROVENANCE.md
GOAL = 1000.0
CHECKER = {"results": 450, "megabytes": 307, "seconds": 1.98, "results_per_s": 230}


def replicate(dest: Path, copies: int) -> Path:
    """``copies`` renamed copies of every submitter (files hard-linked where the
    file system allows; each system JSON rewritten to name its copy's submitter)."""
    closed = dest / "closed"
    for submitter in sorted((REAL_TREE / "closed").iterdir()):
        for k in range(copies):
            name = f"{submitter.name}{k:02d}"
            target = closed / name
            shutil.copytree(submitter, target, copy_function=_link)
            for system in (target / "systems").glob("*.json"):
                data = json.loads(system.read_text(encoding="utf-8"))
                data["submitter"] = name
                system.unlink()
                system.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return dest


def _link(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def tree_bytes(root: Path) -> tuple[int, int]:
    files = [p for p in root.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def cat_seconds(root: Path) -> float:
    start = time.perf_counter()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        with open(path, "rb") as fh:
            while fh.read(1 << 20):
                pass
    return time.perf_counter() - start


def measure() -> dict:
    """The checker's own size (15 copies: 60 submitters, 450 results), where a
    cold process's start-up (interpreter, pandas, pandera, the worker pool) is
    most of the time, and ten times that, where reading dominates."""
    small, large = measure_copies(15), measure_copies(150)
    return {"checker_size": small, "ten_times": large,
            "goal_results_per_s": GOAL, "meets_goal": large["results_per_s"] >= GOAL,
            "checker_reference": CHECKER,
            "note": "cold process, best of 3; at the checker's size start-up dominates"}


def measure_copies(copies: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="tree-bench-") as tmp:
        tree = replicate(Path(tmp) / "tree", copies)
        files, size = tree_bytes(tree)
        cat_s = min(cat_seconds(tree) for _ in range(3))
        out = Path(tmp) / "out.parquet"
        walls = []
        for _ in range(3):
            wall, rss, stdout = run([MLREPRO, "ingest", tree, "--status", "verified", "--round", "v5.1",
                                     "-o", out, "--format", "json"], ok=(0, 1))
            walls.append((wall, rss, stdout))
        wall, rss, stdout = min(walls)
        summary = json.loads(stdout)["summary"]
    results = summary["accepted"] + summary["rejected"] + summary["excluded"]
    return {
        "command": "mlrepro ingest <tree> --status verified --round v5.1 (cold process, best of 3)",
        "submitters": copies * 4, "results": results, "accepted": summary["accepted"],
        "files": files, "megabytes": round(size / 1e6, 1),
        "seconds": round(wall, 3), "results_per_s": round(results / wall, 1),
        "megabytes_per_s": round(size / 1e6 / wall, 1), "peak_rss_mib": round(rss, 1),
        "cat_seconds": round(cat_s, 3), "cat_megabytes_per_s": round(size / 1e6 / cat_s, 1),
    }
