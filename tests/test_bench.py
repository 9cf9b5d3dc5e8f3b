"""The benchmarks measure what they show: docs/benchmarks.md's table is generated from
benchmarks/results.json, every figure carries its machine, date, commit and
method, and the polars floor does the same work as the pipeline. Nothing here
times anything."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import common  # noqa: E402  (benchmarks/ is a folder of scripts)
import page  # noqa: E402
import synthetic  # noqa: E402

RESULTS = REPO / "benchmarks" / "results.json"


def results() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def test_the_benchmarks_page_is_the_one_results_json_gives():
    text = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert page.block(text) == page.table(results())


def test_every_figure_says_where_when_how_and_by_what_commit():
    benches = results()["benchmarks"]
    assert {"fresh_install", "make_run", "gate_latency", "scale", "tree_ingest"} <= set(benches)
    for entry in benches.values():
        assert entry["method"] and entry["commit"] and entry["measured_at"]
        assert {"cpu", "cpus", "python", "platform"} <= set(entry["machine"])
        for goal in entry["goals"]:
            assert goal["met"] == (goal["missed_by_pct"] is None)


def test_results_json_holds_no_figure_the_run_did_not_measure():
    text = RESULTS.read_text(encoding="utf-8")
    assert "checker" not in text.lower()


@pytest.mark.parametrize("measured, target, at_most, met, by", [
    (0.5, 0.5, True, True, None), (0.75, 0.5, True, False, 50.0),
    (2000, 2000, False, True, None), (500, 2000, False, False, 75.0)])
def test_a_goal_is_met_or_missed_by_how_much(measured, target, at_most, met, by):
    goal = common.goal("g", measured, target, "s", at_most=at_most)
    assert (goal["met"], goal["missed_by_pct"]) == (met, by)
    assert ("met" if met else f"missed** by {by:g} %") in page.table(
        {"benchmarks": {"x": {"goals": [goal], "method": "m", "commit": "c", "mode": "full",
                              "measured_at": "2026-01-01T00:00:00+00:00",
                              "machine": {"cpus": 2, "cpu": "c", "load_average_1m_when_saved": 0}}}})


def test_a_quick_run_never_writes_the_real_figures(monkeypatch):
    monkeypatch.setattr(common, "QUICK", True)
    monkeypatch.delenv("MLREPRO_BENCH_OUT", raising=False)
    assert common.out_path() != common.RESULTS


def test_synthetic_tables_have_the_realistic_mix():
    """Rows vary as real ones do: each submitter its own systems, about a
    dozen results per system (4 models x 3 scenarios), every result id its
    own, never a few values repeated."""
    # one pass over the rows as they are generated (a list of a million rows is most of a gigabyte)
    count = late = 0
    systems, system_ids, models, result_ids = set(), set(), set(), set()
    for _, is_late, row in synthetic.rows(1_000_000):
        count += 1
        late += is_late
        systems.add((row[0], row[1]))
        system_ids.add(row[1])
        models.add((row[0], row[1], row[6]))
        result_ids.add(row[12])
    assert count == 1_000_000
    submitters = {submitter for submitter, _ in systems}
    assert len(submitters) == 30 and len(system_ids) == len(systems) >= 80_000
    assert 11 <= count / len(systems) <= 13
    assert len(models) <= 4 * len(systems) + 30   # 4 models a system
    assert len(result_ids) == count and all(result_ids)
    assert 0.13 <= late / count <= 0.17


def test_the_polars_floor_finds_what_the_pipeline_finds(tmp_path):
    """Same rows, same verdicts, same split: the floor does the same work."""
    polars_floor = pytest.importorskip("polars_floor")
    runner = CliRunner()

    def mlrepro(args) -> str:
        done = runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)
        assert done.exit_code in (0, 1), done.output
        return done.output

    root = synthetic.write(tmp_path / "bench", 1_200, mlrepro)
    out = tmp_path / "pipeline"
    out.mkdir()
    import scale

    ingest, compare, partition = (scale.summary_of(mlrepro(args))
                                  for args in scale.pipeline_commands(root, out))
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        polars_floor.main([str(root), str(tmp_path / "floor")])
    floor = json.loads(printed.getvalue())
    assert floor["rows"] == ingest["accepted"] == 1_200
    assert (floor["verified"], floor["post_deadline"]) == (partition["verified"], partition["post_deadline"])
    assert floor["post_deadline"] > 0
    assert (floor["agree"], floor["deviates"], floor["no-reference"]) == \
        (compare["agree"], compare["deviates"], compare["no-reference"])
    assert floor["agree"] > 0 and floor["deviates"] > 0
