"""Claims: a ledger of published claims, recomputed from the results table.

The ledger (YAML, read with the safe loader) lists claims of three kinds:
``ratio`` (the subject against a comparator, in % or as a ratio),
``scaling`` (a multi-node result's efficiency, from :mod:`pipeline.analyses.scaling`)
and ``reproducibility`` (partner results within ±claimed_pct of the
reference, from :func:`pipeline.analyses.compare.compare`). Its format is documented
in the README and checked here; every problem is a finding naming the claim
id and, where the YAML tells it, the line.

A selector matches on the canonical columns it gives. A subject must match
exactly one result (reproducibility: one or more partner results). The
eligible comparators of a ratio claim are the results the comparator selector
matches, with these defaults: the ledger's round, the subject's model,
scenario and units, closed division, one node, verified only (any status
when the subject is post-deadline); power-capped systems never. Among them:

- the comparator that best matches the claim (computed closest to claimed,
  ties to the stronger) decides ``holds``;
- the strongest (highest rate, lowest latency) gives ``computed_vs_best``;
- ``cherry_picked``: the claim holds, but not against the strongest.

Ratios follow the metric's direction (:func:`pipeline.core.formulas.ratio`), so
above 100 % always means the subject is faster.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from pipeline.core import rules, textcheck
from pipeline.analyses import scaling
from pipeline.analyses.compare import compare, power_capped_name
from pipeline.core.findings import Finding, ReportShape, located
from pipeline.core.formulas import ratio, within
from pipeline.core.model import (AGREE, AMBIGUOUS, CHERRY_PICKED, COMPARISON_DISCLAIMER, DEFAULT_REFERENCE_SUBMITTER,
                                 DEFAULT_REFERENCE_VENDOR, DEVIATES, DOES_NOT_HOLD, HOLDS, INVALID,
                                 LABEL_UNVERIFIED, LABEL_VERIFIED, NO_REFERENCE, STATUSES, UNMATCHED,
                                 UNVERIFIED_FOOTNOTE, VERIFIED, Row, Source, typed_rows)
from pipeline.readers.base import read_text

KINDS = ("ratio", "scaling", "reproducibility")
LEDGER_KEYS = ("round", "tolerance_pct_points", "tolerance_ratio", "claims")
CLAIM_KEYS = ("id", "text", "source", "kind", "subject", "comparator", "claimed_pct",
              "claimed_ratio", "tolerance_pct_points", "tolerance_ratio")
INT_KEYS = ("nodes", "accelerators_per_node", "total_accelerators")
SELECTOR_KEYS = ("round", "submitter", "system", "accelerator", "nodes", "accelerators_per_node",
                 "total_accelerators", "model", "scenario", "units", "division", "availability",
                 "status", "result_id")
# differences the MLCommons messaging guidelines say a comparison must state
STATED = (("round", "round (version)"), ("division", "division"),
          ("availability", "category (availability)"), ("status", "verified/unverified status"),
          ("scenario", "scenario"), ("total_accelerators", "accelerator count"), ("model", "model"))


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


@dataclass
class ClaimsReport(ReportShape):
    rows: list[Row] = field(default_factory=list)   # ClaimRow (see check_claims())
    findings: list[Finding] = field(default_factory=list)

    @property
    def summary(self) -> dict:
        verdicts: dict[str, int] = {}
        for r in self.rows:
            verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
        return {"claims": len(self.rows), **dict(sorted(verdicts.items())),
                "unverified": sum(r["label"] == LABEL_UNVERIFIED for r in self.rows)}


# ---- reading the ledger ---------------------------------------------------------------

def read_ledger(path: str | Path) -> Ledger:
    path = Path(path)
    ledger = Ledger(path.as_posix())

    def bad(code, where, expected, found, message):
        ledger.findings.append(located(code, where, expected, _cut(found), message))

    text, found = read_text(path, ledger.path, checks=textcheck.DOCUMENT)
    # a ledger that is not UTF-8 has always been reported as file-unreadable (a released code)
    ledger.findings.extend(replace(f, code="file-unreadable") if f.code == "not-utf8" else f for f in found)
    if text is None:
        return ledger
    guard = textcheck.yaml_guard(text, Source(ledger.path), "ledger-invalid")
    if guard:   # too deep, or an alias bomb: never loaded
        ledger.findings.extend(guard)
        return ledger
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)
        lines, duplicates = _lines(yaml.compose(text, Loader=loader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        bad("ledger-invalid", Source(ledger.path, mark.line + 1 if mark else None), "valid YAML",
            getattr(exc, "problem", None) or str(exc), "the claims ledger is not valid YAML")
        return ledger
    for where, key, line in duplicates:
        bad("ledger-invalid", Source(ledger.path, line, key=_claim_key(data, where)), "each key once",
            f"{key!r} twice", "duplicate key (YAML keeps only the last)")
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


def _lines(root) -> tuple[dict[tuple, int], list[tuple]]:
    """{key path: line} from the composed node tree, and duplicate keys."""
    lines: dict[tuple, int] = {}
    duplicates: list[tuple] = []

    visited: set[int] = set()

    def walk(node, path):
        lines.setdefault(path, node.start_mark.line + 1)
        if id(node) in visited:  # an alias: walked once (no exponential walk over anchors)
            return
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, value in node.value:
                key = getattr(key_node, "value", None)
                if key in seen:
                    duplicates.append((path, key, key_node.start_mark.line + 1))
                seen.add(key)
                lines[path + (key,)] = key_node.start_mark.line + 1
                walk(value, path + (key,))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, path + (i,))

    if root is not None:
        walk(root, ())
    return lines, duplicates


def _claim_id(item, index: int) -> str:
    if isinstance(item, dict) and isinstance(item.get("id"), (str, int)) and str(item["id"]).strip():
        return str(item["id"]).strip()
    return f"#{index + 1}"


def _claim_key(data, path: tuple) -> str | None:
    """A duplicate key's claim, as the key ``claims.<id>``."""
    if len(path) >= 2 and path[0] == "claims" and isinstance(data, dict):
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
        if kind == "reproducibility" and tol_key in item:
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


