"""``parquet``: ingest and validate read Parquet as well as CSV, the
canonical table's own output included."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from pipeline import readers
from pipeline.cli import cli
from pipeline.ingest.submissions import ingest
from pipeline.readers import parquet
from conftest import RULES

REPO = Path(__file__).resolve().parents[1]
AMD = REPO / "submissions" / "v5.1" / "AMD" / "v1" / "results.csv"   # the results-csv template


def canonical_parquet(tmp_path: Path) -> Path:
    out = tmp_path / "table.parquet"
    done = CliRunner().invoke(cli, ["ingest", str(AMD), "--status", "verified", "--round", "v5.1",
                                    "-o", str(out)])
    assert done.exit_code == 0, done.output
    return out


def test_the_canonical_tables_own_parquet_is_read_back_to_the_same_rows(tmp_path):
    first = canonical_parquet(tmp_path)
    again = tmp_path / "again.parquet"
    done = CliRunner().invoke(cli, ["ingest", str(first), "--status", "verified", "-o", str(again)])
    assert done.exit_code == 0, done.output
    a, b = pd.read_parquet(first), pd.read_parquet(again)
    assert len(a) == len(pd.read_csv(AMD)) == len(b)
    same = [c for c in a.columns if c not in ("source", "file", "line")]   # the place: the file read
    pd.testing.assert_frame_equal(a[same], b[same])
    assert [s.rsplit("/", 1)[-1] for s in b["source"]] == [f"table.parquet:{n}" for n in range(1, len(b) + 1)]


def test_validate_reads_parquet_and_detection_knows_it(tmp_path):
    table = canonical_parquet(tmp_path)
    assert readers.detect(RULES, table) == parquet.NAME
    done = CliRunner().invoke(cli, ["validate", str(table), "--status", "verified"])
    assert done.exit_code == 0, done.output


def test_a_template_table_written_by_anyone_is_read_with_its_row_numbers(tmp_path):
    frame = pd.read_csv(AMD, dtype=str, keep_default_na=False)
    frame.loc[2, "value"] = "fast"
    path = tmp_path / "partner.parquet"
    frame.to_parquet(path)
    report = ingest(RULES, [path], status="verified", round_="v5.1")
    assert len(report.table) == len(frame) - 1
    bad = [f for f in report.findings if f.severity == "error"]
    assert bad and all(f.where.row == 3 for f in bad)   # the table's third row


def test_a_file_that_is_not_parquet_is_a_finding(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(canonical_parquet(tmp_path).read_bytes()[:200])
    result = parquet.read(path, "broken.parquet", RULES)
    assert [f.code for f in result.findings] == ["format-mismatch"] and not list(result.records)


def test_a_missing_column_rejects_every_row(tmp_path):
    frame = pd.read_csv(AMD, dtype=str, keep_default_na=False).drop(columns=["units"])
    path = tmp_path / "short.parquet"
    frame.to_parquet(path)
    result = parquet.read(path, "short.parquet", RULES)
    assert [f.code for f in result.findings] == ["missing-column"]
    assert [d.source for d in result.dispositions] == [f"short.parquet:{n}" for n in range(1, len(frame) + 1)]


def test_nested_values_and_unknown_columns_are_findings(tmp_path):
    frame = pd.read_csv(AMD, dtype=str, keep_default_na=False)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    path = tmp_path / "extra.parquet"
    pq.write_table(table.append_column("colour", pa.array(["red"] * len(frame))), path)
    assert [(f.code, f.severity) for f in parquet.read(path, "x", RULES).findings] == [("unexpected-column", "warning")]
    nested = table.set_column(table.column_names.index("value"), "value",
                              pa.array([[1.0]] * len(frame)))
    pq.write_table(nested, path)
    result = parquet.read(path, "x", RULES)
    assert [f.code for f in result.findings] == ["format-mismatch"] and len(result.dispositions) == len(frame)
