"""The model: facts every module shares, each written once, by the sections
below: the MLCommons labels and wording, the parameters' built-in defaults,
locations (:class:`Source`), JSON-safe values (:func:`plain`) and the typed row
of every report (:class:`Row`). Standard library only: the gate imports it and
must start fast.
"""

from __future__ import annotations

import functools
import keyword
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, make_dataclass, replace
from typing import ClassVar

from pipeline.core.vocabulary import (AgreementVerdict, ClaimVerdict, GateVerdict, Outcome, Severity,
                                      Status)

# ---- labels and the MLCommons wording ------------------------------------------------------

# the words themselves are pipeline.core.vocabulary's enumerations; these names are theirs
VERIFIED, POST_DEADLINE = STATUSES = tuple(Status)
AUTO = "auto"   # submit: verified when sealed by the round's deadline, post-deadline after it
LABEL_VERIFIED, LABEL_UNVERIFIED = VERIFIED.label, POST_DEADLINE.label
LABEL_INCLUDING_POST_DEADLINE = "including post-deadline (unverified)"   # a claim's figure with late results
# compare's verdicts (a no-reference is also a scaling row's and a claim's), a claim's, an input row's outcome
AGREE, DEVIATES, NO_REFERENCE, EXCLUDED = AGREEMENT_VERDICTS = tuple(AgreementVerdict)
HOLDS, DOES_NOT_HOLD, CHERRY_PICKED, _NO_REFERENCE, UNMATCHED, AMBIGUOUS, INVALID = CLAIM_VERDICTS = tuple(ClaimVerdict)
ACCEPTED, REJECTED, SET_ASIDE = tuple(Outcome)
REFERENCE = GateVerdict.REFERENCE  # the gate: a result of the reference submitter itself
ERROR, WARNING = tuple(Severity)
UNVERIFIED_FOOTNOTE = "Result not verified by MLCommons Association."
COMPARISON_DISCLAIMER = (
    "Unverified results have not been through an MLPerf review and may use measurement "
    "methodologies and/or workload implementations that are inconsistent with the MLPerf "
    "specification for verified results."
)


def label(status: object) -> str:
    return LABEL_VERIFIED if status == VERIFIED else LABEL_UNVERIFIED


def footnote(status: object) -> str:
    return "" if status == VERIFIED else UNVERIFIED_FOOTNOTE


# ---- parameters: built-in defaults (params.yaml overrides them) -----------------------------

DEFAULT_TOLERANCE_PCT = 4.0
DEFAULT_REFERENCE_SUBMITTER = "AMD"
DEFAULT_REFERENCE_VENDOR = "AMD"   # partner results: other submitters' results on this vendor's parts
DEFAULT_PARAMS = {"compare": {"tolerance_pct": DEFAULT_TOLERANCE_PCT,
                              "reference_submitter": DEFAULT_REFERENCE_SUBMITTER,
                              "reference_vendor": DEFAULT_REFERENCE_VENDOR}}


# ---- locations ---------------------------------------------------------------------------------

VERSION_DIR = re.compile(r"^v([1-9][0-9]*)$")   # one rule everywhere: v1, v2, ... (never v01, v0)


def version_number(name: str) -> int | None:
    """N of a version folder's name ``v<N>`` (None for any other name: v0 and v01 are none)."""
    m = VERSION_DIR.match(name)
    return int(m.group(1)) if m else None


# What identifies a result across the tables made of one ingest (the canonical table, the
# agreement table, a gate's rows): its file and line. An input line holds one result and a
# result stated twice is refused (duplicate-row), so no two rows share them; they are typed
# columns, never the display text of ``source``.
RESULT_KEY = ("file", "line")


def result_key(row: Mapping, prefix: str = "") -> tuple[str, int | None]:
    """A row's :data:`RESULT_KEY` (``prefix``: of another pair, ``reference_``), its missing line None."""
    line = plain(row.get(f"{prefix}line"))
    return str(row[f"{prefix}file"]), None if line is None else int(line)