# ---- recomputing claims ---------------------------------------------------------------

def match(results: pd.DataFrame, selector: dict) -> pd.DataFrame:
    """The rows of ``results`` the selector matches (each key equal to its value)."""
    return Results(results).match(selector)


class Results:
    """The results table as the claims read it, built once for a whole ledger:
    each row as a dict (``to_dict`` once, not once per selector) and each
    selector test (``column == value``) as a boolean array, computed once per
    column and value. :meth:`rows` gives what ``match(...).to_dict("records")``
    gives (a fresh dict per row), :meth:`match` the frame itself."""

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame
        self._records: list[dict] | None = None
        self._tests: dict[tuple, np.ndarray] = {}
        self._agreements: dict[tuple, object] = {}

    def agreement(self, tolerance_pct: float, reference_submitter: str, reference_vendor: str):
        """compare's report of the whole table, once per tolerance and reference:
        a partner row's verdict depends on the row, the reference rows and the
        tolerance only, so the claims that share a band share it."""
        key = (tolerance_pct, reference_submitter, reference_vendor)
        if key not in self._agreements:
            self._agreements[key] = compare(self.frame, *key)
        return self._agreements[key]

    def mask(self, selector: dict) -> np.ndarray:
        mask = np.ones(len(self.frame), dtype=bool)
        for key, value in selector.items():
            mask &= self._test(key, value)
        return mask

    def _test(self, key: str, value) -> np.ndarray:
        if (key, value) not in self._tests:
            column = self.frame[key]
            hit = (column == value) if key in INT_KEYS else (column.astype("str") == str(value))
            self._tests[key, value] = hit.to_numpy(dtype=bool)
        return self._tests[key, value]

    def match(self, selector: dict) -> pd.DataFrame:
        return self.frame[self.mask(selector)]

    def rows(self, selector: dict) -> list[dict]:
        if self._records is None:
            self._records = self.frame.to_dict("records")
        return [dict(self._records[i]) for i in np.flatnonzero(self.mask(selector))]


def _describe(row: dict) -> str:
    return (f"{row['round']} {row['submitter']} {row['system']} {row['model']} {row['scenario']} "
            f"{row['value']:g} {row['units']} ({row['status']}, {row['source']})")


def _brief(row: dict | None) -> dict | None:
    if row is None:
        return None
    return {k: row[k] for k in ("round", "submitter", "system", "value", "units", "status", "source")}


