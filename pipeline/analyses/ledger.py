"""The claims ledger (``claims.yaml``): reading it and checking its format.
Every problem is a finding naming the claim id and its line; a claim with a
problem is kept as an invalid entry, never dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from pipeline.core import limits, textcheck
from pipeline.core.rules import Rules
from pipeline.core.findings import Finding, located
from pipeline.core.model import STATUSES, Source
from pipeline.readers.base import read_text

KINDS = ("ratio", "scaling", "reproducibility", "record")
LEDGER_KEYS = ("round", "tolerance_pct_points", "tolerance_ratio", "claims")
CLAIM_KEYS = ("id", "text", "source", "kind", "subject", "comparator", "claimed_pct",
              "claimed_ratio", "tolerance_pct_points", "tolerance_ratio")
INT_KEYS = ("nodes", "accelerators_per_node", "total_accelerators")
SELECTOR_KEYS = ("round", "submitter", "system", "accelerator", "nodes", "accelerators_per_node",
                 "total_accelerators", "model", "scenario", "units", "division", "availability",
                 "status", "result_id")


@dataclass
class Claim:
    id: str
    kind: str
    text: str
    subject: dict
    comparator: dict | None
    claimed: float
    measure: str  # pct | ratio
    tolerance: float
    line: int | None
    lines: dict = field(default_factory=dict)  # key -> line in the ledger


@dataclass
class Ledger:
    path: str
    round: str | None = None
    claims: list[Claim] = field(default_factory=list)
    invalid: list[tuple[str, int | None]] = field(default_factory=list)  # (id, line)
    findings: list[Finding] = field(default_factory=list)


def read_ledger(rules: Rules, path: str | Path) -> Ledger:
    path = Path(path)
    ledger = Ledger(path.as_posix())

    def bad(code, where, expected, found, message):
        ledger.findings.append(located(code, where, expected, _cut(found), message))

    text, found = read_text(path, ledger.path, limits.file_bytes(rules), checks=textcheck.DOCUMENT)
    # a ledger that is not UTF-8 has always been reported as file-unreadable (a released code)
    ledger.findings.extend(replace(f, code="file-unreadable") if f.code == "not-utf8" else f for f in found)
    if text is None:
        return ledger
    guard = textcheck.yaml_guard(text, Source(ledger.path), "ledger-invalid")
    if guard:   # too deep, or an alias bomb: never loaded
        ledger.findings.extend(guard)
        return ledger
    try:
        node, data = textcheck.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        bad("ledger-invalid", Source(ledger.path, mark.line + 1 if mark else None), "valid YAML",
            getattr(exc, "problem", None) or str(exc), "the claims ledger is not valid YAML")
        return ledger
    lines = _lines(node)
    for path, line in textcheck.duplicate_paths(node):
        bad("ledger-invalid", Source(ledger.path, line, key=_claim_key(data, path)), "each key once",
            f"{path[-1]!r} twice", "duplicate key (YAML keeps only the last)")
    if not isinstance(data, dict):
        bad("ledger-invalid", Source(ledger.path, 1), "a mapping with round, tolerance_pct_points and claims",
            type(data).__name__, "the ledger is not a mapping")
        return ledger
    for key in data:
        if key not in LEDGER_KEYS:
            bad("unknown-key", Source(ledger.path, lines.get((key,)), key=str(key)), f"one of {list(LEDGER_KEYS)}",
                key, "unknown top-level key of the claims ledger")
    if data.get("round") is not None and not isinstance(data["round"], str):
        bad("ledger-invalid", Source(ledger.path, lines.get(("round",)), key="round"), "a round such as v6.0 (a string)",
            repr(data["round"]), "bad default round")
    ledger.round = None if data.get("round") is None else str(data["round"])
    defaults = rules.claim_defaults()
    for key in defaults:
        if key in data:
            if _number(data[key], minimum=0) is None:
                bad("ledger-invalid", Source(ledger.path, lines.get((key,)), key=key), "a number >= 0",
                    data[key], f"bad default {key}")
            else:
                defaults[key] = float(data[key])
    claims = data.get("claims")
    if not isinstance(claims, list) or not claims:
        bad("ledger-invalid", Source(ledger.path, lines.get(("claims",), 1), key="claims"), "a non-empty list of claims",
            type(claims).__name__ if claims is not None else "nothing", "the ledger lists no claims")
        return ledger
    seen: set[str] = set()
    for i, item in enumerate(claims):
        claim_lines = {k[2:]: v for k, v in lines.items() if k[:2] == ("claims", i)}
        claim, found = _read_claim(item, i, claim_lines, defaults, ledger.path)
        cid = claim.id if claim else _claim_id(item, i)
        if cid in seen:
            found.append(located("ledger-invalid", Source(ledger.path, claim_lines.get(()), key=f"claims.{cid}"),
                                 "unique claim ids", cid, f"claim id {cid!r} appears twice"))
        seen.add(cid)
        ledger.findings.extend(found)
        if claim is not None and not found:
            ledger.claims.append(claim)
        else:
            ledger.invalid.append((cid, claim_lines.get(())))
    return ledger


def _cut(value: object, limit: int = 200) -> str:
    """A found value as short text (a ledger may put a whole structure where a scalar belongs)."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _lines(root) -> dict[tuple, int]:
    """{key path: line} of the composed tree; a key stated twice has its later line (YAML keeps that value)."""
    lines = {(): root.start_mark.line + 1} if root is not None else {}
    lines.update((path, marked.start_mark.line + 1) for marked, _, _, path in textcheck.entries(root))
    return lines