@dataclass(frozen=True)
class Source:
    """Where something is, built where it is found: a file and, inside it, a
    line, a row (a record's number), a column or a key.

    ``file`` is the path as the user gave it, or, when ``root`` is set, the
    path relative to that submissions root (the canonical table's ``file``
    column holds that relative form, so that a table does not depend on where
    the root was); ``path`` is what a reader of the finding opens."""

    file: str
    line: int | None = None
    column: str | None = None
    key: str | None = None
    row: int | None = None
    root: str | None = None

    @property
    def path(self) -> str:
        if not self.root or self.file.startswith("/"):
            return self.file
        return f"{self.root.rstrip('/')}/{self.file}" if self.file else self.root

    @property
    def place(self) -> str:
        """The place inside the file, for people: ``line 4, column value``."""
        parts = [f"line {self.line}" if self.line is not None else "",
                 f"row {self.row}" if self.row is not None else "",
                 f"column {self.column}" if self.column else "",
                 f"key {self.key}" if self.key else ""]
        return ", ".join(p for p in parts if p) or "whole file"

    @property
    def cell(self) -> str:
        """``file:line`` (``file`` alone without a line): the canonical table's ``source``
        column, made once from its ``file`` and ``line`` for people to read, never read back."""
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def at(self, **place) -> "Source":
        """The same file, another place in it (``where.at(column="value")``)."""
        return replace(self, **place)

    def under(self, root: str | None) -> "Source":
        """The same place, its file relative to the submissions ``root`` (None:
        none); a file that is not laid out as ``<round>/<submitter>/v<N>/...``
        (a file given by its own path) keeps no root."""
        under = self.file.split("/", 3)   # a file under a submissions root: <round>/<submitter>/v<N>/...
        return replace(self, root=root if root and len(under) > 2 and all(under[:2])
                       and version_number(under[2]) is not None else None)

    @classmethod
    def of_row(cls, row: Mapping, root: str | None = None, prefix: str = "") -> "Source":
        """A table row's place, from its ``file`` and ``line`` columns (``prefix``:
        another pair, ``reference_file`` and ``reference_line``), under the
        submissions ``root`` its files are relative to (see :meth:`under`)."""
        return cls(*result_key(row, prefix)).under(root)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path


# ---- JSON-safe values ------------------------------------------------------------------------

def plain(value: object) -> object:
    """A JSON-safe value: numpy and pandas scalars become Python ones, missing
    values (None, NaN, NA, NaT) and infinities become None, containers recurse,
    anything else unknown becomes its text."""
    if isinstance(value, Row):
        return plain(value.to_dict())
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(v) for v in (sorted(value, key=str) if isinstance(value, set) else value)]
    if value is None or value.__class__.__name__ in ("NAType", "NaTType"):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (str, int, bool)):
        return value
    if hasattr(value, "to_dict"):
        return plain(value.to_dict())
    return str(value)


# ---- typed rows ------------------------------------------------------------------------------

_TEXT, _NUMBER = str | None, float | None
# The schema of every report's rows: one type per column name, whatever the report (a column
# means the same in every report; KIND_TYPES below: where a kind may leave it empty). The
# canonical table's columns follow schemas/results.v4.yaml (a test checks that they agree); a
# column not listed here is typed ``object``.
COLUMN_TYPES: dict[str, object] = {
    # the canonical results table, labelled
    "round": str, "submitter": str, "system": str, "system_name": _TEXT, "accelerator": str,
    "accelerator_variant": str, "composition": str, "accelerators_per_node": int, "nodes": int,
    "total_accelerators": int, "model": str, "used_model": _TEXT, "scenario": str, "value": float,
    "units": str, "division": str, "availability": str, "status": str, "result_id": _TEXT,
    "source": str, "file": str, "line": int | None, "submission_version": int | None, "label": str, "footnote": str,
    "host_processor": _TEXT, "host_processors_per_node": _TEXT, "framework": _TEXT, "operating_system": _TEXT,
    "weight_data_types": _TEXT,
    # compare: the agreement table
    "reference_submitter": str, "reference_system": _TEXT, "reference_value": _NUMBER,
    "reference_source": _TEXT, "reference_file": _TEXT, "reference_line": int | None, "reference_status": _TEXT,
    "reference_rule": _TEXT,
    "deviation_pct": _NUMBER, "tolerance_pct": float, "verdict": str, "reason": str,
    "partner_status": str, "differences": str, "differs_in": str, "context_system": _TEXT,
    "context_source": _TEXT, "context_per_accelerator": _NUMBER, "context_deviation_pct": _NUMBER,
    "context_note": str, "partner_result": bool,
    # scaling
    "expected": _NUMBER, "efficiency_pct": _NUMBER, "references": list, "missing": list,
    # claims
    "id": str, "kind": _TEXT, "text": str, "measure": _TEXT, "claimed": _NUMBER,
    "tolerance": _NUMBER, "computed": _NUMBER, "holds": bool | None, "subject": dict | None,
    "comparator": dict | None, "best_comparator": dict | None, "computed_vs_best": _NUMBER,
    "range_min": _NUMBER, "range_max": _NUMBER, "eligible_comparators": int,
    "cherry_picked": bool | None, "verified": bool | None, "disclaimer": str, "notes": list,
    "compared": int, "within": int, "share_within_pct": _NUMBER, "outside": list, "not_compared": int,
    "including_post_deadline": dict | None, "scope": dict | None,
    # crosscheck
    "published_value": _NUMBER, "published_result_id": _TEXT, "published_source": _TEXT,
    # audit: one row per suite
    "suite": str, "runs_on": str, "rows": int, "expectations_in_file": int,
    "expectations_loaded": int, "success": bool, "failed": int, "statistics": dict,
}