def check_claims(ledger: Ledger, results: pd.DataFrame, reference_submitter: str = DEFAULT_REFERENCE_SUBMITTER,
                 reference_vendor: str = DEFAULT_REFERENCE_VENDOR) -> ClaimsReport:
    """Every claim of the ledger against RESULTS; the reference submitter and
    vendor (``compare.*`` of params.yaml, read by the caller) decide which
    results are partner results and what they are compared with."""
    report = ClaimsReport(findings=list(ledger.findings))
    for cid, line in ledger.invalid:
        row = _row(cid, None, INVALID, "the claim's ledger entry is invalid (see findings)")
        report.rows.append({**row, "line": line})
    index = scaling.single_node_index(results)
    table = Results(results)
    for claim in ledger.claims:
        if claim.kind == "reproducibility":
            row, found = _reproducibility(claim, table, ledger, reference_submitter, reference_vendor)
        else:
            check = {"ratio": _ratio, "scaling": _scaling}[claim.kind]
            row, found = check(claim, table, ledger, reference_submitter, index)
        report.rows.append(row)
        report.findings.extend(found)
    report.rows = typed_rows("ClaimRow", sorted(report.rows, key=lambda r: r["line"] or 0))
    return report


def _row(cid: str, claim: Claim | None, verdict: str, reason: str = "") -> dict:
    return {"id": cid, "kind": claim.kind if claim else None, "text": claim.text if claim else "",
            "line": claim.line if claim else None, "measure": claim.measure if claim else None,
            "claimed": claim.claimed if claim else None, "tolerance": claim.tolerance if claim else None,
            "computed": None, "holds": None, "verdict": verdict, "reason": reason,
            "subject": None, "comparator": None, "best_comparator": None, "computed_vs_best": None,
            "range_min": None, "range_max": None, "eligible_comparators": 0, "cherry_picked": None,
            "verified": None, "label": "", "footnote": "", "disclaimer": "",
            "notes": []}


def _at(ledger: Ledger, claim: Claim, key: str) -> Source:
    """Where a claim's KEY is in the ledger."""
    return Source(ledger.path, claim.lines.get(key) or claim.line, key=f"claims.{claim.id}.{key}")


def _subject(claim: Claim, results: Results, ledger: Ledger):
    selector = {"round": ledger.round, **claim.subject} if ledger.round else dict(claim.subject)
    rows = results.rows(selector)
    if len(rows) == 1:
        return rows[0], None, None
    verdict = UNMATCHED if not rows else AMBIGUOUS
    code = "selector-unmatched" if not rows else "selector-ambiguous"
    found = located(code, _at(ledger, claim, "subject"), "exactly one result",
                    "; ".join(_describe(r) for r in rows[:10]) or "no result",
                    f"claim {claim.id}: the subject {selector} matches {len(rows)} results")
    row = _row(claim.id, claim, verdict, found.message)
    row["candidates"] = [_describe(r) for r in rows]
    return None, row, found


def _label(row: dict, used: list[dict]) -> dict:
    statuses = {u["status"] for u in used}
    verified = statuses == {VERIFIED}
    row.update(verified=verified, label=LABEL_VERIFIED if verified else LABEL_UNVERIFIED,
               footnote="" if verified else UNVERIFIED_FOOTNOTE,
               disclaimer=COMPARISON_DISCLAIMER if len(statuses) > 1 else "")
    return row


def _differences(subject: dict, other: dict, what: str) -> list[str]:
    notes = []
    for key, name in STATED:
        if str(subject[key]) != str(other[key]):
            notes.append(f"{name} differs from {what}: {subject[key]} against {other[key]}")
    return notes


def eligible_comparators(claim: Claim, subject: dict, results: Results, default_round) -> tuple:
    """(eligible rows, effective selector) of a ratio claim: the comparator
    selector over the defaults (round, the subject's model, scenario and units,
    closed, one node), verified only unless the subject is post-deadline or
    the selector names a status, never power-capped, never the subject."""
    selector = {"round": default_round or subject["round"], "model": subject["model"],
                "scenario": subject["scenario"], "units": subject["units"], "division": "closed", "nodes": 1}
    selector.update(claim.comparator)
    pool = [r for r in results.rows(selector)
            if not (r["source"] == subject["source"] and r["system"] == subject["system"])]
    if "status" not in claim.comparator and subject["status"] == VERIFIED:
        pool = [r for r in pool if r["status"] == VERIFIED]
    return [r for r in pool if not (power_capped_name(r["system"]) or power_capped_name(r["system_name"]))], selector


