"""The one normaliser: every record of a file accepted, excluded or rejected
exactly once, in the file's order; each resolver asked once per distinct
input; findings placed where their field sits, under the submissions root
as the user named it."""

from __future__ import annotations

import csv
import io
import os

import pandas as pd
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import normalised, RULES, ON_TIME, results_row, run, submit, write_results_csv

from pipeline.core.model import Source
from pipeline.ingest import normalise, resolve
from pipeline.ingest.normalise import Context
from pipeline.ingest.submissions import ingest
from pipeline.readers import results_csv

HEADER = ["submitter", "system", "system_name", "accelerator", "accelerators_per_node", "nodes",
          "model", "scenario", "value", "units", "division", "availability", "result_id"]

cell = {
    "submitter": st.sampled_from(["AMD", "Dell", " Dell ", ""]),
    "system": st.sampled_from(["8xMI300X_2xEPYC_9575F", "87xMI355X_22xEPYC_9575F", "sysA", ""]),
    "system_name": st.sampled_from(["", "N/A", "PowerEdge XE9680"]),
    "accelerator": st.sampled_from(["AMD Instinct MI300X 192GB HBM3", "AMD Instinct MI355X 288GB HBM3e",
                                    "NVIDIA B200-SXM-180GB", "MI999X", "N/A", ""]),
    "accelerators_per_node": st.sampled_from(["8", "0", "x", "", "8.0"]),
    "nodes": st.sampled_from(["1", "11", "0", ""]),
    "model": st.sampled_from(["llama2-70b-99.9", "llama3_1-8b", "resnet", "nope"]),
    "scenario": st.sampled_from(["Offline", "server", "Interactive", "Batch"]),
    "value": st.one_of(st.sampled_from(["100 282", "103,48", "nan", "inf", "-1", "0", "1e400", "", "١٢", " 5.5"]),
                       st.floats(min_value=0.001, max_value=1e7).map(lambda f: f"{f:.3f}")),
    "units": st.sampled_from(["Tokens/s", "Samples/s", "Latency (ms)", "tokens"]),
    "division": st.sampled_from(["closed", "Open", "other"]),
    "availability": st.sampled_from(["available", "preview", "soon"]),
    "result_id": st.sampled_from(["", "6.0-0001", "TODO"]),
}


def _csv(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, HEADER, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _normalised(path):
    return normalised(results_csv.read(path, "r.csv", RULES), Context(status="verified", round="v6.0"))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.fixed_dictionaries(cell), min_size=1, max_size=30))
