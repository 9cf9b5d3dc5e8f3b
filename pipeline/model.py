"""The model: facts every module shares, each written once.

* the MLCommons labels and wording (the footnote of an unverified result and
  the comparison disclaimer);
* the built-in defaults of the pipeline's parameters (``params.yaml``
  overrides them; the CLI reads it once, at the edge, and passes values in);
* :class:`Source`, the one way a place in a file is written and parsed
  (``file:line`` in tables, ``line N`` or ``key K`` in findings);
* :func:`plain`, the one way a value is made JSON-safe.

Standard library only: the gate imports it and must start fast.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# ---- labels and the MLCommons wording ------------------------------------------------------

VERIFIED = "verified"
POST_DEADLINE = "post-deadline"
STATUSES = (VERIFIED, POST_DEADLINE)
LABEL_VERIFIED = "verified"
LABEL_UNVERIFIED = "unverified"
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

_FILE_LINE = re.compile(r"^(?P<file>.*\S):(?P<line>\d+)\Z", re.DOTALL)   # a file name may hold any character
_PLACE = re.compile(r"(?:^|,\s*)(?P<kind>line|key|column|row)\s+(?P<value>[^,]+)")


@dataclass(frozen=True)
class Source:
    """Where something is: a file (relative to the repository root or the
    submissions root) and, inside it, a line, a key or a column."""

    file: str
    line: int | None = None
    key: str | None = None
    column: str | None = None

    @classmethod
    def parse(cls, text: object) -> "Source":
        """``file:line`` (the tables' ``source`` column) or a bare file."""
        text = "" if text is None else str(text)
        m = _FILE_LINE.match(text)
        return cls(m["file"], int(m["line"])) if m else cls(text)

    @classmethod
    def of(cls, file: str, place: str) -> "Source":
        """From a finding's ``file`` and ``place`` (``line 4, key submitted_at``)."""
        found = {m["kind"]: m["value"].strip() for m in _PLACE.finditer(place or "")}
        line = found.get("line")
        return cls(file, int(line) if line and line.isdigit() else None,
                   found.get("key"), found.get("column"))

    def moved(self, prefix: str) -> "Source":
        """The same place with ``prefix`` before the file (root- to repo-relative)."""
        return Source(prefix + self.file, self.line, self.key, self.column)

    @property
    def place(self) -> str:
        parts = [f"line {self.line}" if self.line is not None else "",
                 f"key {self.key}" if self.key else "",
                 f"column {self.column}" if self.column else ""]
        return ", ".join(p for p in parts if p)

    def __str__(self) -> str:
        """``file:line`` as the tables write it (``file`` when there is no line)."""
        return f"{self.file}:{self.line}" if self.line is not None else self.file


# ---- JSON-safe values ------------------------------------------------------------------------

def plain(value: object) -> object:
    """A JSON-safe value: numpy and pandas scalars become Python ones, missing
    values (None, NaN, NA, NaT) and infinities become None, containers recurse,
    anything else unknown becomes its text."""
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
