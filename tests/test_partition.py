"""Partition: the verified and post-deadline sets, strictly apart."""

from __future__ import annotations

import pandas as pd
from hypothesis import given, strategies as st

from conftest import UNVERIFIED_FOOTNOTE, canonical_row, read_csv, run, run_json, write_canonical

from pipeline.analyses import partition
from pipeline.ingest import table


def rows_with(statuses: list[str]) -> list[dict]:
    return [canonical_row(submitter=f"S{i % 3}", system=f"sys{i}", status=s,
                          file=f"v6.0/S{i % 3}/v1/results.csv", line=i + 2)
            for i, s in enumerate(statuses)]


def test_cli_splits_by_status_and_labels_the_post_deadline_set(tmp_path):
    results = write_canonical(tmp_path / "results.csv",
                              rows_with(["verified", "post-deadline", "verified", "post-deadline"]))
    verified, post = tmp_path / "verified.csv", tmp_path / "post.csv"
    result = run("partition", results, "--verified-out", verified, "--post-deadline-out", post,
                 expect=0)
    assert result.stdout.splitlines() == [
        f"wrote {verified} (2 verified)",
        f"wrote {post} (2 unverified: Result not verified by MLCommons Association.)",
        "unverified: Result not verified by MLCommons Association.",
        "summary: verified=2, post_deadline=2, rejected=0, findings=0, errors=0",
    ]
    v, p = read_csv(verified), read_csv(post)
    assert [r["system"] for r in v] == ["sys0", "sys2"]
    assert [r["system"] for r in p] == ["sys1", "sys3"]
    assert {(r["status"], r["label"], r["footnote"]) for r in v} == {("verified", "verified", "")}
    assert {(r["status"], r["label"], r["footnote"]) for r in p} == {
        ("post-deadline", "unverified", UNVERIFIED_FOOTNOTE)}
    # the outputs are still canonical tables (plus label and footnote)
    assert list(table.read(verified).columns) == list(table.COLUMNS) + ["label", "footnote"]


def test_cli_json_rows_are_both_sets(tmp_path):
    results = write_canonical(tmp_path / "results.csv", rows_with(["post-deadline", "verified"]))
    doc = run_json("partition", results, "--verified-out", tmp_path / "v.csv",
                   "--post-deadline-out", tmp_path / "p.csv", expect=0)
    assert doc["summary"] == {"verified": 1, "post_deadline": 1, "rejected": 0,
                              "findings": 0, "errors": 0}
    assert [(r["system"], r["label"]) for r in doc["rows"]] == [("sys1", "verified"),
                                                                ("sys0", "unverified")]


def test_a_row_without_a_valid_status_goes_to_neither_set_located_at_its_line():
    """In memory: a table read from a CSV file names the file's line (the
    header is line 1), any other table its row."""
    frame = table.to_frame(rows_with(["verified", "post-deadline"])).assign(status=["verified", "pending"])
    report = partition.partition(frame, "results.csv")
    [f] = report.findings
    assert (f.code, f.found, f.where.path, f.where.line, f.where.column) == (
        "invalid-choice", "pending", "results.csv", 3, "status")
    assert f.message.endswith("(the result at v6.0/S1/v1/results.csv:3)")
    assert list(report.verified["system"]) == ["sys0"] and report.post_deadline.empty
    assert report.report().summary == {"verified": 1, "post_deadline": 0, "rejected": 1}
    [f] = partition.partition(frame, "results.parquet").findings
    assert (f.where.line, f.where.row) == (None, 2)


def test_an_agreement_table_can_be_partitioned_too(tmp_path):
    """compare's output carries status: the partition splits it the same way."""
    results = write_canonical(tmp_path / "results.csv", [
        canonical_row(), canonical_row(submitter="Dell", system="D1", value=101000.0),
        canonical_row(submitter="HPE", system="H1", value=99000.0, status="post-deadline")])
    agreement = tmp_path / "agreement.csv"
    run("compare", results, "-o", agreement, expect=0)
    verified, post = tmp_path / "v.csv", tmp_path / "p.csv"
    run("partition", agreement, "--verified-out", verified, "--post-deadline-out", post, expect=0)
    assert [r["system"] for r in read_csv(verified)] == ["D1"]
    assert [(r["system"], r["label"]) for r in read_csv(post)] == [("H1", "unverified")]


statuses = st.lists(st.sampled_from(["verified", "post-deadline"]), max_size=40)


@given(statuses)
def test_every_row_is_in_exactly_one_set(status_list):
    frame = table.to_frame(rows_with(status_list))
    report = partition.partition(frame)
    verified = list(report.verified["source"])
    post = list(report.post_deadline["source"])
    assert sorted(verified + post) == sorted(frame["source"])
    assert not set(verified) & set(post)
    assert (report.verified["status"] == "verified").all()
    assert (report.post_deadline["status"] == "post-deadline").all()
    assert (report.post_deadline["label"] == "unverified").all()
    assert (report.post_deadline["footnote"] == UNVERIFIED_FOOTNOTE).all()
    assert report.findings == []


@given(st.lists(st.sampled_from(["verified", "post-deadline", "pending", "", "Verified"]),
                min_size=1, max_size=30))
def test_no_post_deadline_or_unknown_row_reaches_the_verified_set(status_list):
    frame = pd.DataFrame(rows_with(status_list))
    report = partition.partition(frame)
    verified = set(report.verified["source"])
    for row in frame.to_dict("records"):
        in_verified = row["source"] in verified
        in_post = row["source"] in set(report.post_deadline["source"])
        assert in_verified == (row["status"] == "verified")
        assert in_post == (row["status"] == "post-deadline")
    bad = sum(s not in ("verified", "post-deadline") for s in status_list)
    assert [f.code for f in report.findings] == ["invalid-choice"] * bad
    assert len(report.verified) + len(report.post_deadline) + bad == len(frame)
