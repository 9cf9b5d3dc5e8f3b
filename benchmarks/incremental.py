"""Incremental pipeline: a full `dvc repro` on a clean copy of the project,
then, after one partner's new submission version, which stages rerun and how
long that takes."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from common import MLREPRO, REPO, run


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


def ran(stdout: str) -> list[str]:
    return [line.split("'")[1] for line in stdout.splitlines() if line.startswith("Running stage '")]


def measure() -> dict:
    with tempfile.TemporaryDirectory(prefix="incremental-bench-") as tmp:
        project = copy_project(Path(tmp) / "project")
        full_s, _, full_out = run(["dvc", "repro"], cwd=project)
        noop_s, _, _ = run(["dvc", "repro"], cwd=project)
        source = project / "submissions/v5.1/Vultr/v1/results.csv"
        changed = Path(tmp) / "vultr-v2.csv"
        changed.write_text(source.read_text(encoding="utf-8").replace("30339.4", "31339.4"),
                           encoding="utf-8")
        run([MLREPRO, "submit", changed, "--submitter", "Vultr", "--round", "v5.1", "--status",
             "verified", "--submitted-at", "2025-07-31T10:00:00+00:00"], cwd=project)
        part_s, _, part_out = run(["dvc", "repro"], cwd=project)
    return {"full_repro_s": round(full_s, 2), "stages_full": len(ran(full_out)),
            "noop_repro_s": round(noop_s, 2),
            "after_one_partner_change_s": round(part_s, 2), "stages_rerun": ran(part_out),
            "stages_skipped": len(ran(full_out)) - len(ran(part_out))}
