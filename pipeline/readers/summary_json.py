"""``mlcommons-summary-json``: the published ``summary_results.json``, a JSON
list of records (:data:`KEY_MAP`). A record is placed by its number in the
list and the line where it starts; a field by its key.
"""

from __future__ import annotations

import math
from pathlib import Path

from pipeline.core import limits, textcheck
from pipeline.core.rules import Rules
from pipeline.core.findings import located
from pipeline.core.model import Source
from pipeline.readers import jsonsafe
from pipeline.readers.base import Layout, RawRecord, ReadResult, as_source, json_text, read_text

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
    # the system description (compare says how two systems differ by it)
    "host_processor": "Processor",
    "host_processors_per_node": "host_processors_per_node",
    "framework": "Software",
    "operating_system": "operating_system",
    "weight_data_types": "weight_data_types",
}
# the total is derived from the platform id, a# and Nodes: its findings name the per-node count
LAYOUT = Layout({**KEY_MAP, "total_accelerators": "a#", "power": "has_power", "power_data": "Power_Result"},
                keyed=True)
MAX_DEPTH = 4   # a list of flat records needs 2


def sniff(head: str) -> bool:
    return head.lstrip("\ufeff \t\r\n").startswith("[") and SNIFF_KEY in head


def read(path: Path, where: Source | str, rules: Rules, round_: str | None = None) -> ReadResult:
    where = as_source(where)
    out = ReadResult()
    text, found = read_text(path, where, limits.file_bytes(rules), checks=textcheck.JSON)
    if text is None:
        out.findings.extend(found)
        return out
    data, starts, found = jsonsafe.loads(text, where, MAX_DEPTH)
    if found:
        out.findings.extend(found)
        return out
    if not isinstance(data, list):
        out.findings.append(located("format-mismatch", where, "a JSON list of records",
                                    type(data).__name__, "the file is not a list of records"))
        return out
    over = limits.rows_over_cap(rules, len(data), where, "records")
    if over is not None:
        out.findings.append(over)
        return out
    lines = starts if len(starts) == len(data) else [None] * len(data)
    read = (_record(out, where, number, line, record) for number, (record, line) in enumerate(zip(data, lines), 1))
    out.records = records = [r for r in read if r is not None]
    rounds = {r.fields["round"] for r in records if r.fields.get("round")}
    out.round = rounds.pop() if len(rounds) == 1 else None
    return out


def _record(out: ReadResult, where: Source, number: int, line: int | None, record: object) -> RawRecord | None:
    """The record as raw fields, or None (rejected in ``out``)."""
    at = where.at(line=line, row=number)
    cell = Source(where.file, line if line else number)
    if not isinstance(record, dict):
        out.reject(cell, [located("format-mismatch", at, "a JSON object", type(record).__name__,
                                  "a record is not an object")])
        return None
    repeated = jsonsafe.repeated_key(record, at, f"record {record.get('ID', '?')} states a key twice "
                                               "(JSON keeps the last silently)")
    if repeated:
        out.reject(cell, [repeated])
        return None
    values = {name: text for name, key in KEY_MAP.items()
              if (text := _text(record.get(key))) is not None}
    if record.get("has_power") is True:
        values["power"] = "true"
        data = _text(record.get("Power_Result"))
        if data is not None:
            values["power_data"] = data
    return RawRecord(where, line, values, LAYOUT, row=number)


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return json_text(value) if isinstance(value, (bool, int, str)) else "<nested value>"