def _ratio(claim, results, ledger, reference_submitter, index):
    subject, row, found = _subject(claim, results, ledger)
    if subject is None:
        return row, [found]
    eligible, selector = eligible_comparators(claim, subject, results, ledger.round)
    if not eligible:
        late = " (post-deadline results are not eligible against a verified subject)"
        f = located("selector-unmatched", _at(ledger, claim, "comparator"),
                    "at least one eligible comparator", "none",
                    f"claim {claim.id}: no eligible result matches the comparator {selector}"
                    + (late if subject["status"] == VERIFIED else ""))
        row = _row(claim.id, claim, UNMATCHED, f.message)
        row["subject"] = _brief(subject)
        return _label(row, [subject]), [f]
    latency = rules.is_latency(str(subject["units"]))
    scale = 100.0 if claim.measure == "pct" else 1.0

    def computed(c):
        return ratio(subject["value"], c["value"], lower_is_better=latency) * scale

    strongest = sorted(eligible, key=lambda c: ((1 if latency else -1) * c["value"], str(c["system"])))
    best = strongest[0]
    rank = {id(c): i for i, c in enumerate(strongest)}
    chosen = min(eligible, key=lambda c: (abs(computed(c) - claim.claimed), rank[id(c)]))
    values = [computed(c) for c in eligible]
    holds = within(computed(chosen) - claim.claimed, claim.tolerance)
    holds_best = within(computed(best) - claim.claimed, claim.tolerance)
    cherry = holds and not holds_best
    verdict = CHERRY_PICKED if cherry else (HOLDS if holds else DOES_NOT_HOLD)
    row = _row(claim.id, claim, verdict)
    row.update(computed=round(computed(chosen), 6), holds=holds, subject=_brief(subject),
               comparator=_brief(chosen), best_comparator=_brief(best),
               computed_vs_best=round(computed(best), 6), range_min=round(min(values), 6),
               range_max=round(max(values), 6), eligible_comparators=len(eligible), cherry_picked=cherry)
    row["notes"] = _differences(subject, chosen, "the comparator")
    if latency:
        row["notes"].append(f"latency metric ({subject['units']}): ratio = comparator / subject, "
                            "above 100% means the subject is faster")
    if best is not chosen:
        row["notes"].append(f"the strongest eligible comparator is {best['submitter']} {best['system']} "
                            f"({best['value']:g}); against it the claim computes {computed(best):.6g}")
    _label(row, [subject, chosen, best])
    return row, _verdict_findings(row, claim, ledger)


def _verdict_findings(row: dict, claim: Claim, ledger: Ledger) -> list[Finding]:
    unit = "%" if claim.measure == "pct" else "x"
    expected = f"{claim.claimed:g}{unit} ± {claim.tolerance:g}"
    if row["verdict"] == DOES_NOT_HOLD:
        key = "claimed_pct" if claim.measure == "pct" else "claimed_ratio"
        return [located("claim-not-supported", _at(ledger, claim, key),
                        expected, f"{row['computed']:.6g}{unit}",
                        f"claim {claim.id}: the data does not support the claimed figure")]
    if row["verdict"] == CHERRY_PICKED:
        return [located("claim-cherry-picked", _at(ledger, claim, "comparator"),
                        f"{expected} against the strongest comparator", f"{row['computed_vs_best']:.6g}{unit}",
                        f"claim {claim.id}: holds only against a comparator that is not the strongest",
                        severity="warning")]
    return []


def _scaling(claim, results, ledger, reference_submitter, index):
    subject, row, found = _subject(claim, results, ledger)
    if subject is None:
        return row, [found]
    scaled = scaling.scale_row(subject, index, reference_submitter)
    refs = scaled["references"]
    if scaled["efficiency_pct"] is None:
        row = _row(claim.id, claim, scaled["verdict"], scaled["reason"])
        row.update(subject=_brief(subject), notes=[scaled["reason"]])
        if scaled["verdict"] == NO_REFERENCE:
            row["notes"] += [f"missing: {', '.join(scaled['missing'])}"]
        _label(row, [subject] + refs)
        return row, [located("claim-unverifiable", _at(ledger, claim, "subject"),
                             "a computable scaling efficiency", scaled["verdict"],
                             f"claim {claim.id}: {scaled['reason']}", severity="warning")]
    computed = scaled["efficiency_pct"]
    holds = within(computed - claim.claimed, claim.tolerance)
    row = _row(claim.id, claim, HOLDS if holds else DOES_NOT_HOLD)
    row.update(computed=computed, holds=holds, subject=_brief(subject), cherry_picked=False,
               comparator={"submitter": ",".join(dict.fromkeys(r["submitter"] for r in refs)),
                           "system": ",".join(dict.fromkeys(r["system"] for r in refs)),
                           "value": scaled["expected"], "references": refs},
               range_min=computed, range_max=computed, eligible_comparators=len(refs))
    row["notes"] = [f"efficiency = {subject['value']:g} / expected {scaled['expected']:g} "
                    f"(linear from {scaled['reference_rule']})"]
    for ref in refs:
        row["notes"] += [f"{n} ({ref['accelerator']} reference {ref['system']})"
                         for n in _differences(subject, {**subject, **ref, "total_accelerators": ref["accelerators"]},
                                               "the single-node reference")]
    _label(row, [subject] + refs)
    return row, _verdict_findings(row, claim, ledger)


