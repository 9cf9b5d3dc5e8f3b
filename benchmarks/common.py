"""What every benchmark shares: the machine it ran on, timed child processes
with their peak memory, and merging figures into benchmarks/results.json."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".venv" / "bin"
MLREPRO = BIN / "mlrepro"
RESULTS = REPO / "benchmarks" / "results.json"


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
            "load_average_1m": round(os.getloadavg()[0], 2)}


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def run(args: list, cwd: Path | None = None, env: dict | None = None,
        ok: tuple[int, ...] = (0,)) -> tuple[float, float, str]:
    """Run a child process; return (wall seconds, its own peak RSS in MiB, its stdout)."""
    environ = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
               "DVC_NO_ANALYTICS": "1", **(env or {})}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([str(a) for a in args], cwd=cwd, env=environ, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(map(str, args))} exited {proc.returncode}:\n{stderr[-2000:]}")
    return wall, usage.ru_maxrss / 1024, stdout


def save(key: str, figures: dict) -> None:
    existing = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    existing[key] = {**figures, "machine": machine(), "measured_at": now()}
    RESULTS.write_text(json.dumps(existing, indent=2) + "\n", encoding="utf-8")
