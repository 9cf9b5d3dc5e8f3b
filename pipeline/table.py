"""The canonical results table: its columns, its pandera schema, its files.

The schema is data (``schemas/results.v2.yaml``; v1 stays as released); this module loads it once,
builds frames in the schema's column order, and turns pandera's lazy failure
table into findings so that no row disappears without a reason.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .errors import ConfigError
from .findings import Finding, finding
from . import rules
from .rules import schemas_dir

SCHEMA_FILE = "results.v2.yaml"

COLUMNS = (
    "round", "submitter", "system", "system_name", "accelerator", "accelerator_variant",
    "composition", "accelerators_per_node", "nodes", "total_accelerators", "model", "used_model",
    "scenario",
    "value", "units", "division", "availability", "status", "result_id", "source",
    "submission_version",
)
INT_COLUMNS = ("accelerators_per_node", "nodes", "total_accelerators")


@rules.cached()
def schema():
    import pandera.pandas as pa

    path = schemas_dir() / SCHEMA_FILE
    try:
        loaded = pa.DataFrameSchema.from_yaml(path)
    except Exception as exc:  # pandera raises several types for a bad file
        raise ConfigError(f"cannot load {path}: {exc}") from exc
    if tuple(loaded.columns) != COLUMNS:
        raise ConfigError(f"{path}: columns {list(loaded.columns)} differ from {list(COLUMNS)}")
    return loaded


def to_frame(rows: list[dict]) -> pd.DataFrame:
    """Rows (dicts) to a frame with the canonical columns and dtypes."""
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return coerce(frame)


def coerce(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    for col in COLUMNS:
        if col in INT_COLUMNS:
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("int64")
        elif col == "value":
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
        elif col == "submission_version":
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("Int64")
        else:
            frame[col] = frame[col].astype("str").where(frame[col].notna(), None)
    return frame


def validate(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, list[Finding]]:
    """Check a frame against the schema. Returns (accepted, rejected, findings);
    every input row is in exactly one of accepted and rejected."""
    import pandera.errors

    try:
        return schema().validate(frame, lazy=True), frame.iloc[0:0], []
    except pandera.errors.SchemaErrors as exc:
        cases = exc.failure_cases
    findings: list[Finding] = []
    bad_index: set = set()
    for case in cases.itertuples(index=False):
        idx = case.index
        if idx is None or pd.isna(idx):
            raise ConfigError(f"table schema failed as a whole: {case.check} on {case.column}")
        bad_index.add(idx)
        source = frame.at[idx, "source"] if "source" in frame.columns else f"row {idx}"
        findings.append(finding(
            "schema-violation", str(source).rsplit(":", 1)[0], f"{_where(source)}column {case.column}",
            str(case.check), case.failure_case, "the row fails the canonical table schema"))
    mask = frame.index.isin(list(bad_index))
    return frame[~mask], frame[mask], findings


def _where(source: object) -> str:
    text = str(source)
    head, _, tail = text.rpartition(":")
    return f"line {tail}, " if head and tail.isdigit() else ""


def read_frame(path: str | Path, **csv_options) -> pd.DataFrame:
    """Any CSV or Parquet table (by extension). A file that cannot be parsed is a
    configuration problem (exit 3): these are the pipeline's own outputs."""
    path = Path(path)
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path, **csv_options)
    except (OSError, ValueError) as exc:   # pandas and pyarrow parse errors are ValueErrors
        raise ConfigError(f"cannot read the table {path}: {exc}") from exc


def read(path: str | Path) -> pd.DataFrame:
    """Read a canonical table from CSV or Parquet (by extension)."""
    path = Path(path)
    frame = read_frame(path, dtype=str, keep_default_na=False, na_values=[""])
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ConfigError(f"{path}: not a canonical results table (missing {missing})")
    extra = [c for c in frame.columns if c not in COLUMNS]
    return coerce(frame[list(COLUMNS)]).join(frame[extra]) if extra else coerce(frame)