def _compared(results: Results, mask: np.ndarray, claimed: float, reference_submitter: str,
              reference_vendor: str) -> list:
    """compare's rows of the partner rows ``mask`` selects (the reference
    submitter's rows are the references), with the claim's band as tolerance:
    the agreement table's rows are the partner rows, in the table's order."""
    partner = results.frame["submitter"].to_numpy(dtype=object) != reference_submitter
    positions = np.searchsorted(np.flatnonzero(partner), np.flatnonzero(mask & partner))
    return results.agreement(claimed, reference_submitter, reference_vendor).rows_at(positions)


def _reproducibility(claim, results, ledger, reference_submitter, reference_vendor):
    selector = {"round": ledger.round, **claim.subject} if ledger.round else dict(claim.subject)
    mask = results.mask(selector)
    partners = results.frame[mask]
    partners = partners[partners["submitter"] != reference_submitter]
    if partners.empty:
        f = located("selector-unmatched", _at(ledger, claim, "subject"),
                    f"at least one partner (not {reference_submitter}) result", "none",
                    f"claim {claim.id}: the subject {selector} matches no partner result")
        return _row(claim.id, claim, UNMATCHED, f.message), [f]
    rows = _compared(results, mask, claim.claimed, reference_submitter, reference_vendor)
    compared = [r for r in rows if r["verdict"] in (AGREE, DEVIATES)]
    outside = [{k: r[k] for k in ("submitter", "system", "model", "scenario", "value", "reference_system",
                                  "reference_value", "deviation_pct", "label")}
               for r in compared if r["verdict"] == DEVIATES]
    others = [f"{r['submitter']} {r['system']} {r['model']} {r['scenario']}: {r['verdict']} ({r['reason']})"
              for r in rows if r["verdict"] not in (AGREE, DEVIATES)]
    if not compared:
        row = _row(claim.id, claim, NO_REFERENCE, "no partner result could be compared")
        row["notes"] = others
        _label(row, [{"status": r["status"]} for r in rows])
        return row, [located("claim-unverifiable", _at(ledger, claim, "subject"),
                             "partner results with a reference", "none",
                             f"claim {claim.id}: no partner result could be compared", severity="warning")]
    devs = [r["deviation_pct"] for r in compared]
    holds = not outside
    row = _row(claim.id, claim, HOLDS if holds else DOES_NOT_HOLD)
    row.update(computed=round(max(abs(d) for d in devs), 6), holds=holds, cherry_picked=False,
               comparator={"submitter": reference_submitter, "system": None, "value": None},
               range_min=round(min(devs), 6), range_max=round(max(devs), 6),
               eligible_comparators=len(compared), compared=len(compared),
               within=len(compared) - len(outside),
               share_within_pct=round((len(compared) - len(outside)) / len(compared) * 100, 6),
               outside=outside, not_compared=len(others))
    row["measure"] = "max_abs_deviation_pct"
    row["notes"] = ([f"{row['within']} of {len(compared)} partner results within ±{claim.claimed:g}% "
                     f"of {reference_submitter}"]
                    + [f"outside: {o['submitter']} {o['system']} {o['model']} {o['scenario']} {o['value']:g} "
                       f"against {o['reference_value']:g} ({o['reference_system']}): {o['deviation_pct']:+.2f}%"
                       for o in outside]
                    + [f"not compared: {o}" for o in others])
    _label(row, [{"status": r["status"]} for r in compared])
    found = []
    if not holds:
        found.append(located("claim-not-supported", _at(ledger, claim, "claimed_pct"),
                             f"every partner result within ±{claim.claimed:g}%",
                             f"{len(outside)} outside (max |deviation| {row['computed']:.4g}%)",
                             f"claim {claim.id}: partner results outside the claimed band"))
    return row, found
