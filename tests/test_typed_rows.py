"""Every report's rows are typed (:class:`pipeline.core.model.Row`): one dataclass
per kind of row, its fields the row's columns in order, typed by the one
schema of column types (``model.COLUMN_TYPES``). The JSON, CSV and text
outputs write them exactly as before (the DVC outputs do not change; the
pipeline test checks them byte for byte)."""

from __future__ import annotations

import pytest
import yaml

from conftest import RULES, REPO

from pipeline.analyses import audit, claims, compare, crosscheck, ledger as claims_ledger, partition, scaling
from pipeline.gate import judge as gate
from pipeline.ingest import submissions as ingest, table
from pipeline.output import render
from pipeline.core.findings import Report
from pipeline.core.model import COLUMN_TYPES, LooseRow, Row, plain, row_type, typed_rows


def mistyped(row) -> list[str]:
    """The columns whose value is not of the declared type (none, for a well-built row)."""
    return [c for c, t in row.schema().items() if not isinstance(row[c], t)]

SUBMISSIONS = REPO / "submissions"


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict:
    """Every library entry point's report on the shipped submissions."""
    read = ingest.ingest(RULES, [SUBMISSIONS], root=SUBMISSIONS)
    results = read.table
    split = partition.partition(results)
    folder = tmp_path_factory.mktemp("sets")
    verified, post = folder / "verified.csv", folder / "post.csv"
    split.verified.to_csv(verified, index=False)
    split.post_deadline.to_csv(post, index=False)
    published, _ = crosscheck.load_published(RULES, sorted((REPO / "published").rglob("summary*")))
    return {
        "ResultRow": read.report(),
        "AgreementRow": compare.compare(RULES, results),
        "PartitionRow": split.report(),
        "ScalingRow": scaling.scaling(RULES, results),
        "ClaimRow": claims.check_claims(RULES, claims_ledger.read_ledger(RULES, REPO / "claims.yaml"), results),
        "CrosscheckRow": crosscheck.check(results, published),
        "SuiteRow": audit.audit(RULES, verified, post),
        "GateRow": gate.run(RULES, [SUBMISSIONS / "v6.0" / "Dell" / "v1", SUBMISSIONS / "v6.0" / "AMD" / "v2"],
                            SUBMISSIONS, None, REPO / "params.yaml", cwd=REPO),
    }


@pytest.mark.parametrize("kind", ["ResultRow", "AgreementRow", "PartitionRow", "ScalingRow", "ClaimRow",
                                  "CrosscheckRow", "SuiteRow", "GateRow"])
def test_every_row_is_typed_and_its_values_fit_their_types(reports, kind):
    rows = reports[kind].rows
    assert rows, kind
    for row in rows:
        assert isinstance(row, Row) and type(row).__name__ == kind
        assert list(row) == list(type(row).schema())           # the fields are the columns, in order
        assert mistyped(row) == [], (kind, {c: row[c] for c in mistyped(row)})
        assert all(t is not object for t in type(row).schema().values()), kind   # every column has a type


def test_the_json_document_is_the_rows_written_out(reports):
    for kind, report in reports.items():
        doc = report.to_dict()
        assert doc["rows"] == [plain(r.to_dict()) for r in report.rows], kind
        assert render.as_json(report).count('"rows"') >= 1


def test_a_row_reads_as_a_mapping():
    (row,) = typed_rows("AgreementRow", [{"round": "v6.0", "value": 1.5, "deviation_pct": None}])
    assert row["round"] == "v6.0" and row.get("missing") is None and "value" in row and "x" not in row
    assert dict(row) == {"round": "v6.0", "value": 1.5, "deviation_pct": None}
    assert type(row).schema() == {"round": str, "value": float, "deviation_pct": float | None}
    with pytest.raises(KeyError):
        row["missing"]
    with pytest.raises(AttributeError):      # frozen: a report's rows are what was computed
        row.value = 2.0
    assert row_type("AgreementRow", ("round", "value", "deviation_pct")) is type(row)


def test_a_gate_row_of_a_rejected_input_is_typed_too():
    rows = [{"version": "v6.0/Dell/v2", "file": "submissions/v6.0/Dell/v2/results.csv", "line": 3,
             "outcome": "rejected", "codes": "malformed-number", "submitter": None, "value": None,
             "verdict": None, "label": None, "reason": "value: '100 282'"}]
    (row,) = typed_rows("GateRow", rows)
    assert mistyped(row) == []
    (strict,) = typed_rows("AgreementRow", rows)      # elsewhere a result always has a submitter
    assert "submitter" in mistyped(strict)


def test_a_value_of_the_wrong_type_is_named():
    (row,) = typed_rows("AgreementRow", [{"round": "v6.0", "value": "fast", "nodes": 1.5}])
    assert mistyped(row) == ["value", "nodes"]


def test_columns_that_cannot_be_fields_keep_their_names_and_order():
    record = {"keys": 1, "my value": 2.5, "class": "x", "round": "v6.0"}
    (row,) = typed_rows("PartitionRow", [record])
    assert isinstance(row, LooseRow) and list(row) == list(record) and row["my value"] == 2.5
    assert plain(Report(rows=[row]).to_dict()["rows"]) == [record]
    assert render.as_csv(Report(rows=[row])).splitlines() == ["keys,my value,class,round", "1,2.5,x,v6.0"]


def test_the_canonical_columns_are_typed_as_the_schema_declares():
    schema = yaml.safe_load((REPO / "schemas" / "results.v4.yaml").read_text(encoding="utf-8"))
    python = {"str": str, "int64": int, "Int64": int, "float64": float}
    columns = schema["columns"]
    assert tuple(columns) == table.COLUMNS
    for name, spec in columns.items():
        declared = python[spec["dtype"]] | None if spec.get("nullable") else python[spec["dtype"]]
        assert COLUMN_TYPES[name] == declared, name
