"""``mlcommons-summary-json``: the published ``summary_results.json``.

A JSON list of records with 34 keys (``ID``, ``Submitter``, ``Category`` =
division, ``Platform`` = system id, ``System`` = system name, ``a#`` =
accelerators per node, ``Performance_Result``, ``version`` ...). The rows are
published, so each carries its ``ID`` as result id, and the table is the
authority on its own model and accelerator names (a name the registries lack
keeps its row, with a warning ``unregistered-name``). A record's place is
``record N (ID x), key K``; its line is where the record starts.
"""

from __future__ import annotations

import math
from pathlib import Path

from pipeline.core import textcheck
from pipeline.core.findings import finding
from pipeline.readers.base import RawRecord
from pipeline.readers import jsonsafe
from pipeline.readers.base import ReadResult, read_text

NAME = "mlcommons-summary-json"
SNIFF_KEY = '"Performance_Result"'
# canonical field -> key of a published record
KEY_MAP = {
    "result_id": "ID",
    "submitter": "Submitter",
    "availability": "Availability",
    "division": "Category",
    "system": "Platform",
    "platform": "Platform",
    "system_name": "System",
    "model": "Model",
    "used_model": "UsedModel",
    "scenario": "Scenario",
    "nodes": "Nodes",
    "accelerator": "Accelerator",
    "accelerators_per_node": "a#",
    "value": "Performance_Result",
    "units": "Performance_Units",
    "round": "version",
}
MAX_DEPTH = 4   # a list of flat records needs 2


def sniff(header_line: str) -> bool:
    return False  # needs more than one line: see sniff_head


def sniff_head(head: str) -> bool:
    """The file's first 64 KiB: a JSON list whose records carry Performance_Result."""
    return head.lstrip("\ufeff \t\r\n").startswith("[") and SNIFF_KEY in head


def read(path: Path, display: str) -> ReadResult:
    out = ReadResult(authoritative_names=True)
    text, found = read_text(path, display, checks=textcheck.JSON)
    if text is None:
        out.findings.extend(found)
        return out
    data, starts, found = jsonsafe.loads(text, display, MAX_DEPTH)
    if found:
        out.findings.extend(found)
        return out
    if not isinstance(data, list):
        out.findings.append(finding("format-mismatch", display, "whole file", "a JSON list of records",
                                    type(data).__name__, "the file is not a list of records"))
        return out
    lines = starts if len(starts) == len(data) else [None] * len(data)
    for number, (record, line) in enumerate(zip(data, lines), 1):
        _record(out, display, number, line, record)
    rounds = {r.fields["round"] for r in out.records if r.fields.get("round")}
    out.round = rounds.pop() if len(rounds) == 1 else None
    return out


def _record(out: ReadResult, display: str, number: int, line: int | None, record: object) -> None:
    source = f"{display}:{line if line else number}"
    if not isinstance(record, dict):
        out.reject(source, [finding("format-mismatch", display, f"record {number}", "a JSON object",
                                    type(record).__name__, "a record is not an object")])
        return
    where = f"record {number} (ID {record.get('ID', '?')})"
    repeated = jsonsafe.duplicate_keys(record)
    if repeated:
        out.reject(source, [finding("duplicate-key", display, f"{where}, key {repeated[0]}",
                                    f"{repeated[0]!r} once", f"{repeated[0]!r} twice",
                                    "a record states a key twice (JSON keeps the last silently)")])
        return
    values = {name: text for name, key in KEY_MAP.items()
              if (text := _text(record.get(key))) is not None}
    if record.get("has_power") is True:
        values["power"] = "true"
    places = {name: f"{where}, key {key}" for name, key in KEY_MAP.items()}
    places["total_accelerators"] = f"{where}, keys Platform, a# and Nodes"
    out.records.append(RawRecord(display, line or number, values, places))


def _text(value: object) -> str | None:
    """A record value as the text normalisation expects; None when absent."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, (int, str)):
        return str(value)
    return "<nested value>"
