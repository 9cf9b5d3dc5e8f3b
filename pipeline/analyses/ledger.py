"""The claims ledger (``claims.yaml``): reading it and checking its format,
which :data:`SCHEMA` (JSON Schema, beside this module: the format this version
of the tool reads) states. Every problem is a finding naming the claim id and
its line; a claim with a problem is kept as an invalid entry, never dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from pipeline.core import limits, textcheck
from pipeline.core.rules import Rules, validator
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.readers.base import read_text

SCHEMA = json.loads(Path(__file__).with_name("ledger.schema.json").read_text(encoding="utf-8"))
LEDGER = validator(SCHEMA)
CLAIM = validator({**SCHEMA["$defs"]["claim"], "$defs": SCHEMA["$defs"]})   # one claim, checked on its own
CLAIM_KEYS = tuple(SCHEMA["$defs"]["claim"]["properties"])
SELECTOR_KEYS = tuple(SCHEMA["$defs"]["selector"]["properties"])
INT_KEYS = tuple(k for k, v in SCHEMA["$defs"]["selector"]["properties"].items() if v == {"$ref": "#/$defs/count"})
TOLERANCES = ("tolerance_pct_points", "tolerance_ratio")


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
        ledger.findings.append(located(
            "ledger-invalid", Source(ledger.path, mark.line + 1 if mark else None), "valid YAML",
            getattr(exc, "problem", None) or str(exc), "the claims ledger is not valid YAML"))
        return ledger
    lines = _lines(node)
    for path, line in textcheck.duplicate_paths(node):
        ledger.findings.append(located("ledger-invalid", Source(ledger.path, line, key=_claim_key(data, path)),
                                       "each key once", f"{path[-1]!r} twice", "duplicate key (YAML keeps only the last)"))
    wrong = _problems(LEDGER.iter_errors(data), ledger.path, lines, (), "", "")
    ledger.findings.extend(wrong)
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list) or not data["claims"]:
        return ledger
    ledger.round = None if data.get("round") is None else str(data["round"])
    defaults = {**rules.claim_defaults(), **{k: float(data[k]) for k in TOLERANCES
                                             if k in data and not any(f.where.key == k for f in wrong)}}
    seen: set[str] = set()
    for i, item in enumerate(data["claims"]):
        cid = _claim_id(item, i)
        found = _problems(CLAIM.iter_errors(item), ledger.path, lines, ("claims", i), f"claims.{cid}.",
                          f"claim {cid}: ")
        if cid in seen:
            found.append(located("ledger-invalid", Source(ledger.path, lines.get(("claims", i)), key=f"claims.{cid}"),
                                 "unique claim ids", cid, f"claim id {cid!r} appears twice"))
        seen.add(cid)
        ledger.findings.extend(found)
        if found:
            ledger.invalid.append((cid, lines.get(("claims", i))))
        else:
            claim_lines = {k[2:]: v for k, v in lines.items() if k[:2] == ("claims", i)}
            ledger.claims.append(_claim(item, cid, claim_lines, defaults))
    return ledger


def _problems(errors, file: str, lines: dict, at: tuple, key_prefix: str, about: str) -> list[Finding]:
    """A finding per schema error, at its key and line (AT: the path of the checked document in
    the ledger); an unknown key (``additionalProperties``) is one finding per key, coded ``unknown-key``."""
    out = []
    for error in errors:
        path = tuple(error.absolute_path)
        if error.validator == "additionalProperties":
            known = list(error.schema.get("properties", {}))
            places = [(path + (key,), "unknown-key", f"one of {known}", key, f"unknown key {key!r}")
                      for key in error.instance if key not in known]
        elif error.validator == "required":
            missing = next(k for k in error.validator_value if k not in error.instance)
            expected = error.schema.get("description") if "properties" not in error.schema else f"the key {missing}"
            places = [(path + (missing,), "ledger-invalid", expected, "absent", f"no {missing}")]
        else:
            found = ([k for one in error.validator_value for k in one.get("required", ()) if k in error.instance]
                     or "neither") if error.validator == "oneOf" else repr(error.instance)
            places = [(path, "ledger-invalid", error.schema.get("description") or
                       f"{error.validator} {error.validator_value!r}", found,
                       f"bad {'.'.join(map(str, path)) or ('claim' if at else 'ledger')}")]
        for where, code, expected, found, message in places:
            line = next((lines[at + where[:n]] for n in range(len(where), -1, -1) if at + where[:n] in lines), None)
            key = key_prefix + ".".join(map(str, where)) if where else key_prefix.rstrip(".") or None
            out.append(located(code, Source(file, line, key=key), expected, found, about + message))
    return out


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


def _claim(item: dict, cid: str, lines: dict, defaults: dict) -> Claim:
    """The claim of a ledger entry the schema accepts."""
    measure = "pct" if "claimed_pct" in item else "ratio"
    tolerance = TOLERANCES[0] if measure == "pct" else TOLERANCES[1]
    return Claim(cid, item["kind"], str(item.get("text") or ""), _selector(item["subject"]),
                 _selector(item.get("comparator")), float(item[f"claimed_{measure}"]), measure,
                 float(item.get(tolerance, defaults[tolerance])), lines.get(()),
                 {k[0]: v for k, v in lines.items() if len(k) == 1})


def _selector(value: dict | None) -> dict | None:
    return None if value is None else {k: v.strip() if isinstance(v, str) else v for k, v in value.items()}
