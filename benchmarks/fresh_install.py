"""The first `make run` on a fresh clone, install included, with empty
package caches: what a newcomer waits for after `git clone`.

The clone is `git clone` of the repository's HEAD into a temporary folder
(no .venv, no DVC cache, no outputs); uv's cache (UV_CACHE_DIR) and pip's
(PIP_CACHE_DIR) point at new empty folders, so every package comes from the
index; then `make run` runs there once and is timed whole: the venv, uv's
hash-checked bootstrap, `uv sync --locked` of uv.lock, and `dvc repro`.
Measured once per `make bench` (a full download each); the figure is
that one run."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from common import REPO, goal, run, save, spread

GOAL_S = 60.0
METHOD = ("`git clone` of HEAD into a temporary folder, then `make run` there, timed whole (venv, uv bootstrapped "
          "from requirements/uv.txt with its hashes, `uv sync --locked` of uv.lock, `dvc repro`), with "
          "UV_CACHE_DIR and PIP_CACHE_DIR new empty folders (every package downloaded from PyPI) and the "
          "project's .venv kept off PATH; one run.")


def measure() -> None:
    with tempfile.TemporaryDirectory(prefix="fresh-install-bench-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, capture_output=True)
        path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                               if not p.startswith(str(REPO)))
        env = {"PATH": path, "UV_CACHE_DIR": str(Path(tmp) / "uv-cache"),
               "PIP_CACHE_DIR": str(Path(tmp) / "pip-cache")}
        wall, _, out = run(["make", "run"], cwd=clone, env=env)
        # the run installed and ran the pipeline: a venv of the lock, every stage run, the outcome line
        if not (clone / ".venv" / "bin" / "uv").exists() or "pipeline: ok (" not in out \
                or out.count("Running stage '") < 4:
            raise SystemExit(f"the fresh clone's make run did not install and run the pipeline:\n{out[-3000:]}")
    save("fresh_install", {"first_make_run": spread([wall])},
         [goal("first `make run` on a fresh clone, install included, empty package caches", wall, GOAL_S, "s")],
         METHOD)
    print(f"fresh clone: first make run (install included, empty caches) {wall:.2f} s")
