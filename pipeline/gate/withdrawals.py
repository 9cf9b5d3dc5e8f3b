"""Explicit withdrawals: a new version may not silently drop a result.

A gated version that drops a result of the version it supersedes (the newest
earlier version of the same submitter, round and declared status) -- same
system, model and scenario -- or moves it to another division or system, must
list it under ``withdraws:`` in its manifest with a reason; otherwise
``result-dropped``. Withdrawn results are shown with the verdict they had.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.core import rules
from pipeline.core.findings import Finding, finding
from pipeline.store.manifests import MANIFEST, find_versions, load_manifest

KEY = ("system", "model", "scenario", "division")


def predecessor(root: Path, g) -> tuple | None:
    """(the version G supersedes, G's Version): the newest earlier version with
    the same declared status; None for a first version or an unreadable one."""
    if not (root / g.round / g.submitter).is_dir():
        return None
    versions = _versions(root, g)
    mine = next((v for v in versions if v.number == g.number), None)
    if mine is None or mine.manifest is None:
        return None
    earlier = [v for v in versions if v.number < g.number and v.manifest is not None
               and v.manifest.status == mine.manifest.status]
    return (earlier[-1], mine) if earlier else None


def _versions(root: Path, g) -> list:
    versions, _ = find_versions(root)
    out = [v for v in versions if (v.round, v.submitter) == (g.round, g.submitter)]
    for v in out:
        if v.manifest is None:
            load_manifest(v)
    return out


def _matches(entry: dict, row: dict) -> bool:
    model = rules.canonical_model(str(entry.get("model", ""))) or entry.get("model")
    return (str(entry.get("system")) == str(row["system"]) and model == row["model"]
            and str(entry.get("scenario", "")).lower() == str(row["scenario"]).lower()
            and (not entry.get("division") or entry["division"] == row["division"]))


def check(g, new_rows: list[dict], old_rows: list[dict], verdicts: dict[str, dict],
          withdraws: list[dict], prefix: str, previous: int) -> tuple[list[Finding], dict]:
    """(result-dropped findings, the version's withdrawal summary)."""
    have = {tuple(str(r[k]) for k in KEY) for r in new_rows}
    where = f"{prefix}{g.display}/{MANIFEST}"
    found, withdrawn = [], []
    for row in old_rows:
        if tuple(str(row[k]) for k in KEY) in have:
            continue
        had = verdicts.get(row["source"], {})
        shown = _had(had)
        entry = next((w for w in withdraws if _matches(w, row)), None)
        if entry is not None:
            withdrawn.append({"system": row["system"], "model": row["model"], "scenario": row["scenario"],
                              "division": row["division"], "source": prefix + row["source"],
                              "reason": entry["reason"], "verdict": had.get("verdict"),
                              "deviation_pct": had.get("deviation_pct")})
            continue
        moved = [r for r in new_rows if (r["model"], r["scenario"]) == (row["model"], row["scenario"])
                 and (r["system"], r["division"]) != (row["system"], row["division"])]
        how = (f"moves it to {moved[0]['system']} ({moved[0]['division']})" if moved else "leaves it out")
        found.append(finding(
            "result-dropped", where, "key withdraws",
            f"a withdraws entry for {row['system']} {row['model']} {row['scenario']} "
            f"({row['division']}) with a reason",
            "none",
            f"v{g.number} {how}: v{previous}'s result {row['system']} {row['model']} {row['scenario']} "
            f"({row['division']}, {prefix}{row['source']}, {shown}) must be withdrawn explicitly"))
    deviated = [w for w in withdrawn if w["verdict"] == "deviates"]
    text = f"withdraws {len(withdrawn)} result{'s' if len(withdrawn) != 1 else ''}"
    if withdrawn:
        text += ("; " + f"{len(deviated)} deviated by "
                 + ", ".join(f"{w['deviation_pct']:+.2f}%" for w in deviated)) if deviated else "; none deviated"
    return found, {"version": g.display, "supersedes": previous, "withdrawn": withdrawn, "text": text}


def _had(had: dict) -> str:
    if had.get("verdict") == "deviates" and had.get("deviation_pct") is not None:
        return f"deviated by {had['deviation_pct']:+.2f}%"
    return had.get("verdict") or "no verdict"
