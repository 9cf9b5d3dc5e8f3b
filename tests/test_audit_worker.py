"""`mlrepro analyse` runs its audit in a worker process started at its
beginning (pipeline/audit_worker.py: GX's import overlaps the other steps).
The worker and the in-process audit write the same validation.json and give
the same findings; a worker that cannot start, dies or says nothing readable
leaves the audit to the parent (same result, nothing lost, no process left)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import canonical_row, run, write_canonical
from pipeline.analyses import audit_worker
from test_analyse import analyse_args, work  # noqa: F401  (the fixture)


@pytest.fixture
def odd(work):  # noqa: F811
    """A table whose sets fail GX expectations (audit findings to compare)."""
    frame = pd.read_parquet(work / "data/results.parquet")
    rows = frame.head(40).to_dict("records")
    bad = [canonical_row(system="BAD1", value=-5.0, source="v6.0/AMD/v1/bad.csv:2"),
           canonical_row(system="BAD2", scenario="Bogus", source="v6.0/AMD/v1/bad.csv:3")]
    write_canonical(work / "data/odd.parquet", rows + bad)
    return work


@pytest.fixture
def spy(monkeypatch):
    """Each worker's result as the parent got it (None: it audited in-process)
    and each worker process, to check that none is left running."""
    got, procs = [], []
    result, start = audit_worker.Worker.result, audit_worker.Worker.start.__func__

    def recording_result(self):
        got.append(result(self))
        return got[-1]

    def recording_start(cls):
        worker = start(cls)
        procs.append(worker.proc)
        return worker

    monkeypatch.setattr(audit_worker.Worker, "result", recording_result)
    monkeypatch.setattr(audit_worker.Worker, "start", classmethod(recording_start))
    return got, procs


def analysed(folder, name):
    done = run(*analyse_args("data/odd.parquet", folder / name), "--format", "json", expect=1)
    audit_findings = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "expectation-failed"]
    raw = (folder / name / "audit/validation.json").read_bytes()
    return raw.replace(str(folder / name).encode(), b"<out>"), [
        {k: str(v).replace(str(folder / name), "<out>") for k, v in f.items()} for f in audit_findings]


def test_the_worker_and_the_in_process_audit_give_the_same_bytes_and_findings(odd, spy, monkeypatch):
    got, procs = spy
    by_worker = analysed(odd, "worker")
    assert len(got) == 1 and got[0] is not None   # the worker's report was used
    monkeypatch.setattr(audit_worker.Worker, "start", classmethod(lambda cls: cls(None)))
    in_process = analysed(odd, "here")
    assert by_worker[1] and by_worker == in_process
    assert all(p.poll() is not None for p in procs)


@pytest.mark.parametrize("code", [
    "import sys; sys.exit(1)",                                   # dies before the job
    "raise ImportError('broken install')",                       # a traceback on start-up
    "import sys; sys.stdin.read(); sys.exit(9)",                 # dies on the job
    "import sys; sys.stdin.read(); print('not json')",           # says nothing readable
    "import os, sys; sys.stdin.read(); os.kill(os.getpid(), 9)", # killed
])
def test_a_dead_worker_leaves_the_audit_to_the_parent(odd, spy, monkeypatch, tmp_path_factory, code):
    got, procs = spy
    expected = analysed(odd, "worker")
    fake = tmp_path_factory.mktemp("fake")
    (fake / "dying_worker.py").write_text(code + "\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(fake))
    monkeypatch.setattr(audit_worker, "WORKER", "dying_worker")
    assert analysed(odd, "fallback") == expected
    assert got[-1] is None and all(p.poll() is not None for p in procs)


def test_a_worker_that_cannot_start_leaves_the_audit_to_the_parent(odd, spy, monkeypatch):
    got, procs = spy
    expected = analysed(odd, "worker")

    def cannot_start(*args, **kwargs):
        raise OSError("no such interpreter")

    monkeypatch.setattr(audit_worker.subprocess, "Popen", cannot_start)
    assert analysed(odd, "fallback") == expected
    assert got[-1] is None and procs[-1] is None


def test_a_worker_given_no_job_ends_quietly_with_status_0():
    """Stdin closed with no job (the parent went away): the worker ends at
    once with status 0 and says nothing (it ends by os._exit, after flushing)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", audit_worker.WORKER], input=b"", capture_output=True,
                          env=audit_worker._environment(), timeout=120)
    assert (done.returncode, done.stdout) == (0, b""), done.stderr
