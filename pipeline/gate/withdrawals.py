"""Explicit withdrawals: a new version may not silently drop a result.

A gated version that drops a result of the version it supersedes (the newest
earlier version of the same submitter, round and *effective* status: the
status ingest counts it under, whatever was declared) -- same
system, model and scenario -- or moves it to another division or system, must
list it under ``withdraws:`` in its manifest with a reason; otherwise
``result-dropped``. Withdrawn results are shown with the verdict they had.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pipeline.core.findings import Finding, located
from pipeline.core.model import DEVIATES, Source, result_key
from pipeline.core.rules import Rules
from pipeline.store import clock
from pipeline.store.manifests import MANIFEST, Version, load_manifest, withdrawal_for
from pipeline.store.versions import submitter_versions

KEY = ("system", "model", "scenario", "division")


def predecessor(rules: Rules, root: Path, g, visible: clock.Clock, at: datetime) -> tuple[Version, Version] | None:
    """(the version G supersedes, G's Version): the newest earlier one with the same effective status
    (:func:`pipeline.store.clock.statuses`, as ingest supersedes); None for a first or unreadable version."""
    versions = submitter_versions(root, g.round, g.submitter)
    for v in versions:
        load_manifest(rules, v)
    mine = next((v for v in versions if v.number == g.number), None)
    before = clock.predecessor(versions, clock.statuses(rules, versions, visible, at), g.number)
    return (before, mine) if before is not None else None


def check(rules: Rules, g, version: Version, previous: int, new_rows: list[dict], old_rows: list[dict],
          verdicts: dict[tuple, dict], shown: str | None) -> tuple[list[Finding], dict]:
    """(result-dropped findings, the withdrawal summary) of the gated version G (VERSION: its
    loaded Version) superseding v``previous``, whose OLD_ROWS had VERDICTS (by result key)."""
    have = {tuple(str(r[k]) for k in KEY) for r in new_rows}
    m = version.manifest
    where = Source(f"{g.display}/{MANIFEST}", key="withdraws", line=m.lines.get("withdraws"), root=shown)
    found, withdrawn = [], []
    for row in old_rows:
        if tuple(str(row[k]) for k in KEY) in have:
            continue
        had = verdicts.get(result_key(row), {})
        source = str(Source.of_row(row, shown))
        entry = withdrawal_for(rules, m.withdraws, row)
        if entry is not None:
            withdrawn.append({**{k: row[k] for k in KEY}, "source": source,
                              "reason": entry["reason"], "verdict": had.get("verdict"),
                              "deviation_pct": had.get("deviation_pct")})
            continue
        moved = [r for r in new_rows if (r["model"], r["scenario"]) == (row["model"], row["scenario"])
                 and (r["system"], r["division"]) != (row["system"], row["division"])]
        how = (f"moves it to {moved[0]['system']} ({moved[0]['division']})" if moved else "leaves it out")
        found.append(located(
            "result-dropped", where,
            f"a withdraws entry for {row['system']} {row['model']} {row['scenario']} "
            f"({row['division']}) with a reason",
            "none",
            f"v{g.number} {how}: v{previous}'s result {row['system']} {row['model']} {row['scenario']} "
            f"({row['division']}, {source}, {_had(had)}) must be withdrawn explicitly"))
    deviated = [w for w in withdrawn if w["verdict"] == DEVIATES]
    text = f"withdraws {len(withdrawn)} result{'s' if len(withdrawn) != 1 else ''}"
    if withdrawn:
        text += ("; " + f"{len(deviated)} deviated by "
                 + ", ".join(f"{w['deviation_pct']:+.2f}%" for w in deviated)) if deviated else "; none deviated"
    return found, {"version": g.display, "supersedes": previous, "withdrawn": withdrawn, "text": text}


def _had(had: dict) -> str:
    if had.get("verdict") == DEVIATES and had.get("deviation_pct") is not None:
        return f"deviated by {had['deviation_pct']:+.2f}%"
    return had.get("verdict") or "no verdict"
