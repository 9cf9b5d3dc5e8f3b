"""The bulk path (a whole table normalised per distinct combination of fields)
gives exactly what the row-by-row path gives: the same accepted rows, the same
rejections with the same findings, the same exclusions."""

from __future__ import annotations

import csv
import io

import pandas as pd
from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.ingest import bulk
from pipeline.ingest.normalise import Context
from pipeline.readers import base, results_csv, tabular

HEADER = ["submitter", "system", "system_name", "accelerator", "accelerators_per_node", "nodes",
          "model", "scenario", "value", "units", "division", "availability", "result_id"]

cell = {
    "submitter": st.sampled_from(["AMD", "Dell", ""]),
    "system": st.sampled_from(["8xMI300X_2xEPYC_9575F", "87xMI355X_22xEPYC_9575F", "sysA", ""]),
    "system_name": st.sampled_from(["", "N/A", "PowerEdge XE9680"]),
    "accelerator": st.sampled_from(["AMD Instinct MI300X 192GB HBM3", "AMD Instinct MI355X 288GB HBM3e",
                                    "NVIDIA B200-SXM-180GB", "MI999X", "N/A", ""]),
    "accelerators_per_node": st.sampled_from(["8", "0", "x", "", "8.0"]),
    "nodes": st.sampled_from(["1", "11", "0", ""]),
    "model": st.sampled_from(["llama2-70b-99.9", "llama3_1-8b", "resnet", "nope"]),
    "scenario": st.sampled_from(["Offline", "server", "Interactive", "Batch"]),
    "value": st.one_of(st.sampled_from(["100 282", "103,48", "nan", "inf", "-1", "0", "1e400", "", "١٢"]),
                       st.floats(min_value=0.001, max_value=1e7).map(lambda f: f"{f:.3f}")),
    "units": st.sampled_from(["Tokens/s", "Samples/s", "Latency (ms)", "tokens"]),
    "division": st.sampled_from(["closed", "Open", "other"]),
    "availability": st.sampled_from(["available", "preview", "soon"]),
    "result_id": st.sampled_from(["", "6.0-0001", "TODO"]),
}
rows = st.lists(st.fixed_dictionaries(cell), min_size=1, max_size=25)


def _csv(data: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, HEADER, lineterminator="\n")
    writer.writeheader()
    writer.writerows(data)
    return buf.getvalue()


def _normalised(path, monkeypatch, bulk_path: bool):
    with monkeypatch.context() as m:
        m.setattr(bulk, "BULK_MIN_ROWS", 0)   # small tables too: this test is about the bulk path
        if not bulk_path:
            m.setattr(tabular, "parse_csv", lambda text: None)
        result = results_csv.read(path, "r.csv")
        assert bool(result.tables) == bulk_path
        done = bulk.normalise_result(result, Context(status="verified", round="v6.0"))
    frame = done.frame.reset_index(drop=True)
    return (frame, sorted((d.source, d.outcome, d.codes, d.reason) for d in done.dispositions),
            sorted((f.code, f.file, f.place, f.expected, f.found) for f in done.findings))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # used as a context only
@given(rows)
def test_bulk_and_row_paths_agree(tmp_path_factory, monkeypatch, data):
    path = tmp_path_factory.mktemp("bulk") / "r.csv"
    path.write_text(_csv(data), encoding="utf-8")
    fast = _normalised(path, monkeypatch, bulk_path=True)
    slow = _normalised(path, monkeypatch, bulk_path=False)
    assert fast[1] == slow[1]
    assert fast[2] == slow[2]
    from pipeline.ingest.table import coerce
    pd.testing.assert_frame_equal(coerce(fast[0]), coerce(slow[0]), check_dtype=False)
    assert len(fast[0]) + len(fast[1]) == len(data)


def test_a_quoted_line_break_takes_the_row_path(tmp_path):
    text = _csv([dict(zip(HEADER, ["Dell", "s", "two\nlines", "MI300X", "8", "1", "resnet",
                                   "Offline", "5", "Samples/s", "closed", "available", ""]))])
    assert tabular.parse_csv(text) is None
    path = tmp_path / "r.csv"
    path.write_text(text, encoding="utf-8")
    result = results_csv.read(path, "r.csv")
    assert not result.tables and [r.line for r in result.records] == [2]


def _records_normalised(path, monkeypatch, as_columns: bool):
    """A reader's records (one file per record, as a submission tree gives
    them) normalised in bulk as a RecordTable, or one by one."""
    from dataclasses import replace

    with monkeypatch.context() as m:
        m.setattr(tabular, "parse_csv", lambda text: None)
        m.setattr(bulk, "BULK_MIN_RECORDS", 0 if as_columns else 10**9)
        result = results_csv.read(path, "r.csv")
        result.records = [replace(r, file=f"tree/result{i % 3}/mlperf_log_detail.txt")
                          for i, r in enumerate(result.records)]
        done = bulk.normalise_result(result, Context(status="verified", round="v6.0"))
    return (done.frame.reset_index(drop=True),
            [(d.source, d.outcome, d.codes, d.reason) for d in done.dispositions],
            [(f.code, f.file, f.place, f.expected, f.found, f.severity) for f in done.findings])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # used as a context only
@given(rows)
def test_records_in_bulk_and_one_by_one_agree(tmp_path_factory, monkeypatch, data):
    path = tmp_path_factory.mktemp("records") / "r.csv"
    path.write_text(_csv(data), encoding="utf-8")
    fast = _records_normalised(path, monkeypatch, as_columns=True)
    slow = _records_normalised(path, monkeypatch, as_columns=False)
    assert fast[1] == slow[1]          # the same dispositions, in the same order
    assert fast[2] == slow[2]          # the same findings, in the same order
    from pipeline.ingest.table import coerce
    pd.testing.assert_frame_equal(coerce(fast[0]), coerce(slow[0]), check_dtype=False)
    assert list(fast[0]["source"]) == list(slow[0]["source"])
    assert len(fast[0]) + len(fast[1]) == len(data)


def test_records_in_bulk_keep_each_records_file_and_order(tmp_path, monkeypatch):
    good = dict(zip(HEADER, ["AMD", "8xMI300X_2xEPYC_9575F", "", "AMD Instinct MI300X 192GB HBM3", "8", "1",
                             "llama2-70b-99.9", "Offline", "5.000", "Tokens/s", "closed", "available", ""]))
    data = [good, {**good, "value": "100 282"}, {**good, "model": "llama3_1-8b", "value": "7.5"},
            {**good, "accelerator": "MI999X"}, {**good, "accelerator": "", "accelerators_per_node": "0"},
            {**good, "scenario": "Batch"}, {**good, "value": "12.25", "nodes": "2"}]
    path = tmp_path / "r.csv"
    path.write_text(_csv(data), encoding="utf-8")
    fast = _records_normalised(path, monkeypatch, as_columns=True)
    slow = _records_normalised(path, monkeypatch, as_columns=False)
    assert len(fast[0]) >= 3 and fast[1] and fast[2]    # accepted, rejected and excluded rows, findings
    assert fast[1] == slow[1] and fast[2] == slow[2]
    assert list(fast[0]["source"]) == list(slow[0]["source"])
    assert list(fast[0]["source"])[0] == "tree/result0/mlperf_log_detail.txt:2"
    from pipeline.ingest.table import coerce
    pd.testing.assert_frame_equal(coerce(fast[0]), coerce(slow[0]), check_dtype=False)
