"""docs/benchmarks.md's table, generated from benchmarks/results.json: one
row per goal with the figure, the floor measured in the same run, the verdict
(met, or missed by how much) and when, where and how it was measured.
`make bench` rewrites the block between the markers; a test checks that the
page says what results.json says.

    python benchmarks/page.py [results.json] [docs/benchmarks.md]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BEGIN = "<!-- benchmarks:begin (generated from benchmarks/results.json by benchmarks/page.py) -->"
END = "<!-- benchmarks:end -->"
ORDER = ("fresh_install", "make_run", "gate_latency", "scale", "tree_ingest")


def _number(value: float, unit: str) -> str:
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}" if unit in ("x", "") else f"{value:.2f}"
    return f"{text} {unit}".strip() if unit not in ("x",) else f"{text}x"


def _verdict(goal: dict) -> str:
    if goal["met"]:
        return "met"
    return f"**missed** by {goal['missed_by_pct']:g} %"


def _when(entry: dict) -> str:
    m = entry["machine"]
    return (f"{entry['measured_at'][:16].replace('T', ' ')} UTC, commit {entry['commit'][:10]}"
            f"{' (+ uncommitted changes)' if entry['commit'].endswith('+dirty') else ''}, "
            f"{m['cpus']} cores ({m['cpu']}), 1-min load average {m['load_average_1m_when_saved']}, {entry['mode']} mode")


def table(results: dict) -> str:
    """The Markdown block: the goals table, then each benchmark's method."""
    benches = results.get("benchmarks", {})
    lines = ["| goal | measured | floor, same run | target | verdict | measured on |",
             "| --- | --- | --- | --- | --- | --- |"]
    methods = []
    for key in [k for k in ORDER if k in benches] + sorted(set(benches) - set(ORDER)):
        entry = benches[key]
        for g in entry["goals"]:
            floor = f"{g['floor']:.3g} s ({g['floor_what'].rsplit(' (', 1)[0]})" if g.get("floor") is not None else "–"
            lines.append(f"| {g['goal']} | {_number(g['measured'], g['unit'])} | {floor} | "
                         f"{g['target']}{'x' if g['unit'] == 'x' else (' ' + g['unit'] if g['unit'] else '')} | "
                         f"{_verdict(g)} | {_when(entry)} |")
        methods.append(f"- `{key}`: {entry['method']}")
    return "\n".join([BEGIN, "", *lines, "", "How each was measured:", "", *methods, "", END])


def block(page_text: str) -> str | None:
    """The generated block as it stands in the page, or None."""
    start, end = page_text.find(BEGIN), page_text.find(END)
    if start < 0 or end < 0:
        return None
    return page_text[start:end + len(END)]


def rewrite(results_path: Path, page_path: Path) -> None:
    results = json.loads(results_path.read_text(encoding="utf-8"))
    text = page_path.read_text(encoding="utf-8")
    old = block(text)
    if old is None:
        raise SystemExit(f"{page_path}: no {BEGIN!r} ... {END!r} markers")
    page_path.write_text(text.replace(old, table(results)), encoding="utf-8")


if __name__ == "__main__":
    args = [Path(a) for a in sys.argv[1:]]
    rewrite(args[0] if args else REPO / "benchmarks" / "results.json",
            args[1] if len(args) > 1 else REPO / "docs" / "benchmarks.md")
