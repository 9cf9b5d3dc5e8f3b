"""Bulk normalisation: :func:`pipeline.normalize.build_row`'s decisions for a
whole table, taken once per distinct combination of descriptive fields.

Everything that decides whether a row is valid, except its value, depends on
a handful of descriptive fields (round, submitter, system, accelerator,
counts, model, scenario, units, division, availability), and a file holds few
distinct combinations of them. So each combination goes through ``build_row``
once; values are checked as a column; and every row that fails anything is
sent, alone, through ``build_row`` to get its exact findings. The rows this
produces are the rows the row-by-row path produces (a property test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .findings import Finding
from . import normalize, rules
from .normalize import (EXCLUDED_CPU, EXCLUDED_POWER, NUMBER_PATTERN, PLACEHOLDERS, Context,
                        build_row, exclusion)
from .readers.base import Disposition
from .readers.tabular import RawTable, RecordTable
from .rows import merge_warnings, normalise_records, rejected as _rejected
from .table import COLUMNS

DESCRIPTIVE = ("round", "submitter", "system", "platform", "accelerator", "accelerators_per_node",
               "nodes", "total_accelerators", "model", "scenario", "units", "division",
               "availability")
PER_ROW = ("value", "result_id", "system_name", "power", "used_model")
BULK_MIN_ROWS = 200   # below this, per-row normalisation is faster than column operations
BULK_MIN_RECORDS = 200   # the same for a reader's records (a tree's results), made into columns


@dataclass
class BulkResult:
    frame: pd.DataFrame                                   # accepted canonical rows
    findings: list[Finding] = field(default_factory=list)
    dispositions: list[Disposition] = field(default_factory=list)


def normalise_result(result, ctx: Context) -> BulkResult:
    """A reader's whole output: its tables in bulk, its single records one by one.
    Every row ends accepted (in ``frame``) or in ``dispositions`` with a reason.
    A table MLCommons publishes is the authority on its own names
    (``result.authoritative_names``)."""
    from .table import to_frame

    if getattr(result, "authoritative_names", False) and not ctx.authoritative_names:
        ctx = replace(ctx, authoritative_names=True)

    out = BulkResult(pd.DataFrame(columns=list(COLUMNS)), list(result.findings),
                     list(result.dispositions))
    frames, records = [], list(result.records)
    tables = list(result.tables)
    if _bulk_records(records):   # many records (a tree's results): in bulk as well
        tables.append(RecordTable(records))
        records = []
    for raw_table in tables:
        if len(raw_table) < BULK_MIN_ROWS and not isinstance(raw_table, RecordTable):
            # a few rows: the row path costs less than pandas (records: see _bulk_records)
            records.extend(raw_table.record(i) for i in range(len(raw_table)))
            continue
        done = normalise(raw_table, ctx)
        out.findings.extend(done.findings)
        out.dispositions.extend(done.dispositions)
        frames.append(done.frame)
    rows, found, dispositions = normalise_records(records, ctx)
    out.findings.extend(found)
    out.dispositions.extend(dispositions)
    if rows:
        frames.append(to_frame(rows))
    frames = [f for f in frames if len(f)]
    if frames:
        out.frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    out.findings = merge_warnings(out.findings)
    return out


def _bulk_records(records: list) -> bool:
    """Whether records go the bulk path: enough of them, each with a line (its
    source is ``file:line``) and without the power flag (the row path reads
    it unstripped)."""
    return len(records) >= max(BULK_MIN_RECORDS, 1) and all(r.line and "power" not in r.fields for r in records)


def _source(table: RawTable, i: int) -> str:
    files = getattr(table, "files", None)
    return f"{table.file if files is None else files[i]}:{int(table.lines[i])}"


def _missing(column: pd.Series) -> np.ndarray:
    return column.str.lower().isin(PLACEHOLDERS).to_numpy()


def normalise(table: RawTable, ctx: Context) -> BulkResult:
    df = table.frame
    text = {c: _text(df, c) for c in DESCRIPTIVE + PER_ROW}
    excluded_cpu = text["accelerator"].isna().to_numpy() & (
        text["accelerators_per_node"].isna() | (text["accelerators_per_node"] == "0")).to_numpy()
    excluded_power = (text["power"] == "true").to_numpy() & ~excluded_cpu
    excluded = excluded_cpu | excluded_power

    value_text = text["value"]
    value = pd.to_numeric(value_text.where(value_text.str.fullmatch(NUMBER_PATTERN), None),
                          errors="coerce").to_numpy(dtype="float64")
    good = ~excluded & np.isfinite(value) & (value > 0)
    warned = np.zeros(len(df), dtype=bool)
    columns: dict[str, np.ndarray] = {}
    for fields, resolve, names in _resolvers(ctx):
        results, ok, warn = _resolve_unique(text, fields, resolve)
        good &= ok
        warned |= warn
        for j, name in enumerate(names):
            columns[name] = results[j]
    fast = good & ~warned   # a row with a warning takes the row path, which writes it with its place
    out = BulkResult(_assemble(table, ctx, text, value, columns, fast))
    slow_rows, slow_at = [], []
    for i in np.flatnonzero(~fast):
        source = _source(table, int(i))
        if excluded_cpu[i]:
            out.dispositions.append(Disposition(source, "excluded", "", EXCLUDED_CPU))
        elif excluded_power[i]:
            out.dispositions.append(Disposition(source, "excluded", "", EXCLUDED_POWER))
        else:
            row, found = build_row(table.record(int(i)), ctx)
            out.findings.extend(found)
            if row is None:
                out.dispositions.append(_rejected(source, found))
            else:
                slow_rows.append(row)
                slow_at.append(i)
    if slow_rows:   # back in the file's order
        from .table import to_frame

        at = np.concatenate([np.flatnonzero(fast), np.array(slow_at, dtype=np.int64)])
        both = pd.concat([out.frame, to_frame(slow_rows)], ignore_index=True)
        out.frame = both.iloc[np.argsort(at, kind="stable")].reset_index(drop=True)
    return out


def _text(df: pd.DataFrame, column: str) -> pd.Series:
    """A field as RawRecord.get sees it: stripped, placeholders as missing (NA)."""
    if column not in df.columns:
        return pd.Series(pd.NA, index=df.index, dtype="str")
    stripped = df[column].astype("str").str.strip()
    return stripped.where(~stripped.str.lower().isin(PLACEHOLDERS))


def _python(value):
    return None if value is None or value is pd.NA or (isinstance(value, float) and value != value) \
        else value


def _resolvers(ctx: Context):
    """(input fields, resolver, output columns): the parts of normalize.build_row."""
    return (
        (("round",), lambda r: normalize.resolve_round(r, ctx.round), ("round",)),
        (("submitter",), lambda s: normalize.resolve_submitter(s, ctx.submitter), ("submitter",)),
        (("system",), lambda s: normalize.resolve_required("system", s), ("system",)),
        (("model", "scenario", "units", "round", "used_model"),
         lambda m, s, u, r, used: normalize.resolve_benchmark(
             m, s, u, normalize.round_name(r, ctx.round), ctx.authoritative_names, used),
         ("model", "scenario", "units")),
        (("division",), lambda d: normalize.resolve_choice("division", d, rules.choices("division")),
         ("division",)),
        (("availability",),
         lambda a: normalize.resolve_choice("availability", a, rules.choices("availability")),
         ("availability",)),
        (("accelerator", "platform", "accelerators_per_node", "nodes", "total_accelerators"),
         lambda *a: normalize.resolve_accelerators(*a, ctx.authoritative_names),
         ("accelerator", "accelerator_variant", "composition", "accelerators_per_node", "nodes",
          "total_accelerators")),
    )


def _resolve_unique(text: dict, fields: tuple[str, ...], resolve):
    """Run a resolver once per distinct combination of its input fields.
    Returns (output columns, no error, has a warning) per row."""
    keys = pd.DataFrame({f: text[f] for f in fields})
    codes = keys.groupby(list(fields), sort=False, dropna=False).ngroup().to_numpy()
    firsts = pd.Series(np.arange(len(codes))).groupby(codes).first().to_numpy()
    firsts_keys = keys.iloc[firsts]
    columns = [[_python(v) for v in firsts_keys[f].tolist()] for f in fields]
    values, oks, warns = [], [], []
    for j in range(len(firsts)):
        result, problems = resolve(*(column[j] for column in columns))
        values.append(result if len(fields) > 1 and isinstance(result, tuple) else (result,))
        oks.append(not normalize.errors(problems))
        warns.append(bool(problems))
    width = len(values[0]) if values else 0
    per_group = [np.array([v[j] for v in values] + [None], dtype=object)[:-1] for j in range(width)]
    if not len(codes):
        return [col[codes] for col in per_group], np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    return ([col[codes] for col in per_group], np.array(oks, dtype=bool)[codes],
            np.array(warns, dtype=bool)[codes])


def _used_models(used: pd.Series, model: pd.Series) -> np.ndarray:
    """normalize.used_model once per distinct (used model, model) pair."""
    keys = pd.DataFrame({"u": used.to_numpy(dtype=object, na_value=None),
                         "m": model.to_numpy(dtype=object)})
    codes = keys.groupby(["u", "m"], sort=False, dropna=False).ngroup().to_numpy()
    if not len(codes):
        return np.zeros(0, dtype=object)
    firsts = pd.Series(np.arange(len(codes))).groupby(codes).first().to_numpy()
    values = [normalize.used_model(_python(keys["u"].iat[i]), keys["m"].iat[i]) for i in firsts]
    return np.array(values + [None], dtype=object)[:-1][codes]


def _assemble(table, ctx, text, value, columns, good) -> pd.DataFrame:
    idx = np.flatnonzero(good)
    frame = pd.DataFrame({name: col[idx] for name, col in columns.items()})
    frame["value"] = value[idx]
    frame["system_name"] = text["system_name"].iloc[idx].to_numpy(dtype=object, na_value=None)
    frame["used_model"] = _used_models(text["used_model"].iloc[idx], frame["model"])
    result_id = text["result_id"].iloc[idx]
    frame["result_id"] = result_id.fillna(ctx.result_id_default).to_numpy(dtype=object, na_value=None) \
        if ctx.result_id_default is not None else result_id.to_numpy(dtype=object, na_value=None)
    frame["status"] = ctx.status
    files = getattr(table, "files", None)
    frame["source"] = (table.file + ":" + pd.Series(table.lines[idx], dtype="int64").astype("str")
                       if files is None else [f"{files[i]}:{table.lines[i]}" for i in idx])
    frame["submission_version"] = ctx.submission_version
    return frame[list(COLUMNS)]
