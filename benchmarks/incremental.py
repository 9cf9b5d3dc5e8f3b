"""`make run` from scratch and as a no-op: `dvc repro` on a fresh copy of
the project (its tracked files, a new git repository), then `dvc repro`
again with nothing changed. Each from-scratch run gets its own new copy;
the runs alternate (from scratch, no-op, ...)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from common import QUICK, REPO, RUNS, goal, median, run, save, spread

GOAL_FULL_S = 10.0
GOAL_NOOP_S = 1.0
INCREMENTAL_RUNS = 1 if QUICK else 3          # no floor, no ratio: three fresh copies
METHOD = ("`dvc repro` in a fresh copy of the project's tracked files (a new git repository, no DVC "
          "cache, no outputs), then `dvc repro` again with nothing changed (the no-op); each a new "
          f"process, the two alternating; medians of {INCREMENTAL_RUNS} copies. The Makefile's `run` "
          "target is `dvc repro` after an install that is already done.")


def copy_project(dest: Path) -> Path:
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split("\0")
    for rel in filter(None, tracked):
        if (REPO / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, dest / rel)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@example.invalid",
                                                 "commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=dest, check=True, capture_output=True)
    return dest


def stages_run(stdout: str) -> int:
    return sum(1 for line in stdout.splitlines() if line.startswith("Running stage '"))


def measure() -> None:
    full, noop, stages = [], [], 0
    for i in range(INCREMENTAL_RUNS):
        with tempfile.TemporaryDirectory(prefix="incremental-bench-") as tmp:
            project = copy_project(Path(tmp) / "project")
            wall, _, out = run(["dvc", "repro"], cwd=project)
            full.append(wall)
            stages = stages_run(out)
            noop.append(run(["dvc", "repro"], cwd=project)[0])
    figures = {"stages_run_from_scratch": stages, "from_scratch": spread(full), "no_op": spread(noop)}
    goals = [goal(f"`make run` from scratch ({stages} stages)", median(full), GOAL_FULL_S, "s"),
             goal("`make run` with nothing changed", median(noop), GOAL_NOOP_S, "s")]
    save("make_run", figures, goals, METHOD)
    print(f"make run: from scratch {median(full):.2f} s ({stages} stages), no-op {median(noop):.2f} s")
