"""`make run` from scratch and as a no-op, against DVC's own floor.

Each from-scratch run gets a fresh copy of the project (its tracked files, a
new git repository, the project's .venv linked in as `make install` leaves
it, no DVC cache, no outputs) and runs `make run` there (`make -o install
run`: the install is done; the target's recipe, the dvc.lock check and
`dvc repro`, runs as written). Then, in the same copy, the no-op `make run`
and DVC's floor take turns: `dvc --version` (the start-up of the dvc
command) and `dvc status` in an empty DVC project (a git repository with
`dvc init` and no stage: what DVC costs before any stage of ours is read).
The stages are counted from dvc.yaml, each checked to be in the dvc.lock
the run wrote and among the stages the run printed."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import yaml

from common import BIN, QUICK, REPO, RUNS, goal, median, run, save, spread

GOAL_FULL_S = 10.0
GOAL_NOOP_S = 1.0
SCRATCH_RUNS = 1 if QUICK else 3              # a fresh copy each: the costly part
NOOP_RUNS = 3 if QUICK else RUNS              # interleaved with the floors
METHOD = (f"`make -o install run` in a fresh copy of the project's tracked files (a new git repository, "
          f"the project's .venv linked in, no DVC cache, no outputs): from scratch, median of {SCRATCH_RUNS} "
          f"copies; then the no-op `make run` in the same copy, `dvc --version` and `dvc status` in an empty "
          f"DVC project (git + `dvc init`, no stage), run in turns (order reversed every other turn), each a "
          f"new process, medians of {NOOP_RUNS} each per copy. Stages: dvc.yaml's, each found in the dvc.lock "
          "the run wrote and each printed as run.")


def copy_project(dest: Path) -> Path:
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split("\0")
    for rel in filter(None, tracked):
        if (REPO / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, dest / rel)
    (dest / ".venv").symlink_to(BIN.parent, target_is_directory=True)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True, capture_output=True)
    _git(dest)
    return dest


def empty_project(dest: Path) -> Path:
    """A git repository with `dvc init` and no stage: DVC's own floor."""
    dest.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True, capture_output=True)
    run([BIN / "dvc", "init", "-q"], cwd=dest)
    _git(dest)
    return dest


def _git(dest: Path) -> None:
    for args in (["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@example.invalid",
                                 "commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=dest, check=True, capture_output=True)


def stages_of(project: Path) -> list[str]:
    """The pipeline's stages as dvc.yaml defines them (``name@key`` for a
    foreach), each checked to be in the dvc.lock the run wrote."""
    defined = yaml.safe_load((project / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    names = []
    for name, stage in defined.items():
        items = stage.get("foreach") if isinstance(stage, dict) else None
        names += [f"{name}@{key}" for key in items] if items else [name]
    locked = (yaml.safe_load((project / "dvc.lock").read_text(encoding="utf-8")) or {}).get("stages", {})
    missing = sorted(set(names) - set(locked))
    if missing:
        raise SystemExit(f"stages of dvc.yaml not in the dvc.lock the run wrote: {missing}")
    return sorted(names)


def stages_run(stdout: str) -> set[str]:
    return {line.split("'")[1] for line in stdout.splitlines() if line.startswith("Running stage '")}


def make_run(project: Path):
    return run(["make", "-o", "install", "run"], cwd=project)


def measure() -> None:
    full, noop, version, status, stages = [], [], [], [], []
    with tempfile.TemporaryDirectory(prefix="incremental-bench-") as tmp:
        empty = empty_project(Path(tmp) / "empty")
        for i in range(SCRATCH_RUNS):
            project = copy_project(Path(tmp) / f"project{i}")
            wall, _, out = make_run(project)
            full.append(wall)
            stages = stages_of(project)
            if stages_run(out) != set(stages):
                raise SystemExit(f"the run printed stages {sorted(stages_run(out))}, dvc.yaml has {stages}")
            turns = [("noop", lambda: make_run(project)),
                     ("version", lambda: run([BIN / "dvc", "--version"], cwd=empty)),
                     ("status", lambda: run([BIN / "dvc", "status"], cwd=empty))]
            for j in range(NOOP_RUNS):
                for name, command in (turns if j % 2 == 0 else turns[::-1]):
                    {"noop": noop, "version": version, "status": status}[name].append(command()[0])
            shutil.rmtree(project)
    figures = {"stages": stages, "from_scratch": spread(full), "no_op": spread(noop),
               "floor_dvc_version": spread(version), "floor_dvc_status_empty_project": spread(status)}
    goals = [goal(f"`make run` from scratch ({len(stages)} stages)", median(full), GOAL_FULL_S, "s"),
             goal("`make run` with nothing changed", median(noop), GOAL_NOOP_S, "s", floor=median(status),
                  floor_what="`dvc status` in an empty DVC project (DVC's own start-up and check; "
                             f"`dvc --version`: {median(version):.2f} s)")]
    save("make_run", figures, goals, METHOD)
    print(f"make run: from scratch {median(full):.2f} s ({len(stages)} stages), no-op {median(noop):.2f} s; "
          f"floors: dvc status (empty project) {median(status):.2f} s, dvc --version {median(version):.2f} s")
