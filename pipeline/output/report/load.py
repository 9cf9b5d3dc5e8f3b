"""Reading the report's inputs: the pipeline's tables and the JSON documents
of ``scaling``, ``claims`` and ``audit`` (validation.json). A missing or
unreadable optional input is a note and a sentence in its section, never a
crash.

Each agreement row is marked :data:`PARTNER` when it is a partner result: a
result on the reference vendor's accelerators (``compare.reference_vendor``,
the vendors of ``schemas/accelerators.yaml``). A submitter with none in a
round is not that round's partner; its rows are counted apart."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from pipeline.core.model import DEFAULT_REFERENCE_VENDOR, LABEL_UNVERIFIED, VERIFIED
from pipeline.core.rules import Rules, round_order
from pipeline.ingest import table as table_mod

NO_ROUND = "(round not stated)"
PARTNER = "partner_result"   # the agreement column of a result on the reference vendor's parts (compare's)


@dataclass
class Inputs:
    results: Path
    agreement: Path
    rejected: Path
    versions: Path
    scaling: Path | None = None
    claims: Path | None = None
    data_docs: Path | None = None
    validation: Path | None = None
    reference_vendor: str = DEFAULT_REFERENCE_VENDOR
    superseded: Path | None = None


@dataclass
class Data:
    results: pd.DataFrame
    agreement: pd.DataFrame
    rejected: pd.DataFrame
    versions: pd.DataFrame
    scaling: list[dict] | None
    claims: list[dict] | None
    validation: dict | None
    reference_vendor: str = DEFAULT_REFERENCE_VENDOR
    why: dict[str, str] = field(default_factory=dict)   # input name -> why it is absent
    notes: list[str] = field(default_factory=list)      # warnings for the CLI
    superseded: pd.DataFrame | None = None              # the superseded versions' judged results

    def rounds(self) -> list[str]:
        """Every round named by any input, newest first."""
        found = set(self.results["round"]) | set(self.agreement["round"]) | set(self.versions["round"])
        found |= {round_of({"source": s}) for s in self.rejected.get("source", [])}
        found |= {round_of(r) for r in self.scaling or []}
        found |= {claim_round(c, self) for c in self.claims or []}
        return sorted((r for r in found if isinstance(r, str) and r and r != ACROSS_ROUNDS), key=round_order,
                      reverse=True)

    @cached_property
    def first_rounds(self) -> pd.Series:
        """(submitter, system, model, scenario) -> the round of its first agreement
        row; built once, asked a hundred times."""
        return self.agreement.drop_duplicates(list(RESULT_KEY)).set_index(list(RESULT_KEY))["round"]


def read_csv(path: Path) -> pd.DataFrame:
    return table_mod.read_frame(path, dtype=str, keep_default_na=False, na_values=[""])


def _unusable(data: Data, option: str, path: Path, note: str, why: str) -> None:
    """An input the report cannot use: a warning for the CLI, a sentence for its section."""
    data.notes.append(f"--{option} {path}: {note}")
    data.why[option] = f"The {option} input {path.as_posix()} {why}."


def _read_json(path: Path | None, option: str, data: Data) -> dict | None:
    if path is None:
        data.why[option] = f"No {option} input was given (option --{option})."
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return _unusable(data, option, path, "no such file", "is missing")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return _unusable(data, option, path, str(exc), f"could not be read ({exc})")
    if not isinstance(doc, dict):
        return _unusable(data, option, path, "not a JSON object", "is not a JSON object")
    return doc


def _rows(doc: dict | None, option: str, path: Path | None, data: Data) -> list[dict] | None:
    if doc is None:
        return None
    rows = doc.get("rows")
    if not isinstance(rows, list):
        return _unusable(data, option, path, "no rows list", "holds no rows list")
    return [r for r in rows if isinstance(r, dict)]


def load(rules: Rules, inputs: Inputs) -> Data:
    """Every input (the validation last)."""
    agreement = read_csv(inputs.agreement)
    # as compare judged it (a CSV holds the text True/False)
    agreement[PARTNER] = agreement[PARTNER].astype(str).eq("True") if PARTNER in agreement else False
    data = Data(table_mod.read(inputs.results), agreement, read_csv(inputs.rejected), read_csv(inputs.versions),
                None, None, None, inputs.reference_vendor)
    data.scaling = _rows(_read_json(inputs.scaling, "scaling", data), "scaling", inputs.scaling, data)
    data.claims = _rows(_read_json(inputs.claims, "claims", data), "claims", inputs.claims, data)
    data.validation = _read_json(inputs.validation, "validation", data)
    if inputs.superseded is None:
        data.why["superseded"] = "No superseded input was given (option --superseded)."
    else:
        data.superseded = read_csv(inputs.superseded)
    return data


# ---- which round a row belongs to --------------------------------------------------------

def round_of(row: dict) -> str:
    """A row's round: its ``round``, its subject's, or the first folder of its source."""
    for value in (row.get("round"), (row.get("subject") or {}).get("round")
                  if isinstance(row.get("subject"), dict) else None):
        if value:
            return str(value)
    head = str(row.get("source") or "").split("/", 1)[0]
    return head if head.startswith("v") and head[1:2].isdigit() else NO_ROUND


ACROSS_ROUNDS = "every round"   # a record claim's: judged on every round, shown with the record


def claim_round(claim: dict, data: Data) -> str:
    """The round of the results a claim used: its subject's, else its scope's (the ledger's
    round, or the one round of the results it matches), else that of the partner results
    outside its band, in the agreement table (its notes are for people: never read back)."""
    found = round_of(claim)
    if found != NO_ROUND:
        return found
    if claim.get("kind") == "record":   # every round: shown with the partners' record
        return ACROSS_ROUNDS
    scope = claim.get("scope")
    if isinstance(scope, dict) and scope.get("round"):
        return str(scope["round"])
    keys = [(o.get("submitter"), o.get("system"), o.get("model"), o.get("scenario"))
            for o in claim.get("outside") or [] if isinstance(o, dict)]
    if keys and len(data.agreement):
        first = data.first_rounds
        rounds = {str(first.loc[k]) for k in keys if k in first.index}
        if len(rounds) == 1:
            return rounds.pop()
    return NO_ROUND


RESULT_KEY = ("submitter", "system", "model", "scenario")


def is_unverified(row: dict) -> bool:
    """Whether a row (agreement, scaling, claim) rests on an unverified result."""
    if row.get("label") not in (None, ""):
        return str(row.get("label")) == LABEL_UNVERIFIED
    if row.get("verified") is not None:
        return not bool(row.get("verified"))
    status = row.get("status")
    return status is not None and str(status) != VERIFIED
