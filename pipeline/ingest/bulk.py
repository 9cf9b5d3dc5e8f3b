"""Bulk normalisation: :func:`pipeline.ingest.normalise.build_row`'s decisions for a
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

from pipeline.core.findings import Finding
from pipeline.ingest import normalise as normalize
from pipeline.core import rules
from pipeline.ingest.normalise import (EXCLUDED_CPU, EXCLUDED_POWER, NUMBER_PATTERN, PLACEHOLDERS, Context, build_row, exclusion)
from pipeline.readers.base import Disposition
from pipeline.readers.tabular import RawTable, RecordTable
from pipeline.ingest.rows import merge_warnings, normalise_records, rejected as _rejected
from pipeline.ingest.table import COLUMNS

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
    from pipeline.ingest.table import to_frame

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


@dataclass
class Coded:
    """A column as codes into its distinct values: ``values[codes[i]]`` is row i's
    value (a Python str, or None for a missing one)."""

    codes: np.ndarray     # int64, one per row
    values: np.ndarray    # object, one per distinct value

    def isna(self) -> np.ndarray:
        return np.array([v is None for v in self.values], dtype=bool)[self.codes]

    def equals(self, text: str) -> np.ndarray:
        return np.array([v == text for v in self.values], dtype=bool)[self.codes]

    def at(self, idx: np.ndarray) -> np.ndarray:
        return self.values[self.codes[idx]]


def normalise(table: RawTable, ctx: Context) -> BulkResult:
    df = table.frame
    text = {c: _coded(df, c) for c in DESCRIPTIVE + PER_ROW if c != "value"}
    excluded_cpu = text["accelerator"].isna() & (
        text["accelerators_per_node"].isna() | text["accelerators_per_node"].equals("0"))
    excluded_power = text["power"].equals("true") & ~excluded_cpu
    excluded = excluded_cpu | excluded_power

    value_text = _text(df, "value")
    value = _numbers(value_text.where(value_text.str.fullmatch(NUMBER_PATTERN), None))
    good = ~excluded & np.isfinite(value) & (value > 0)
    warned = np.zeros(len(df), dtype=bool)
    columns: dict[str, Coded] = {}
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
        from pipeline.ingest.table import to_frame

        at = np.concatenate([np.flatnonzero(fast), np.array(slow_at, dtype=np.int64)])
        both = pd.concat([out.frame, to_frame(slow_rows)], ignore_index=True)
        out.frame = both.iloc[np.argsort(at, kind="stable")].reset_index(drop=True)
    return out


def _numbers(texts: pd.Series) -> np.ndarray:
    """Texts that match NUMBER_PATTERN (others missing) as float64: Arrow's
    cast, which gives what ``float()`` (the row path) and ``pd.to_numeric``
    give for every such text, at a third of to_numeric's cost; to_numeric
    if the cast refuses anything."""
    try:
        return texts.astype("float64").to_numpy(dtype="float64")
    except Exception:   # whatever the cast refuses: pandas' parser decides, as before
        return pd.to_numeric(texts, errors="coerce").to_numpy(dtype="float64")


def _text(df: pd.DataFrame, column: str) -> pd.Series:
    """A field as RawRecord.get sees it: stripped, placeholders as missing (NA)."""
    if column not in df.columns:
        return pd.Series(pd.NA, index=df.index, dtype="str")
    stripped = df[column].astype("str").str.strip()
    return stripped.where(~stripped.str.lower().isin(PLACEHOLDERS))


def _coded(df: pd.DataFrame, column: str) -> Coded:
    """:func:`_text` of a column, computed once per distinct raw value: the
    same strip and placeholder test, on the distinct values only."""
    if column not in df.columns:
        return Coded(np.zeros(len(df), dtype=np.int64), np.array([None], dtype=object))
    series = df[column]
    if isinstance(series.dtype, pd.CategoricalDtype):   # read as codes already (tabular.parse_csv)
        raw_codes = series.cat.codes.to_numpy().astype(np.int64)
        uniques = series.cat.categories.astype("str")
    else:
        raw_codes, uniques = pd.factorize(series.astype("str"), use_na_sentinel=True)
    raw = uniques.tolist()
    if all(text.isascii() for text in raw):   # Python's strip and lower are pandas' on ASCII
        texts = [None if (stripped := text.strip()).lower() in PLACEHOLDERS else stripped
                 for text in raw]
    else:
        stripped = pd.Series(uniques, dtype="str").str.strip()
        texts = [_python(v) for v in stripped.where(~stripped.str.lower().isin(PLACEHOLDERS)).tolist()]
    # equal texts share a code (" AMD" and "AMD"); raw code -1 (NA) is the last: missing
    index: dict = {}
    to_text = [index.setdefault(text, len(index)) for text in texts + [None]]
    return Coded(np.array(to_text, dtype=np.int64)[raw_codes], np.array(list(index) + [None], dtype=object)[:-1])


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


def group_codes(coded: list[np.ndarray], sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """One code per distinct combination of several code columns, in order of
    first appearance, and the first row of each combination."""
    n = len(coded[0]) if coded else 0
    combined = np.zeros(n, dtype=np.int64)
    radix = 1
    for codes, size in zip(coded, sizes):
        if radix * (size + 1) >= 2 ** 62:      # keep the mixed-radix key in int64
            combined, uniques = pd.factorize(combined)
            radix = len(uniques)
        combined = combined * (size + 1) + codes
        radix *= size + 1
    groups, _ = pd.factorize(combined)
    # groups are numbered in order of first appearance: a group's first row is
    # where the running maximum of the codes so far steps up
    firsts = np.flatnonzero(np.diff(np.maximum.accumulate(groups), prepend=-1) > 0)
    return groups.astype(np.int64), firsts


def _resolve_unique(text: dict, fields: tuple[str, ...], resolve):
    """Run a resolver once per distinct combination of its input fields.
    Returns (output columns as codes into per-combination values, no error,
    has a warning per row)."""
    groups, firsts = group_codes([text[f].codes for f in fields], [len(text[f].values) for f in fields])
    columns = [text[f].at(firsts).tolist() for f in fields]
    values, oks, warns = [], [], []
    for j in range(len(firsts)):
        result, problems = resolve(*(column[j] for column in columns))
        values.append(result if len(fields) > 1 and isinstance(result, tuple) else (result,))
        oks.append(not normalize.errors(problems))
        warns.append(bool(problems))
    width = len(values[0]) if values else 0
    per_group = [np.array([v[j] for v in values] + [None], dtype=object)[:-1] for j in range(width)]
    return ([Coded(groups, col) for col in per_group], np.array(oks, dtype=bool)[groups],
            np.array(warns, dtype=bool)[groups])


def _used_models(used: Coded, model: Coded, idx: np.ndarray) -> Coded:
    """normalize.used_model once per distinct (used model, model) pair."""
    u, m = used.codes[idx], model.codes[idx]
    groups, firsts = group_codes([u, m], [len(used.values), len(model.values)])
    values = [normalize.used_model(used.values[u[i]], model.values[m[i]]) for i in firsts]
    return Coded(groups, np.array(values + [None], dtype=object)[:-1])


def _strings(values: np.ndarray, codes: np.ndarray):
    """A str column (missing as NA) from per-code values: the distinct values
    become an Arrow string array once, the rows take from it."""
    return pd.array(values.tolist() + [None], dtype="str").take(codes)


def _column(coded: Coded, idx: np.ndarray):
    """A canonical column of the accepted rows: str, or int64 when every
    value is an int (else the values as objects, for table.coerce)."""
    codes = coded.codes[idx]
    kinds = {type(v) for v in coded.values}
    if kinds <= {str, type(None)}:
        return _strings(coded.values, codes)
    if kinds == {int}:
        return np.array(coded.values.tolist(), dtype=np.int64)[codes]
    return coded.values[codes]


def _assemble(table, ctx, text, value, columns, good) -> pd.DataFrame:
    """The accepted rows' columns, each built once, in one frame in the
    canonical order (no column added one by one, no reordering copy)."""
    idx = np.flatnonzero(good)
    out = {name: _column(col, idx) for name, col in columns.items()}
    out["value"] = value[idx]
    out["system_name"] = _column(text["system_name"], idx)
    used = _used_models(text["used_model"], columns["model"], idx)
    out["used_model"] = _strings(used.values, used.codes)
    result_id = text["result_id"]
    if ctx.result_id_default is not None:
        result_id = Coded(result_id.codes, np.array([ctx.result_id_default if v is None else v
                                                    for v in result_id.values], dtype=object))
    out["result_id"] = _column(result_id, idx)
    out["status"] = _strings(np.array([ctx.status], dtype=object), np.zeros(len(idx), dtype=np.int64))
    files = getattr(table, "files", None)
    out["source"] = (table.file + ":" + pd.Series(table.lines[idx], dtype="int64").astype("str")).array \
        if files is None else [f"{files[i]}:{table.lines[i]}" for i in idx]
    version = ctx.submission_version   # as a scalar assigned to the column would be typed
    out["submission_version"] = np.full(len(idx), version, dtype=np.int64 if isinstance(version, int) else object)
    return pd.DataFrame({name: out[name] for name in COLUMNS}, index=pd.RangeIndex(len(idx)), copy=False)