def test_every_row_is_accepted_excluded_or_rejected_once(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("rows") / "r.csv"
    path.write_text(_csv(rows), encoding="utf-8")
    done = _normalised(path)
    lines = [f"r.csv:{n}" for n in range(2, len(rows) + 2)]
    outcomes = list(done.frame["source"]) + [d.source for d in done.dispositions]
    assert sorted(outcomes, key=lambda s: int(s.split(":")[1])) == lines
    assert list(done.frame["source"]) == sorted(done.frame["source"], key=lambda s: int(s.split(":")[1]))
    for d in done.dispositions:   # a rejected row is rejected for findings placed on its own line
        if d.outcome == "rejected":
            errors = [f.code for f in done.findings if f.severity == "error" and f.where.line == int(d.source[6:])]
            assert errors and set(errors) <= set(d.codes.split(","))   # (a warning many rows share is said once)
            assert set(d.codes.split(",")) <= {f.code for f in done.findings}
    assert all(f.file == "r.csv" and f.where.line and f.where.column for f in done.findings)
    for row, value in zip(done.frame.itertuples(), done.frame["value"]):
        text = rows[int(row.source[6:]) - 2]["value"]
        assert value == float(text) > 0


def test_a_repeated_value_is_resolved_once(tmp_path, monkeypatch):
    """A file of many rows with few distinct descriptive values asks each
    resolver once per distinct input (of its submission), not once per row."""
    calls: dict[str, int] = {}

    def counted(name):
        real = getattr(resolve, name)

        def call(*args):
            calls[name] = calls.get(name, 0) + 1
            return real(*args)
        monkeypatch.setattr(resolve, name, call)

    for name in ("resolve_accelerators", "resolve_benchmark", "resolve_submitter", "resolve_round"):
        counted(name)
    systems = ["8xMI355X_2xEPYC_9575F", "16xMI355X_4xEPYC_9575F"]
    rows = [results_row(system=systems[i % 2], nodes=str(1 + i % 2), value=f"{1000 + i}.5",
                        scenario=("Server", "Offline")[i // 2 % 2]) for i in range(400)]
    path = write_results_csv(tmp_path / "r.csv", rows)
    done = _normalised(path)
    assert len(done.frame) == 400 and not done.dispositions
    assert calls == {"resolve_accelerators": 2, "resolve_benchmark": 2, "resolve_submitter": 1,
                     "resolve_round": 1}
    assert sorted(set(done.frame["value"])) == [1000.5 + i for i in range(400)]


def test_many_rows_are_all_accounted_for_in_the_files_order(tmp_path):
    """A large file at a small scale: good rows, rows a resolver rejects, CPU-only
    rows and a result stated twice; accepted + rejected + excluded = rows, the
    table in the file's order, each row's source its own line."""
    rows = []
    for i in range(3000):
        row = results_row(system=f"Dell_8xMI355X_2xEPYC_{i % 97}", value=f"{50000 + i}",
                          result_id=f"6.0-{i:05d}", round="v6.0")
        if i % 101 == 7:
            row["value"] = "100 282"                 # malformed
        elif i % 211 == 3:   # CPU only: excluded (its system id names no accelerator)
            row.update(system=f"Dell_2xEPYC_{i % 97}", accelerator="", accelerators_per_node="0")
        rows.append(row)
    rows.append(dict(rows[0]))   # the first result again: both copies rejected
    path = write_results_csv(tmp_path / "many.csv", rows)
    report = ingest(RULES, [path], status="verified")
    outcome = report.dispositions_frame()["outcome"].value_counts().to_dict()
    malformed = sum(1 for i in range(3000) if i % 101 == 7)
    cpu = sum(1 for i in range(3000) if i % 101 != 7 and i % 211 == 3)
    assert outcome == {"rejected": malformed + 2, "set-aside": cpu}
    assert len(report.table) + malformed + 2 + cpu == len(rows)
    lines = [int(s.rsplit(":", 1)[1]) for s in report.table["source"]]
    assert lines == sorted(lines) and len(set(lines)) == len(lines)
    assert all(report.table["value"] == [float(rows[n - 2]["value"]) for n in lines])
    assert report.table["result_id"].nunique() == len(report.table)


def test_a_csv_is_read_as_a_stream(tmp_path):
    """A CSV's records are read once, as they are parsed (never held as a
    list of rows); the file's round is known once they are read."""
    path = write_results_csv(tmp_path / "r.csv", [results_row(round="v6.0"), results_row(round="v6.0")])
    result = results_csv.read(path, "r.csv", RULES)
    assert not isinstance(result.records, list) and result.round is None
    assert [r.line for r in result.records] == [2, 3]
    assert result.round == "v6.0" and list(result.records) == []


def test_a_warning_many_rows_share_is_said_once(tmp_path):
    from conftest import REAL

    report = ingest(RULES, [REAL / "v5.1-checker-summary.csv"], status="verified")
    keys = [(f.code, f.file, f.where.column, f.expected, f.found) for f in report.findings if f.severity == "warning"]
    assert len(keys) == len(set(keys))


# ---- where a finding says it is -----------------------------------------------------------

def _bad_version(root):
    """A sealed Dell v1 of v6.0 with a column the template does not know: a
    warning on line 1 of its file, and two accepted rows."""
    rows = [dict(results_row(), comment="x"), dict(results_row(scenario="Offline", value="110000"), comment="y")]
    source = write_results_csv(root.parent / "dell.csv", rows)
    submit(root, source, "Dell", "verified", ON_TIME)


def test_a_file_under_a_root_is_named_under_the_root_as_given(root, monkeypatch):
    _bad_version(root)
    monkeypatch.chdir(root.parent)
    report = ingest(RULES, [root.relative_to(root.parent)])
    [f] = [f for f in report.findings if f.code == "unexpected-column"]
    assert f.where == Source("v6.0/Dell/v1/dell.csv", 1, column="comment", root="submissions")
    assert f.file == "submissions/v6.0/Dell/v1/dell.csv"
    assert set(report.table["source"]) == {"v6.0/Dell/v1/dell.csv:2", "v6.0/Dell/v1/dell.csv:3"}


def test_a_root_given_by_its_absolute_path_names_files_by_that_path(root):
    _bad_version(root)
    report = ingest(RULES, [root])
    [f] = [f for f in report.findings if f.code == "unexpected-column"]
    assert f.file == f"{root.as_posix()}/v6.0/Dell/v1/dell.csv" and os.path.isabs(f.file)
    assert set(report.table["source"]) == {"v6.0/Dell/v1/dell.csv:2", "v6.0/Dell/v1/dell.csv:3"}


def test_a_file_given_directly_keeps_its_path(tmp_path):
    path = write_results_csv(tmp_path / "r.csv", [dict(results_row(), comment="x")])
    doc = run("ingest", path, "--status", "verified", "--round", "v6.0", "--format", "json", expect=0)
    import json

    [f] = json.loads(doc.output)["findings"]
    assert (f["file"], f["line"], f["column"]) == (path.as_posix(), 1, "comment")


def test_the_table_is_built_with_the_canonical_types(tmp_path):
    from pipeline.ingest import table

    path = write_results_csv(tmp_path / "r.csv", [results_row(), results_row(scenario="Offline")])
    frame = _normalised(path).frame
    assert list(frame.columns) == list(table.COLUMNS)
    assert all(frame[c].dtype == table.dtype(c) for c in table.COLUMNS)
    pd.testing.assert_frame_equal(frame, table.coerce(frame))
