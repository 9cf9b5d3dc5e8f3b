"""How a partner's system differs from its reference's, and the context of a
result without a same-round reference: part of compare's judgement, made once
per distinct pair of systems. :func:`nearest`'s figure is *context only*,
never a verdict, never counted, never in a claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.core.rules import Rules, is_latency
from pipeline.core.model import VERIFIED
from pipeline.ingest.resolve import host_count_in_id, parse_count

# what a system's description is read from (the canonical table's columns)
SETUP = ("system", "accelerator_variant", "accelerators_per_node", "nodes", "host_processor",
         "host_processors_per_node", "framework", "operating_system", "weight_data_types")
# aspect -> how a person reads it
ASPECTS = {"accelerator": "accelerator", "nodes": "nodes", "host": "host processor",
           "framework": "framework", "os": "operating system", "weights": "weight data types"}
CONTEXT_SAME_ACCELERATOR = "same accelerator, another node count"
CONTEXT_PREVIOUS_GENERATION = "same model and scenario, previous generation"
_LOCAL_VERSION = re.compile(r"\+[0-9A-Za-z.]+")   # 2.9.1+git8907517 -> 2.9.1
# what a published table writes for a field it does not state (v6.1: design_power_watts "None")
UNSTATED = frozenset({"none", "n/a", "na", "null", "-", "unknown"})


@dataclass(frozen=True)
class Difference:
    """One aspect in which a partner's system differs from the reference's."""

    aspect: str
    partner: str | None
    reference: str | None

    def __str__(self) -> str:
        return (f"{ASPECTS[self.aspect]} {self.partner or 'not stated'} "
                f"(reference {self.reference or 'not stated'})")


def _brief(text: object) -> str | None:
    """A stated text as a person compares it (``+git8907517`` dropped, spaces collapsed), or None."""
    if text is None or text != text or str(text).strip().casefold() in UNSTATED | {""}:   # None, NaN, blank
        return None
    return " ".join(_LOCAL_VERSION.sub("", str(text)).split())


def _same(a: str | None, b: str | None) -> bool:
    def key(t):
        return re.sub(r"\s+lts\b", "", t.casefold())
    return a == b or (a is not None and b is not None and key(a) == key(b))


def host_count(row: dict) -> int | None:
    """The host processors per node: the system id's when it states them (a
    count that contradicts it is an ingest warning), else the count stated."""
    count = host_count_in_id(row.get("system"), row.get("nodes"))
    if count is None and _brief(row.get("host_processors_per_node")):
        count = parse_count(str(row["host_processors_per_node"]).strip())   # None when not a whole number
    return count


def setup(row: dict, count: int | None | bool = False) -> dict[str, str | None]:
    """A system's description by aspect; ``count``: its :func:`host_count` if known (False: not)."""
    host = _brief(row.get("host_processor"))
    count = host_count(row) if count is False else count
    return {"accelerator": _brief(row.get("accelerator_variant")),
            "nodes": f"{row['nodes']} × {row['accelerators_per_node']}" if row.get("nodes") else None,
            "host": (f"{count}× {host}" if count and host else host),
            "framework": _brief(row.get("framework")),
            "os": _brief(row.get("operating_system")),
            "weights": _brief(row.get("weight_data_types"))}


def differences_of(mine: dict[str, str | None], theirs: dict[str, str | None]) -> tuple[Difference, ...]:
    """The aspects in which two :func:`setup` differ (one side unstated: only when the other states it)."""
    return tuple(Difference(a, mine[a], theirs[a]) for a in ASPECTS
                 if (mine[a] or theirs[a]) and not _same(mine[a], theirs[a]))


# ---- context where there is no reference -------------------------------------------------------

def generations(rules: Rules, vendor: str) -> tuple[str, ...]:
    return tuple(name for name, v in rules.registry_vendors().items() if v == vendor)


def context_index(refs: list[dict]) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for r in refs:
        if not r.get("capped"):
            out.setdefault((r["round"], r["model"], r["scenario"], r["division"], r["units"]), []).append(r)
    return out


def per_accelerator(row: dict) -> float:
    return float(row["value"]) / int(row["total_accelerators"])


def nearest(rules: Rules, row: dict, index: dict[tuple, list[dict]], vendor: str) -> tuple[dict | None, str]:
    """The reference submitter's nearest result to a partner row without a
    same-round reference (the same accelerator at another node count, else the
    previous generation), and the rule; (None, why none). Verified beside verified only."""
    if is_latency(row["units"]):
        return None, "a latency is not a per-accelerator figure: no context comparison"
    pool = [r for r in index.get((row["round"], row["model"], row["scenario"], row["division"], row["units"]), [])
            if row["status"] != VERIFIED or r["status"] == VERIFIED]
    same = [r for r in pool if r["accelerator"] == row["accelerator"]]
    if same:
        # the nearest scale first, then the best per accelerator, then the system id
        same.sort(key=lambda r: (abs(int(r["total_accelerators"]) - int(row["total_accelerators"])),
                                 -per_accelerator(r), r["system"]))
        return same[0], CONTEXT_SAME_ACCELERATOR
    if "+" in str(row["accelerator"]):
        return None, (f"a cluster of several accelerator types ({row['accelerator']}): the reference "
                      f"submitter has no result on the same mix for {row['model']} {row['scenario']} in {row['round']}")
    parts = generations(rules, vendor)
    if row["accelerator"] in parts:
        for older in reversed(parts[:parts.index(row["accelerator"])]):
            found = sorted((r for r in pool if r["accelerator"] == older),
                           key=lambda r: (-per_accelerator(r), r["system"]))
            if found:
                return found[0], f"{CONTEXT_PREVIOUS_GENERATION} ({older})"
    return None, (f"no result of the reference submitter for {row['model']} {row['scenario']} in "
                  f"{row['round']} on {row['accelerator']} or an earlier generation")
