"""``mlcommons-summary-csv``: the MLCommons submission checker's summary.csv,
read by column name (the 31-column layout and the older 28-column one);
``compliance``, ``errors`` and ``inferred`` are unreliable in real data and ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pipeline.core.model import Source
from pipeline.core.rules import Rules
from pipeline.readers.base import Layout, RawRecord, ReadResult, as_source
from pipeline.readers.csvfile import CsvFile, complete_rows, open_csv, single_round

NAME = "mlcommons-summary-csv"
REQUIRED = ("Organization", "Availability", "Division", "SystemName", "Platform", "Model",
            "Scenario", "Result", "number_of_nodes", "accelerator_model_name",
            "accelerators_per_node", "version", "Units")
# canonical field -> checker column (first present wins)
COLUMN_MAP = {
    "submitter": ("Organization",),
    "availability": ("Availability",),
    "division": ("Division",),
    "system_name": ("SystemName",),
    "system": ("Platform",),
    "platform": ("Platform",),
    "model": ("MlperfModel", "Model"),
    "used_model": ("Model",),
    "scenario": ("Scenario",),
    "value": ("Result",),
    "nodes": ("number_of_nodes",),
    "accelerator": ("accelerator_model_name",),
    "accelerators_per_node": ("accelerators_per_node",),
    "total_accelerators": ("total_accelerators",),
    "round": ("version",),
    "units": ("Units",),
    # the system description (compare says how two systems differ by it)
    "host_processor": ("host_processor_model_name",),
    "host_processors_per_node": ("host_processors_per_node",),
    "framework": ("framework",),
    "operating_system": ("operating_system",),
    "weight_data_types": ("weight_data_types",),
}
POWER_COLUMNS = {"power": "has_power", "power_data": "design_power_watts"}   # read when present


SNIFF_COLUMNS = ("Organization", "Platform", "MlperfModel", "Result")   # the columns that recognise the file


def sniff(head: str) -> bool:
    cols = {c.strip().strip('"') for c in head.split("\n", 1)[0].split(",")}
    return set(SNIFF_COLUMNS) <= cols


def read(path: Path, where: Source | str, rules: Rules, round_: str | None = None) -> ReadResult:
    where = as_source(where)
    out, csv_file = open_csv(rules, path, where, REQUIRED, "the checker's summary.csv columns")
    if csv_file is not None:
        out.records = _records(csv_file, out)
    return out


def _records(csv_file: CsvFile, out: ReadResult) -> Iterator[RawRecord]:
    header, source = csv_file.header, csv_file.where
    at = {name: [header.index(c) for c in candidates if c in header] for name, candidates in COLUMN_MAP.items()}
    layout = Layout({**{name: next((c for c in candidates if c in header), candidates[0])
                        for name, candidates in COLUMN_MAP.items()}, **POWER_COLUMNS})
    power = header.index("has_power") if "has_power" in header else None
    power_data = header.index("design_power_watts") if "design_power_watts" in header else None
    rounds: set[str] = set()
    for line, row in complete_rows(csv_file, out):
        fields = {name: _pick(row, columns) for name, columns in at.items()}
        if power is not None:
            fields["power"] = "true" if row[power].strip().lower() == "true" else ""
        if power_data is not None:
            fields["power_data"] = row[power_data]
        rounds.add(fields["round"])
        yield RawRecord(source, line, fields, layout)
    out.round = single_round(rounds)


def _pick(row: list[str], columns: list[int]) -> str:
    """The first non-blank of the present columns, else the last one's text."""
    return next((row[c] for c in columns if row[c].strip()), row[columns[-1]] if columns else "")
