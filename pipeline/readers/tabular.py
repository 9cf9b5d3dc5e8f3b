"""Tabular files read as columns: the bulk form of a reader's records.

A CSV whose lines map one to one onto rows (no blank lines, no line break
inside a quoted field, every row with the header's field count) is parsed in
one go into text columns; :mod:`pipeline.bulk` then takes the per-row
decisions once per distinct combination of descriptive fields. Any other CSV
goes through the row-by-row path, which gives the exact finding for every row.
Both paths produce the same rows.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..normalize import RawRecord


@dataclass
class RawTable:
    """Records of one file as text columns; ``frame`` has canonical field names."""

    file: str
    frame: pd.DataFrame          # canonical field -> text ("" where absent)
    lines: np.ndarray            # 1-based line of each row
    columns: dict[str, str]      # canonical field -> the file's column name (for places)

    def __len__(self) -> int:
        return len(self.frame)

    def record(self, i: int) -> RawRecord:
        """Row ``i`` as a RawRecord, for the row-by-row path."""
        if not hasattr(self, "_lists"):  # columns as Python lists, once: iloc per row is slow
            self._lists = {c: self.frame[c].tolist() for c in self.frame.columns}
        line = int(self.lines[i])
        fields = {k: values[i] for k, values in self._lists.items()}
        places = {k: f"line {line}, column {c}" for k, c in self.columns.items()}
        return RawRecord(self.file, line, fields, places)


def parse_csv(text: str) -> pd.DataFrame | None:
    """All rows as text columns when lines map one to one onto rows, else None."""
    if "\r" in text or "\n\n" in text.rstrip("\n") or not text.strip():
        return None
    data = text.encode("utf-8")
    try:
        frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, engine="pyarrow")
    except Exception:  # any parse problem: the row path reports it precisely
        return None
    newlines = text.count("\n")
    expected = newlines - 1 if text.endswith("\n") else newlines
    if len(frame) != expected or len(frame) == 0:
        return None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame
