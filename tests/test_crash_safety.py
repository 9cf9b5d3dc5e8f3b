"""Crash-safe outputs: a run killed part-way leaves every output whole, the
old one or the new one, and the next run recovers.

Every writer goes through :func:`pipeline.core.files.atomic_path` (a temporary
file beside the output, renamed into place), which a grep-level test checks.
The kill test starts ``mlrepro ingest`` on a large generated results CSV,
writing over existing outputs, waits until it opens its first temporary
output (or, in the other attempts, the second or third), kills it with
SIGKILL, and checks that each output is byte-identical to the old one or to
the new one, which the next, complete run over a killed run's outputs
writes. The three attempts run in parallel; the triggers only aim the kill
at the middle of the writes, and nothing here asserts on time.
``MLREPRO_CRASH_ROWS`` sets the size of the input (default 10000 rows).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, run

MLREPRO = Path(sys.executable).parent / "mlrepro"
ROWS = int(os.environ.get("MLREPRO_CRASH_ROWS", "10000"))
HEADER = ("submitter,system,accelerator,accelerators_per_node,nodes,model,scenario,value,units,"
          "division,availability")
OUTPUTS = ("results.csv", "rejected.csv", "findings.json", "versions.csv")


# ---- every writer is atomic ---------------------------------------------------------------

WRITES = re.compile(r"\.(write_text|write_bytes|to_csv|to_parquet|to_json|dump)\(|\bopen\([^)]*['\"][wax]b?['\"]")


def test_every_writer_in_the_package_goes_through_atomic_path():
    """Writes to a path happen only on the temporary path that atomic_path
    yields (or in submit's temporary version folder, renamed into place, or in
    the gate's scratch copy of a commit, never an output)."""
    offenders = []
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            if not WRITES.search(line) or line.lstrip().startswith("#"):
                continue
            context = "\n".join(lines[max(0, number - 8):number])
            if "to_csv(None" in line:   # returns the text; its caller writes it
                continue
            if "atomic_path(" in context or "tmp /" in line or "(tmp," in line or "(tmp)" in line \
                    or "scratch /" in context:
                continue
            offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert offenders == []


# ---- a run killed part-way ----------------------------------------------------------------

def big_results(path: Path, rows: int) -> Path:
    lines = [HEADER]
    for i in range(rows):
        submitter = "AMD" if i % 10 == 0 else "Dell"
        value = "100 282" if i % 997 == 0 else f"{100000 + i % 5000}.5"    # some rows rejected
        lines.append(f"{submitter},Sys_{i}_8xMI355X,AMD Instinct MI355X 288GB HBM3E,8,1,llama2-70b-99,"
                     f"{'Server' if i % 2 else 'Offline'},{value},Tokens/s,closed,available")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def ingest_args(source: Path, out: Path) -> list[str]:
    return [str(MLREPRO), "ingest", str(source), "--status", "verified", "--round", "v6.0",
            "-o", str(out / "results.csv"), "--rejected-out", str(out / "rejected.csv"),
            "--findings-out", str(out / "findings.json"), "--versions-out", str(out / "versions.csv"),
            "--exit-zero"]


def env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("MLREPRO_")}


def outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in OUTPUTS}


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in OUTPUTS)


def writing(folder: Path, names: tuple[str, ...]) -> bool:
    """Whether the run has opened the temporary file of one of ``names``."""
    return any(next(folder.glob(f".{name}.*.tmp"), None) for name in names)


# Each attempt is killed when the run reaches a point of its writes, seen on
# disk: the first output being written; the first replaced and the second
# being written; the last ones being written.
TRIGGERS = {"results": OUTPUTS, "rejected": OUTPUTS[1:], "findings": OUTPUTS[2:]}


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_a_killed_ingest_leaves_old_or_new_outputs_and_the_next_run_recovers(tmp_path):
    big = big_results(tmp_path / "big.csv", ROWS)
    old_dir = tmp_path / "old"
    run("ingest", REPO / "tests" / "data" / "results-dell.csv", "--status", "verified", "--round", "v6.0",
        "-o", old_dir / "results.csv", "--rejected-out", old_dir / "rejected.csv",
        "--findings-out", old_dir / "findings.json", "--versions-out", old_dir / "versions.csv", expect=0)
    old = outputs(old_dir)

    attempts = {}
    for trigger in TRIGGERS:     # in parallel, each over its own copy of the old outputs
        out = tmp_path / f"killed-at-{trigger}"
        shutil.copytree(old_dir, out)
        attempts[trigger] = (out, subprocess.Popen(ingest_args(big, out), env=env(),
                                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    pending = dict(attempts)
    while pending:
        for trigger, (out, proc) in list(pending.items()):
            if proc.poll() is not None or writing(out, TRIGGERS[trigger]):
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                del pending[trigger]
        time.sleep(0.001)

    after_kills = {}
    for trigger, (out, _) in attempts.items():
        after_kills[trigger] = outputs(out)
        # besides the outputs, a kill may leave only atomic_path's hidden temporary files
        for extra in leftovers(out):
            assert re.fullmatch(r"\.(%s)\..+\.tmp" % "|".join(map(re.escape, OUTPUTS)), extra), extra

    recovered = attempts["rejected"][0]     # the next run over a killed run's outputs
    done = subprocess.run(ingest_args(big, recovered), env=env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    new = outputs(recovered)
    assert new["results.csv"] != old["results.csv"] and b"malformed-number" in new["findings.json"]
    states = {}
    for trigger, now in after_kills.items():
        for name in OUTPUTS:
            assert now[name] in (old[name], new[name]), f"{name} is partial after a kill at {trigger}"
        states[trigger] = "".join("N" if now[n] == new[n] and now[n] != old[n] else "o" for n in OUTPUTS)
    print(f"after each kill (results, rejected, findings, versions; N new, o old): {states}")


def test_a_site_folder_is_swapped_in_whole(tmp_path):
    """atomic_dir (the GX Data Docs site): the new folder replaces the old one
    whole; a failure while building leaves the old one untouched."""
    from pipeline.core.files import atomic_dir
    site = tmp_path / "data_docs"
    site.mkdir()
    (site / "index.html").write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError):
        with atomic_dir(site) as building:
            (building / "index.html").write_text("half", encoding="utf-8")
            raise RuntimeError("killed while building")
    assert (site / "index.html").read_text(encoding="utf-8") == "old"
    with atomic_dir(site) as building:
        (building / "index.html").write_text("new", encoding="utf-8")
        (building / "static").mkdir()
        assert (site / "index.html").read_text(encoding="utf-8") == "old"
    assert (site / "index.html").read_text(encoding="utf-8") == "new" and (site / "static").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data_docs"]
