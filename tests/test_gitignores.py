"""The .gitignore files DVC writes are tracked and byte-stable: each holds its
folder's cached outputs in the order `dvc repro` first writes them (the stages in
the order they run, each stage's outs in dvc.yaml's order), since DVC appends an
output to its folder's .gitignore when it is not yet ignored and never reorders
one that is. A tracked file in another order reads the same to git, but a run
from scratch without it writes a different file than a run with it; and an output
DVC would ignore that the tracked file lacks is a change `make run` leaves."""

from __future__ import annotations

from collections import defaultdict
from pathlib import PurePosixPath

import yaml

from conftest import REPO


def cached_outputs_in_run_order() -> list[str]:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    written: list[str] = []
    for stage in stages.values():
        deps = set(stage.get("deps", []))
        assert not deps & {o for later in stages.values() for o in _outs(later)} - set(written), (
            "a stage reads an output of a later stage: dvc.yaml's order is not the run's")
        written += [out for out in _outs(stage) if _cached(stage, out)]
    return written


def _outs(stage: dict) -> list[str]:
    return [next(iter(o)) if isinstance(o, dict) else o for o in stage.get("outs", [])]


def _cached(stage: dict, out: str) -> bool:
    for o in stage.get("outs", []):
        if isinstance(o, dict) and out in o:
            return (o[out] or {}).get("cache", True)
    return True


def test_every_dvc_written_gitignore_is_in_the_order_a_run_from_scratch_writes_it():
    expected: dict[str, list[str]] = defaultdict(list)
    for out in cached_outputs_in_run_order():
        path = PurePosixPath(out)
        expected[str(path.parent)].append(f"/{path.name}\n")
    assert expected
    for folder, lines in expected.items():
        tracked = (REPO / folder / ".gitignore").read_text(encoding="utf-8")
        assert tracked == "".join(lines), f"{folder}/.gitignore"
