"""What every benchmark shares: the machine and commit it ran on, child
processes timed with their peak memory, commands run interleaved, and the
goal verdicts written into benchmarks/results.json.

Nothing here holds a figure: every number in results.json is measured by
the run that wrote it. ``MLREPRO_BENCH_QUICK=1`` runs small inputs and few
repetitions (for tests), and writes to a temporary file, never over the real
figures; ``MLREPRO_BENCH_OUT`` writes the figures elsewhere than
benchmarks/results.json (tests, trial runs).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent if (Path(sys.executable).parent / "mlrepro").exists() \
    else REPO / ".venv" / "bin"
MLREPRO = BIN / "mlrepro"
PYTHON = BIN / "python"
RESULTS = REPO / "benchmarks" / "results.json"
QUICK = os.environ.get("MLREPRO_BENCH_QUICK", "") not in ("", "0")
RUNS = 5                       # every figure is a median of at least this many runs


def out_path() -> Path:
    """benchmarks/results.json; a quick run never overwrites the real figures."""
    default = Path(tempfile.gettempdir()) / "mlrepro-bench-quick.json" if QUICK else RESULTS
    return Path(os.environ.get("MLREPRO_BENCH_OUT") or default)


def machine() -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh
                          if line.startswith("model name")), "")
    except OSError:
        pass
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            mem_kb = int(fh.readline().split()[1])
    except (OSError, ValueError, IndexError):
        mem_kb = 0
    return {"platform": platform.platform(), "python": platform.python_version(),
            "cpu": model or platform.processor(), "cpus": os.cpu_count(),
            "memory_gib": round(mem_kb / 1024 / 1024, 1),
            "load_average_1m_when_saved": round(os.getloadavg()[0], 2)}


def commit() -> str:
    """HEAD of the repository, with ``+dirty`` when tracked files differ
    (other than the results and the page that the run rewrites)."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""
    head = git("rev-parse", "HEAD") or "unknown"
    # the files a run writes itself do not count
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                ":!benchmarks/results.json", ":!docs/benchmarks.md")
    return head + ("+dirty" if dirty else "")


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def environ(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "MLREPRO_BENCH"))}
    env.update({"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1",
                **(extra or {})})
    return env


def run(args: list, cwd: Path | None = None, env: dict | None = None,
        ok: tuple[int, ...] = (0,), stdout_to: Path | None = None) -> tuple[float, float, str]:
    """Run a child process; return (wall seconds, its peak RSS in MiB (the
    largest of it and its children), its stdout)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sink = open(stdout_to, "wb") if stdout_to else out
        try:
            start = time.perf_counter()
            proc = subprocess.Popen([str(a) for a in args], cwd=cwd, env=environ(env),
                                    stdout=sink, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
        finally:
            if stdout_to:
                sink.close()
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    if code not in ok:
        raise SystemExit(f"{' '.join(map(str, args))} exited {code}:\n{stderr[-3000:]}")
    return wall, usage.ru_maxrss / 1024, stdout


def interleaved(commands: dict[str, "callable"], runs: int) -> dict[str, list[tuple[float, float, str]]]:
    """Each command (a function returning run()'s triple) ``runs`` times, the
    commands taking turns in one loop (their order reversed every other
    round), so that a change in the machine's load touches both alike."""
    names = list(commands)
    out: dict[str, list] = {name: [] for name in names}
    for i in range(runs):
        for name in (names if i % 2 == 0 else names[::-1]):
            out[name].append(commands[name]())
    return out


def median(values: list[float]) -> float:
    return statistics.median(values)


def spread(times: list[float]) -> dict:
    return {"median_s": round(median(times), 3), "min_s": round(min(times), 3),
            "max_s": round(max(times), 3), "runs": len(times), "times_s": [round(t, 3) for t in times]}


def goal(name: str, measured: float, target: float, unit: str, at_most: bool = True,
         floor: float | None = None, floor_what: str | None = None) -> dict:
    """A goal's verdict: met, or missed by how much (per cent of the target)."""
    met = measured <= target if at_most else measured >= target
    if met:
        by = None
    elif at_most:
        by = round((measured / target - 1) * 100, 1)
    else:
        by = round((1 - measured / target) * 100, 1)
    out = {"goal": name, "measured": round(measured, 3), "unit": unit,
           "target": f"{'<=' if at_most else '>='} {target:g}", "met": met, "missed_by_pct": by}
    if floor is not None:
        out.update(floor=round(floor, 3), floor_what=floor_what)
    return out


def save(key: str, figures: dict, goals: list[dict], method: str) -> dict:
    """Merge one benchmark's figures into the results file."""
    path = out_path()
    existing = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    entry = {"measured_at": now(), "commit": commit(), "mode": "quick" if QUICK else "full",
             "machine": machine(), "method": method, "goals": goals, "figures": figures}
    existing.setdefault("benchmarks", {})[key] = entry
    existing["about"] = ("Written by `make bench` (benchmarks/run.py); every figure measured by the run "
                         "named beside it; docs/benchmarks.md's table is generated from this file.")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(existing, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return entry
