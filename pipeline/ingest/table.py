"""The canonical results table: its columns, its pandera schema, its files.

The schema is data (``schemas/results.v4.yaml``; v1 to v3 stay as released); this module loads it once,
builds frames in the schema's column order, and turns pandera's lazy failure
table into findings so that no row disappears without a reason.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

from pipeline.core.errors import ConfigError, DataError
from pipeline.core.escape import csv_restore_frame
from pipeline.core.findings import Finding, located
from pipeline.core.imports import absent
from pipeline.core.model import Source
from pipeline.ingest.resolve import bounds
from pipeline.core.rules import SCHEMA_FILE, Rules, memo

COLUMNS = (
    "round", "submitter", "system", "system_name", "accelerator", "accelerator_variant",
    "composition", "accelerators_per_node", "nodes", "total_accelerators", "model", "used_model",
    "scenario",
    "value", "units", "division", "availability", "status", "result_id", "source", "file", "line",
    "submission_version", "host_processor", "host_processors_per_node", "framework", "operating_system",
    "weight_data_types",
)
INT_COLUMNS = ("accelerators_per_node", "nodes", "total_accelerators")
NULLABLE_INT_COLUMNS = ("line", "submission_version")
# what pandera imports, when installed, for a feature the pipeline does not use (pipeline/core/imports.py absent)
PANDERA_UNUSED = ("hypothesis",)


@memo()
def schema(rules: Rules):
    from pandera.io.pandas_io import deserialize_schema   # the parsed file: pandera's own parse is pure Python

    path = rules.folder / SCHEMA_FILE
    try:
        loaded = deserialize_schema(rules.load_yaml(SCHEMA_FILE))
    except Exception as exc:  # pandera raises several types for a bad file
        raise ConfigError(f"cannot load {path}: {exc}") from exc
    if tuple(loaded.columns) != COLUMNS:
        raise ConfigError(f"{path}: columns {list(loaded.columns)} differ from {list(COLUMNS)}")
    return loaded


def to_frame(rows: list[dict]) -> pd.DataFrame:
    """Rows (dicts) to a frame with the canonical columns and dtypes."""
    if not rows:   # built once: ingest starts every report with it
        return _no_rows().copy()
    return coerce(pd.DataFrame(rows, columns=list(COLUMNS)))


@lru_cache(maxsize=1)
def _no_rows() -> pd.DataFrame:
    return coerce(pd.DataFrame([], columns=list(COLUMNS)))


def dtype(col: str):
    """The pandas type of a canonical column."""
    return pd.api.types.pandas_dtype("int64" if col in INT_COLUMNS else "float64" if col == "value"
                                     else "Int64" if col in NULLABLE_INT_COLUMNS else "str")


def coerce(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy(deep=False)   # copy-on-write (pandas 3): the caller's frame never changes
    for col in COLUMNS:
        if frame[col].dtype == dtype(col):   # already canonical: converting it changes nothing
            continue
        if col in (*INT_COLUMNS, *NULLABLE_INT_COLUMNS, "value"):
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(dtype(col))
        else:
            frame[col] = frame[col].astype("str").where(frame[col].notna(), None)
    return frame


def validate(rules: Rules, frame: pd.DataFrame, display: str = "<table>", root: str | None = None
             ) -> tuple[pd.DataFrame, pd.DataFrame, list[Finding]]:
    """Check a frame against the schema, values included (the validation depth
    is pinned: ``PANDERA_VALIDATION_DEPTH=SCHEMA_ONLY`` in the environment
    would otherwise let ``value=-5`` pass). Returns (accepted, rejected,
    findings); every input row is in exactly one of accepted and rejected.
    A finding is placed at its row's ``file`` and ``line`` (under the
    submissions ``root`` when the rows were read from one), else at the
    table's ``display`` row."""
    import pandera.errors
    from pandera.config import ValidationDepth, config_context

    try:
        # pandera's first validation loads its checks, which import hypothesis (for data
        # synthesis, never used here) when the test extras installed it: pipeline/core/imports.py
        with config_context(validation_enabled=True, validation_depth=ValidationDepth.SCHEMA_AND_DATA), \
                absent(*PANDERA_UNUSED):
            return schema(rules).validate(frame, lazy=True), frame.iloc[0:0], []
    except pandera.errors.SchemaErrors as exc:
        cases = exc.failure_cases
    findings: list[Finding] = []
    bad_index: set = set()
    for case in cases.itertuples(index=False):
        idx = case.index
        if idx is None or pd.isna(idx):
            raise ConfigError(f"table schema failed as a whole: {case.check} on {case.column}")
        bad_index.add(idx)
        where = row_source(frame, idx, display, root).at(column=case.column)
        limits = bounds(rules).get(case.column)
        if limits is not None and str(case.check).startswith("in_range"):
            findings.append(located("invalid-value", where, _range_text(case.column, limits), case.failure_case,
                                    f"the {case.column} is outside the plausible range"))
        else:
            findings.append(located("schema-violation", where, str(case.check), case.failure_case,
                                    "the row fails the canonical table schema"))
    mask = frame.index.isin(list(bad_index))
    return frame[~mask], frame[mask], findings