def _claim_id(item, index: int) -> str:
    if isinstance(item, dict) and isinstance(item.get("id"), (str, int)) and str(item["id"]).strip():
        return str(item["id"]).strip()
    return f"#{index + 1}"


def _claim_key(data, path: tuple) -> str | None:
    """A duplicate key's claim (PATH: the key's), as the key ``claims.<id>``."""
    if len(path) >= 3 and path[0] == "claims" and isinstance(data, dict):
        items = data.get("claims") or []
        if isinstance(items, list) and path[1] < len(items):
            return f"claims.{_claim_id(items[path[1]], path[1])}"
    return None


def _number(value, minimum: float | None = None, strict: bool = False) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    if minimum is not None and (value < minimum or (strict and value <= minimum)):
        return None
    return float(value)


def _read_claim(item, index: int, lines: dict, defaults: dict, file: str):
    cid = _claim_id(item, index)
    found: list[Finding] = []

    def bad(code, key, expected, got, message):
        line = lines.get((key,) if key else (), lines.get(()))
        where = Source(file, line, key=f"claims.{cid}" + (f".{key}" if key else ""))
        found.append(located(code, where, expected, _cut(got), f"claim {cid}: {message}"))

    if not isinstance(item, dict):
        bad("ledger-invalid", None, "a mapping", type(item).__name__, "a claim is not a mapping")
        return None, found
    if cid.startswith("#"):
        bad("ledger-invalid", "id", "a non-empty id", item.get("id"), "the claim has no id")
    for key in item:
        if key not in CLAIM_KEYS:
            bad("unknown-key", key, f"one of {list(CLAIM_KEYS)}", key, f"unknown key {key!r}")
    kind = item.get("kind")
    if kind not in KINDS:
        bad("ledger-invalid", "kind", f"one of {list(KINDS)}", kind, "bad or missing kind")
    subject = _selector(item.get("subject"), "subject", lines, bad, required=True)
    comparator = None
    if kind == "ratio":
        comparator = _selector(item.get("comparator"), "comparator", lines, bad, required=True)
    elif "comparator" in item:
        bad("ledger-invalid", "comparator", "no comparator", "a comparator",
            f"a {kind} claim takes no comparator")
    given = [k for k in ("claimed_pct", "claimed_ratio") if k in item]
    measure, claimed, tolerance = "pct", None, None
    if len(given) != 1:
        bad("ledger-invalid", None, "exactly one of claimed_pct, claimed_ratio", given or "neither",
            "the claim states no single claimed figure")
    elif given[0] == "claimed_ratio" and kind != "ratio":
        bad("ledger-invalid", "claimed_ratio", "claimed_pct", "claimed_ratio",
            f"a {kind} claim is stated in percent (claimed_pct)")
    else:
        measure = "pct" if given[0] == "claimed_pct" else "ratio"
        claimed = _number(item[given[0]], minimum=0, strict=True)
        if claimed is None:
            bad("ledger-invalid", given[0], "a number > 0", item[given[0]], f"bad {given[0]}")
        tol_key = "tolerance_pct_points" if measure == "pct" else "tolerance_ratio"
        other = "tolerance_ratio" if measure == "pct" else "tolerance_pct_points"
        if other in item:
            bad("ledger-invalid", other, tol_key, other, f"{other} does not fit {given[0]}")
        if kind in ("reproducibility", "record") and tol_key in item:
            bad("ledger-invalid", tol_key, "no tolerance", tol_key,
                "a reproducibility claim's band is its claimed_pct")
        tolerance = defaults[tol_key]
        if tol_key in item:
            tolerance = _number(item[tol_key], minimum=0)
            if tolerance is None:
                bad("ledger-invalid", tol_key, "a number >= 0", item[tol_key], f"bad {tol_key}")
    if found:
        return None, found
    return Claim(cid, kind, str(item.get("text") or ""), subject, comparator, claimed, measure,
                 tolerance, lines.get(()), {k[0]: v for k, v in lines.items() if len(k) == 1}), found


def _selector(value, name: str, lines: dict, bad, required: bool) -> dict | None:
    if value is None and not required:
        return None
    if not isinstance(value, dict) or not value:
        bad("ledger-invalid", name, "a mapping of column: value", value, f"bad or missing {name}")
        return None
    out = {}
    for key, v in value.items():
        if key not in SELECTOR_KEYS:
            bad("unknown-key", name, f"one of {list(SELECTOR_KEYS)}", f"{name}.{key}",
                f"unknown selector key {key!r} in {name}")
        elif key in INT_KEYS:
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                bad("ledger-invalid", name, "a whole number >= 1", f"{name}.{key}: {v!r}", f"bad {name}.{key}")
            else:
                out[key] = v
        elif not isinstance(v, str) or not v.strip():
            bad("ledger-invalid", name, "a string", f"{name}.{key}: {v!r}", f"bad {name}.{key} (quote it)")
        elif key == "status" and v not in STATUSES:
            bad("ledger-invalid", name, f"one of {list(STATUSES)}", v, f"bad {name}.status")
        else:
            out[key] = v.strip()
    return out
