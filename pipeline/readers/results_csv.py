"""``results-csv``: the project's own one-result-per-row template.

A partner types this file, so every model and accelerator name must be in the
registries (an unknown one is an error, never a guess)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pipeline.core.rules import Rules
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.core.vocabulary import Severity
from pipeline.readers.base import COLUMNS, RawRecord, ReadResult, as_source
from pipeline.readers.csvfile import CsvFile, complete_rows, open_csv, single_round

NAME = "results-csv"
REQUIRED = ("submitter", "system", "accelerator", "accelerators_per_node", "nodes", "model",
            "scenario", "value", "units", "division", "availability")
OPTIONAL = ("total_accelerators", "result_id", "system_name", "round", "platform", "used_model",
            # the system description, as the checker's summary.csv names it
            "host_processor", "host_processors_per_node", "framework", "operating_system", "weight_data_types")


def sniff(head: str) -> bool:
    cols = {c.strip() for c in head.split("\n", 1)[0].split(",")}
    return set(REQUIRED) <= cols


def read(path: Path, where: Source | str, rules: Rules, round_: str | None = None) -> ReadResult:
    where = as_source(where)
    out, csv_file = open_csv(rules, path, where, REQUIRED, f"columns {list(REQUIRED)}")
    if csv_file is None:
        return out
    out.findings += [unexpected_column(where.at(line=1, column=col), col) for col in csv_file.header
                     if col not in REQUIRED and col not in OPTIONAL]
    out.records = _records(csv_file, out)
    return out


def unexpected_column(at: Source, col: str) -> Finding:
    return located("unexpected-column", at, "a column of the results-csv template", col, "unknown column (ignored)",
                   severity=Severity.WARNING)


def _records(csv_file: CsvFile, out: ReadResult) -> Iterator[RawRecord]:
    header, source = csv_file.header, csv_file.where
    platform = "platform" in header
    round_at = header.index("round") if "round" in header else None
    rounds: set[str] = set()
    for line, values in complete_rows(csv_file, out):
        fields = dict(zip(header, values))
        if not platform:
            fields["platform"] = fields["system"]
        if round_at is not None:
            rounds.add(values[round_at])
        yield RawRecord(source, line, fields, COLUMNS)
    out.round = single_round(rounds)
