"""The gate on the worst hostile partner input the caps allow: it must give
its verdict within 60 s on this machine, and the markdown step summary it
writes must stay under GitHub's 1 MiB.

Each case is a new partner version on a branch of a temporary git repository
whose base holds a copy of the project's submissions/ (as gate_latency's):

- ``identical-rows``: a results CSV of as many identical rows as a file may
  hold (``rows_per_file`` of schemas/version_folder.yaml): every row is a
  duplicate-row, each finding names a few others and counts the rest;
- ``parquet-bomb``: a Parquet file of a few KB that expands to 100,000
  identical rows: refused from its metadata's row count, never decoded.

Each is timed as a new process, `mlrepro gate --base main --format markdown`
(what the workflow writes to the step summary), the median of a few runs.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

import yaml

from common import MLREPRO, PYTHON, QUICK, REPO, goal, median, run, save, spread
from gate_latency import HEADER, base_repo, git

GOAL_S = 60.0
GOAL_SUMMARY_BYTES = 1024 * 1024
RUNS_EACH = 1 if QUICK else 3
ROW = "Bench,Bench_8xMI355X,AMD Instinct MI355X 288GB HBM3E,8,1,llama2-70b-99,Server,100000.0,Tokens/s,closed,available"
BOMB_ROWS = 1_000 if QUICK else 100_000
METHOD = (f"`mlrepro gate --base main --format markdown` as a new process in a temporary git repository (base: a "
          f"copy of submissions/; branch: one hostile partner version), the median of {RUNS_EACH} runs per case; "
          "the summary's size is the bytes of its stdout. Cases: a results CSV of rows_per_file identical rows "
          f"(the largest file the caps let through), a Parquet file of {BOMB_ROWS} identical rows.")


def rows_cap() -> int:
    data = yaml.safe_load((REPO / "schemas" / "version_folder.yaml").read_text(encoding="utf-8"))
    return 2_000 if QUICK else data["caps"]["rows_per_file"]


def _submit(repo: Path, source: Path, fmt: str) -> None:
    subprocess.run([str(MLREPRO), "submit", str(source), "--submitter", "Bench", "--round", "v6.0",
                    "--root", "submissions", "--input-format", fmt], cwd=repo, capture_output=True)
    if not list((repo / "submissions" / "v6.0" / "Bench").glob("v1/manifest.yaml")):
        _seal_by_hand(repo, source, fmt)    # submit refuses it (as it should): a partner writes the folder itself
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Bench v1")


def _seal_by_hand(repo: Path, source: Path, fmt: str) -> None:
    folder = repo / "submissions" / "v6.0" / "Bench" / "v1"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, folder / source.name)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    (folder / "manifest.yaml").write_text(
        f"submitter: Bench\nround: v6.0\nversion: 1\nsubmitted_at: '2026-11-30T10:00:00+00:00'\n"
        f"status: post-deadline\nfiles:\n- path: {source.name}\n  format: {fmt}\n  sha256: {digest}\n",
        encoding="utf-8")


def _identical_rows(tmp: Path) -> tuple[Path, str]:
    source = tmp / "results.csv"
    source.write_text(HEADER + "\n" + "\n".join([ROW] * rows_cap()) + "\n", encoding="utf-8")
    return source, "results-csv"


def _parquet_bomb(tmp: Path) -> tuple[Path, str]:
    source = tmp / "results.parquet"
    code = ("import sys, pyarrow as pa, pyarrow.parquet as pq\n"
            f"names = {HEADER!r}.split(','); values = {ROW!r}.split(',')\n"
            f"n = {BOMB_ROWS}\n"
            "pq.write_table(pa.table({k: [v] * n for k, v in zip(names, values)}), sys.argv[1])\n")
    subprocess.run([str(PYTHON), "-c", code, str(source)], check=True)
    return source, "parquet"


CASES = {"identical-rows": _identical_rows, "parquet-bomb": _parquet_bomb}


def measure() -> None:
    figures, goals = {}, []
    for name, make in CASES.items():
        with tempfile.TemporaryDirectory(prefix="gate-hostile-") as tmp:
            repo = base_repo(Path(tmp))
            source, fmt = make(Path(tmp))
            _submit(repo, source, fmt)
            gate = [MLREPRO, "gate", "--base", "main", "--format", "markdown"]
            runs = [run(gate, cwd=repo, ok=(1,)) for _ in range(RUNS_EACH)]
            size = source.stat().st_size
        times = [r[0] for r in runs]
        summary = len(runs[-1][2].encode("utf-8"))
        figures[name] = {"input_bytes": size,
                         "gate": {**spread(times), "peak_rss_mib": round(max(r[1] for r in runs), 1)},
                         "summary_bytes": summary, "verdict": "fail" if "failed" in runs[-1][2] else "?"}
        goals.append(goal(f"`mlrepro gate` on a hostile version ({name}) finishes", median(times), GOAL_S, "s"))
        goals.append(goal(f"its markdown step summary ({name})", summary / 2**20, GOAL_SUMMARY_BYTES / 2**20,
                          "MiB"))
        print(f"gate_hostile {name}: median {median(times):.2f} s, summary {summary} bytes")
    save("gate_hostile", figures, goals, METHOD)
