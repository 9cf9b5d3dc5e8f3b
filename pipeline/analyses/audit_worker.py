"""The audit of ``mlrepro analyse`` in a second process, started early so that
importing Great Expectations (about 2 s) overlaps compare, partition, metrics,
claims, scaling and crosscheck on the other core.

``python -m pipeline.analyses.audit_worker`` imports GX (deferred as the audit does:
:func:`pipeline.analyses.audit.import_gx`), then reads one JSON job on stdin::

    {"verified": V, "post_deadline": P, "suites": DIR or null}

runs :func:`pipeline.analyses.audit.audit` on it (exactly what ``mlrepro audit`` runs)
and writes the report on stdout as JSON: ``{"report": {suites, results,
findings, gx_log}}``, or ``{"config_error": message}`` for a suite folder the
audit refuses (exit 3 in the parent, as in-process). Stdin closed with no job:
it exits quietly (the parent went away). Having answered, it ends at once
(``os._exit``: no interpreter teardown, nothing is left to write).

The parent side is :class:`Worker`: :meth:`Worker.start` spawns it
(``subprocess.Popen`` of the same interpreter, never ``os.fork``: the parent
has pyarrow's threads), :meth:`Worker.submit` sends the job,
:meth:`Worker.result` collects the report, or None when the worker could not
start, died or said something unreadable: the caller then runs the audit
in-process (the same result; a finding is never lost). :meth:`Worker.close`
kills a worker still running: none outlives the parent's call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# how long the parent waits for the worker's report before it kills it and audits in-process
TIMEOUT_S = 600.0


# the module the worker runs (`python -m`); tests name one that dies
WORKER = "pipeline.analyses.audit_worker"


def _environment() -> dict[str, str]:
    """The parent's environment, with this code first on PYTHONPATH (the worker
    imports the very modules the parent runs)."""
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


class Worker:
    def __init__(self, proc: subprocess.Popen | None):
        self.proc = proc
        self.sent = False

    @classmethod
    def start(cls) -> "Worker":
        try:
            proc = subprocess.Popen([sys.executable, "-m", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=_environment(), cwd=os.getcwd())
        except OSError:
            proc = None
        return cls(proc)

    def submit(self, verified: Path, post_deadline: Path, suites: Path | None) -> None:
        if self.proc is None:
            return
        job = {"verified": str(verified), "post_deadline": str(post_deadline),
               "suites": None if suites is None else str(suites)}
        try:
            self.proc.stdin.write(json.dumps(job).encode("utf-8"))
            self.proc.stdin.close()
            self.proc.stdin = None   # communicate() would flush it otherwise
            self.sent = True
        except OSError:   # the worker died (broken pipe): the caller audits in-process
            self.close()

    def result(self):
        """The worker's AuditReport; None: audit in-process instead. A suite
        folder the audit refuses raises its ConfigError here, as in-process."""
        from pipeline.analyses.audit import AuditReport
        from pipeline.core.errors import ConfigError
        from pipeline.core.findings import Finding

        if self.proc is None or not self.sent:
            return None
        try:
            out, _ = self.proc.communicate(timeout=TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            self.close()
            return None
        if self.proc.returncode != 0:
            return None
        try:
            doc = json.loads(out)
            if "config_error" in doc:
                raise ConfigError(doc["config_error"])
            rep = doc["report"]
            return AuditReport(suites=rep["suites"], results=rep["results"],
                               findings=[Finding.from_dict(f) for f in rep["findings"]], gx_log=rep["gx_log"])
        except (ValueError, KeyError, TypeError):
            return None

    def close(self) -> None:
        """Kill the worker if it still runs, and reap it (no orphan, no zombie)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def main() -> int:
    from pipeline.analyses import audit
    from pipeline.core.errors import ConfigError
    from pipeline.core.model import plain

    log: list[str] = []
    with audit._quiet_gx(log):   # what GX logs on import goes first in gx_log, as in-process
        audit.import_gx()
    raw = sys.stdin.buffer.read()
    if not raw.strip():
        return 0
    job = json.loads(raw)
    try:
        report = audit.audit(Path(job["verified"]), Path(job["post_deadline"]), None,
                             None if job["suites"] is None else Path(job["suites"]))
    except ConfigError as exc:
        doc = {"config_error": str(exc)}
    else:
        doc = {"report": {"suites": plain(report.suites), "results": plain(report.results),
                          "findings": [f.to_dict() for f in report.findings],
                          "gx_log": log + report.gx_log}}
    sys.stdout.write(json.dumps(doc))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    status = main()
    # the report is out (flushed) and nothing else is left to write: end here, without
    # the interpreter's teardown of GX's and pandas' modules (about 0.3 s the parent
    # would wait for, on the analyse stage's longest path)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