# Where a kind of row leaves a column empty that others always fill: the gate's row of a
# rejected input has no result (submitter, value, verdict... are None).
KIND_TYPES: dict[str, dict[str, object]] = {
    "GateRow": {"version": str, "outcome": str, "codes": str, "submitter": _TEXT, "system": _TEXT,
                "model": _TEXT, "scenario": _TEXT, "value": _NUMBER, "units": _TEXT, "status": _TEXT,
                "verdict": _TEXT, "tolerance_pct": _NUMBER, "label": _TEXT, "differences": _TEXT},
}


class Row(Mapping):
    """A typed row of a report: a frozen dataclass whose fields are the row's
    columns, in order, typed by :data:`COLUMN_TYPES` (:func:`row_type` makes
    the class of a kind of row and its columns). It reads as a mapping
    (``row["verdict"]``, ``row.get("label")``); :mod:`pipeline.output.render` and
    ``to_dict()`` write it, its values JSON-safe (:func:`plain`)."""

    __slots__ = ()
    columns: ClassVar[tuple[str, ...]] = ()

    def __getitem__(self, key: str) -> object:
        if key in self.columns:
            return getattr(self, key)
        raise KeyError(key)

    def __iter__(self):
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    def to_dict(self) -> dict:
        return {k: self[k] for k in self.columns}

    @classmethod
    def schema(cls) -> dict[str, object]:
        """column -> declared type."""
        return {f.name: f.type for f in fields(cls)} if cls.columns else {}


class LooseRow(Row):
    """A row whose columns cannot be fields (a CSV's column named ``keys`` or
    ``my value``): every value typed ``object``, read by name."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping):
        object.__setattr__(self, "_data", dict(data))

    @property
    def columns(self) -> tuple[str, ...]:   # type: ignore[override]
        return tuple(self._data)

    def __getitem__(self, key: str) -> object:
        return self._data[key]

    def schema(self) -> dict[str, object]:   # type: ignore[override]
        return {c: object for c in self._data}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LooseRow) and self._data == other._data

    __hash__ = None   # type: ignore[assignment]


_RESERVED = frozenset(dir(Row)) | {"_data"}


@functools.cache
def row_type(kind: str, columns: tuple[str, ...]) -> type[Row] | None:
    """The typed row class of ``kind`` (``AgreementRow``, ``ScalingRow``, ...) with
    these columns in this order; None when a column cannot be a field."""
    if not all(c.isidentifier() and not keyword.iskeyword(c) and c not in _RESERVED and not c.startswith("__")
               for c in columns):
        return None
    types = {**COLUMN_TYPES, **KIND_TYPES.get(kind, {})}
    cls = make_dataclass(kind, [(c, types.get(c, object)) for c in columns], bases=(Row,),
                         frozen=True, slots=True)
    cls.columns = columns
    cls.__module__ = __name__
    return cls


def typed_rows(kind: str, records: Iterable[Mapping]) -> list[Row]:
    """Records (dicts, or a table's ``to_dict("records")``) as typed rows of
    ``kind``, their values JSON-safe; the columns and their order are kept."""
    out: list[Row] = []
    for record in records:
        record = plain(dict(record))
        cls = row_type(kind, tuple(record))
        out.append(cls(**record) if cls is not None else LooseRow(record))
    return out


# ---- the labels of a table ---------------------------------------------------------------------

def label_frame(frame: "pd.DataFrame") -> pd.DataFrame:
    """Add the MLCommons label and footnote to a table carrying a status column."""
    import pandas as pd

    frame = frame.copy(deep=False)   # the columns added are the copy's; the caller's frame never changes
    if not len(frame):
        frame["label"] = [label(s) for s in frame["status"]]
        frame["footnote"] = [footnote(s) for s in frame["status"]]
        return frame
    # model.label and model.footnote once per distinct status, applied to every row
    codes, distinct = pd.factorize(frame["status"], use_na_sentinel=False)
    frame["label"] = pd.array([label(s) for s in distinct], dtype="str").take(codes)
    frame["footnote"] = pd.array([footnote(s) for s in distinct], dtype="str").take(codes)
    return frame


def any_unverified(frame: "pd.DataFrame") -> bool:
    """Whether a table carrying a status column holds a row labelled unverified."""
    return bool(len(frame)) and bool((frame["status"].astype("str") != VERIFIED).any())
