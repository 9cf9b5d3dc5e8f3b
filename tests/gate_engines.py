"""The gate's two engines give the same report (issue 12).

The gate holds its rows as plain dicts (engine ``rows``: no pandas, pandera
or pyarrow); the columnar path (engine ``frames``: ingest's bulk path,
pandera, compare's columns) is what the gate used before. :func:`agree`
runs one gate invocation in-process with each engine, the clock pinned, and
returns the two JSON documents, which every caller asserts equal. The gate
tests call it for every gate they run (tests/test_gate.py ``gate``), so every
hostile case of tests/test_gate_bypasses.py is checked both ways.
"""

from __future__ import annotations

import functools
import json
import os
from datetime import datetime, timezone
from pathlib import Path

from click.testing import CliRunner

from pipeline.store import clock
from pipeline.gate import judge as gate_mod
from pipeline.core import rules
from pipeline.cli import cli

PINNED = datetime(2026, 6, 1, tzinfo=timezone.utc)   # a clock both runs share


def _json_args(args: tuple) -> list[str]:
    """The gate's arguments with every output option dropped and --format json."""
    out, skip = [], False
    for arg in map(str, args):
        if skip:
            skip = False
        elif arg in ("--format", "-o", "--output"):
            skip = True
        elif arg not in ("-q", "--quiet", "-v", "--verbose"):
            out.append(arg)
    return out + ["--format", "json"]


def run(repo: Path, args: tuple, engine: str, env: dict | None = None) -> tuple[int, str]:
    """One in-process gate run with ENGINE: (exit code, output)."""
    real_run, real_now = gate_mod.run, clock.now
    gate_mod.run = functools.partial(real_run, engine=engine)
    clock.now = lambda: PINNED
    before = os.getcwd()
    os.chdir(repo)
    rules.clear_caches()
    try:
        done = CliRunner().invoke(cli, ["gate", *_json_args(args)], env={
            "GITHUB_BASE_REF": None, "MLREPRO_SCHEMAS": None, **(env or {})})
    finally:
        os.chdir(before)
        gate_mod.run, clock.now = real_run, real_now
        rules.clear_caches()
    assert done.exception is None or isinstance(done.exception, SystemExit), repr(done.exception)
    return done.exit_code, done.stdout if done.exit_code in (0, 1) else done.output


def agree(repo: Path, args: tuple, env: dict | None = None) -> dict | None:
    """Run the gate with both engines; assert the same exit code and document."""
    rows, frames = run(repo, args, "rows", env), run(repo, args, "frames", env)
    assert rows[0] == frames[0], (rows, frames)
    if rows[0] in (0, 1):
        doc_rows, doc_frames = json.loads(rows[1]), json.loads(frames[1])
        assert doc_rows == doc_frames, _difference(doc_rows, doc_frames)
        return doc_rows
    assert rows[1] == frames[1]
    return None


def _difference(a: dict, b: dict) -> str:
    """The first parts of two documents that differ (this module is not assert-rewritten)."""
    for key in a:
        if a[key] != b.get(key):
            return f"{key}: rows {json.dumps(a[key])[:1500]}\n frames {json.dumps(b.get(key))[:1500]}"
    return "keys differ"