def _range_text(column: str, limits: tuple) -> str:
    """What a column's bounds allow, as a finding's expected value."""
    low, high = limits
    return f"a whole number from {low} to {high}" if column in INT_COLUMNS else f"a number from {low:g} to {high:g}"


def row_source(frame: pd.DataFrame, idx, display: str, root: str | None = None) -> Source:
    """Where a row of a table came from: its ``file`` and ``line``, else its
    line in the table DISPLAY (the header is line 1; an empty cell reads as NaN)."""
    file = frame.at[idx, "file"] if "file" in frame.columns else None
    if isinstance(file, str) and file:
        return Source.of_row({"file": file, "line": frame.at[idx, "line"] if "line" in frame.columns else None},
                             root)
    return Source(display, frame.index.get_loc(idx) + 2)


def read_frame(path: str | Path, **csv_options) -> pd.DataFrame:
    """Any CSV or Parquet table (by extension), a table the pipeline wrote: a CSV's
    text cells as they were before ``write_table`` neutralised them. Raises
    :class:`TableUnreadable`."""
    path = Path(path)
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return csv_restore_frame(pd.read_csv(path, **csv_options))
    except pd.errors.EmptyDataError as exc:
        raise TableUnreadable(path, "a table with a header row", "an empty file") from exc
    except (OSError, ValueError, UnicodeDecodeError) as exc:   # pandas and pyarrow parse errors are ValueErrors
        raise TableUnreadable(path, "a readable CSV or Parquet table", str(exc)[:200]) from exc


class TableUnreadable(DataError):
    """A table that cannot be parsed (exit 1). :func:`load` turns it into a finding."""

    def __init__(self, path: Path, expected: str, found: str):
        super().__init__(f"cannot read the table {path}: {found}", located(
            "file-unreadable", Source(Path(path).as_posix()), expected, found, "the table cannot be read"))


def read(path: str | Path) -> pd.DataFrame:
    """Read a canonical table from CSV or Parquet (by extension), unchecked
    (the pipeline's own outputs; :func:`load` checks)."""
    path = Path(path)
    frame = read_frame(path, dtype=str, keep_default_na=False, na_values=[""])
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ConfigError(f"{path}: not a canonical results table (missing {missing})")
    extra = [c for c in frame.columns if c not in COLUMNS]
    return coerce(frame[list(COLUMNS)]).join(frame[extra]) if extra else coerce(frame)


def load(rules: Rules, path: str | Path) -> tuple[pd.DataFrame, list[Finding]]:
    """Read and validate a canonical table: (the rows that pass the schema,
    findings). A table that cannot be read, lacks a column, has no row, or
    has rows that fail the schema is data failing a check: each is a
    finding located in the file (exit 1), never a crash or a silent pass."""
    path = Path(path)
    display = path.as_posix()
    try:
        frame = read_frame(path, dtype=str, keep_default_na=False, na_values=[""])
    except TableUnreadable as exc:
        return to_frame([]), [exc.finding]
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        return to_frame([]), [located("missing-column", Source(display, 1 if path.suffix != ".parquet" else None),
                                      f"the canonical columns {list(COLUMNS)}", f"missing {missing}",
                                      "not a canonical results table")]
    if frame.empty:
        return to_frame([]), [located("empty-table", Source(display), "at least one result row",
                                      "a header and no row", "the table holds no result")]
    extra = [c for c in frame.columns if c not in COLUMNS]
    found, bad = [], pd.Series(False, index=frame.index)

    def drop(rows, col, code, expected, message):
        for idx in frame.index[rows & ~bad]:
            where = row_source(frame, idx, display)
            found.append(located(code, where.at(column=col), expected, frame.at[idx, col], message))

    limits = bounds(rules)
    for col in (*INT_COLUMNS, "value"):   # a number that does not convert: named, row dropped
        numbers = pd.to_numeric(frame[col], errors="coerce")
        wrong = numbers.isna() | ((numbers % 1 != 0) if col in INT_COLUMNS else False)
        drop(wrong, col, "schema-violation", "an integer" if col in INT_COLUMNS else "a number",
             "the row fails the canonical table schema")
        bad |= wrong
        # the schema's bounds, before a count beyond them overflows its integer column
        implausible = ~wrong & ~numbers.between(*limits[col])
        drop(implausible, col, "invalid-value", _range_text(col, limits[col]),
             f"the {col} is outside the plausible range")
        bad |= implausible
    largest = limits["total_accelerators"][1]
    counts = frame["composition"].astype("str").str.extractall(r":0*(\d+)")[0]
    too_big = (counts.str.len() > len(str(largest))) | (pd.to_numeric(counts.str.slice(0, 20)) > largest)
    absurd = pd.Series(frame.index.isin(too_big[too_big].index.get_level_values(0)), index=frame.index)
    drop(absurd, "composition", "invalid-value", f"accelerator counts from 1 to {largest}",
         "an accelerator count is absurd")
    bad |= absurd
    kept = frame.loc[~bad, list(COLUMNS)] if bad.any() else frame[list(COLUMNS)]   # no copy of 1M good rows
    accepted, _, more = validate(rules, coerce(kept), display)
    accepted = accepted.join(frame.loc[accepted.index, extra]) if extra else accepted
    return accepted.reset_index(drop=True), found + more
