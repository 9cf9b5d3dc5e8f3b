"""`submit`, `submit --dry-run` and `gate` judge one file with one judgement:
the same verdict and the same not-compared reason for every row, and every
finding on the file names it as the partner gave it, the version's path beside."""

from __future__ import annotations

from pathlib import Path

from conftest import LATE, results_row, run, run_json, write_results_csv

DELL = dict(system="PowerEdge_XE9785_8xMI355X")


def _files(tmp_path: Path) -> tuple[Path, Path]:
    amd = write_results_csv(tmp_path / "amd.csv", [
        results_row(submitter="AMD", system="AMD_8xMI355X", value="100000"),
        results_row(submitter="AMD", system="AMD_8xMI355X", scenario="Interactive", value="88000")])
    dell = write_results_csv(tmp_path / "dell.csv", [
        results_row(**DELL, value="100282"),                                  # in tolerance
        results_row(**DELL, scenario="Interactive", value="79200"),           # -10%: deviates
        results_row(**DELL, scenario="Offline", value="120000"),              # no AMD Offline: no reference
        results_row(system="Dell_2xEPYC", accelerator="", accelerators_per_node="0", scenario="Offline",
                    value="500")])                                            # CPU only: set aside
    return amd, dell


def _by_line(doc: dict) -> dict[int, tuple]:
    reasons = {x["line"]: x["reason"] for x in doc["summary"]["not_compared"]}
    return {r["line"]: (r["verdict"] or r["outcome"], reasons.get(r["line"], "")) for r in doc["rows"]}


def test_submit_its_dry_run_and_the_gate_say_the_same_of_every_row(tmp_path):
    root = tmp_path / "submissions"
    amd, dell = _files(tmp_path)
    run("submit", amd, "--submitter", "AMD", "--round", "v6.0", "--status", "post-deadline",
        "--submitted-at", LATE, "--root", root, expect=0)
    args = ("submit", dell, "--submitter", "Dell", "--round", "v6.0", "--status", "post-deadline",
            "--submitted-at", LATE, "--root", root)
    dry = run_json(*args, "--dry-run", expect=1)
    sealed = run_json(*args, expect=0)          # sealed: the gate's errors are a warning here
    gated = run_json("gate", root / "v6.0" / "Dell" / "v1", "--root", root, expect=1)

    expected = {2: ("agree", ""), 3: ("deviates", ""),
                4: ("no-reference", "no AMD result for this round, accelerator, accelerators per node, nodes, "
                                    "model and scenario"),
                5: ("set-aside", "CPU-only result: no accelerator to compare")}
    assert _by_line(dry) == _by_line(sealed) == _by_line(gated) == expected
    assert dry["summary"]["verdict"] == sealed["summary"]["verdict"] == gated["summary"]["verdict"] == "fail"

    # the deviation: at the file the partner gave in submit and its dry run, the version's file beside
    version_file = f"{root.as_posix()}/v6.0/Dell/v1/dell.csv"
    for doc in (dry, sealed):
        [f] = [f for f in doc["findings"] if f["code"] == "deviates-from-reference"]
        assert (f["file"], f["line"], f["sealed"]) == (dell.as_posix(), 3, f"{version_file}:3")
    [f] = [f for f in gated["findings"] if f["code"] == "deviates-from-reference"]
    assert (f["file"], f["line"], "sealed" in f) == (version_file, 3, False)


def test_submit_warns_when_the_gate_will_fail_what_it_sealed(tmp_path):
    root = tmp_path / "submissions"
    amd, dell = _files(tmp_path)
    run("submit", amd, "--submitter", "AMD", "--round", "v6.0", "--status", "post-deadline",
        "--submitted-at", LATE, "--root", root, expect=0)
    out = run("submit", dell, "--submitter", "Dell", "--round", "v6.0", "--status", "post-deadline",
              "--submitted-at", LATE, "--root", root, expect=0)
    lines = out.stdout.splitlines()
    assert lines[:2] == [f"created {root / 'v6.0' / 'Dell' / 'v1'} (post-deadline)",
                         "warning: the gate will fail v6.0/Dell/v1: 1 error(s) above; fix them and submit "
                         "the next version"]
    assert f"deviates: {root.as_posix()}/v6.0/Dell/v1/dell.csv:3 -10.00% [unverified]" in lines
    assert "[deviates-from-reference]" in out.stderr and f"[in the version: {root.as_posix()}" in out.stderr
