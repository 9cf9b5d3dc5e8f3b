"""Ingest: sealed submissions (or raw files) to the canonical table, every
input row accounted for as accepted, rejected or set aside."""

from __future__ import annotations

import json

from conftest import RULES, DATA, LATE, ON_TIME, UNVERIFIED_FOOTNOTE, read_csv, run, run_json, submit

from pipeline.ingest import table


def test_submit_then_ingest_round_trip(root, tmp_path):
    submit(root, DATA / "results-dell.csv")
    out = tmp_path / "results.csv"
    result = run("ingest", root, "-o", out, expect=0)
    assert result.stdout.splitlines()[-2:] == [
        f"wrote {out}",
        "summary: accepted=2, rejected=0, set_aside=0, verified=2, post_deadline=0, "
        "versions_used=1, versions_superseded=0, findings=0, errors=0"]

    frame = table.read(out)
    assert list(frame.columns) == list(table.COLUMNS)
    rows = frame.to_dict("records")
    assert [r["source"] for r in rows] == ["v6.0/Dell/v1/results-dell.csv:2",
                                           "v6.0/Dell/v1/results-dell.csv:3"]
    first = rows[0]
    assert first["status"] == "verified"
    assert first["submission_version"] == 1
    assert (first["round"], first["submitter"], first["system"]) == (
        "v6.0", "Dell", "PowerEdge_XE9785_8xMI355X")
    assert (first["accelerator"], first["composition"], first["total_accelerators"]) == (
        "MI355X", "MI355X:8", 8)
    assert (first["model"], first["scenario"], first["value"], first["units"]) == (
        "llama2-70b-99", "Server", 100282.0, "Tokens/s")
    # The output table passes the canonical schema as it is.
    accepted, rejected, found = table.validate(RULES, frame)
    assert len(accepted) == 2 and len(rejected) == 0 and found == []


def test_ingest_json_rows_carry_status_version_source_and_label(root, tmp_path):
    submit(root, DATA / "results-dell.csv")
    doc = run_json("ingest", root, "-o", tmp_path / "results.parquet", expect=0)
    assert doc["summary"]["accepted"] == 2 and doc["summary"]["errors"] == 0
    row = doc["rows"][0]
    assert row["status"] == "verified" and row["label"] == "verified" and row["footnote"] == ""
    assert row["submission_version"] == 1
    assert row["source"] == "v6.0/Dell/v1/results-dell.csv:2"
    assert len(table.read(tmp_path / "results.parquet")) == 2


def test_ingest_of_a_submitter_folder_reads_only_that_submitter(root, tmp_path):
    submit(root, DATA / "results-dell.csv")
    hpe = tmp_path / "hpe.csv"
    hpe.write_text((DATA / "results-dell.csv").read_text().replace("Dell,", "HPE,"))
    submit(root, hpe, submitter="HPE")
    out = tmp_path / "out.csv"
    run("ingest", root / "v6.0" / "HPE", "--root", root, "-o", out, expect=0)
    assert {r["submitter"] for r in read_csv(out)} == {"HPE"}
    assert read_csv(out)[0]["source"] == "v6.0/HPE/v1/hpe.csv:2"


def test_newest_version_is_used_and_older_listed_as_superseded(root, tmp_path):
    submit(root, DATA / "results-dell.csv")
    corrected = tmp_path / "results-dell.csv"
    corrected.write_text((DATA / "results-dell.csv").read_text().replace("100282", "100300"))
    submit(root, corrected)

    out, versions = tmp_path / "out.csv", tmp_path / "versions.csv"
    run("ingest", root, "-o", out, "--versions-out", versions, expect=0)
    rows = read_csv(out)
    assert {r["submission_version"] for r in rows} == {"2"}
    assert [r["value"] for r in rows] == ["100300.0", "88000.0"]
    listed = {r["version"]: r for r in read_csv(versions)}
    assert listed["1"]["used"] == "False" and listed["1"]["path"] == "v6.0/Dell/v1"
    assert listed["2"]["used"] == "True" and listed["2"]["supersedes"] == "1"
    assert listed["2"]["status"] == "verified"


def test_a_named_version_folder_is_used_even_when_superseded(root, tmp_path):
    submit(root, DATA / "results-dell.csv")
    submit(root, DATA / "results-dell.csv")
    out = tmp_path / "out.csv"
    run("ingest", root / "v6.0" / "Dell" / "v1", "--root", root, "-o", out, expect=0)
    assert {r["submission_version"] for r in read_csv(out)} == {"1"}


def test_verified_after_the_deadline_goes_to_the_post_deadline_set(root, tmp_path):
    submit(root, DATA / "results-dell.csv", submitted_at=LATE)
    out, verified, post = tmp_path / "out.csv", tmp_path / "v.csv", tmp_path / "p.csv"
    doc = run_json("ingest", root, "-o", out, expect=1)
    [f] = [f for f in doc["findings"] if f["code"] == "verified-after-deadline"]
    assert f["file"] == f"{root.as_posix()}/v6.0/Dell/v1/manifest.yaml"   # under the root as named
    assert f["place"] == "line 4, key submitted_at"
    assert f["expected"].startswith("at or before 2026-02-27T13:00:00-08:00")
    assert f["found"] == LATE
    assert doc["summary"]["verified"] == 0 and doc["summary"]["post_deadline"] == 2
    assert {r["status"] for r in doc["rows"]} == {"post-deadline"}
    assert {r["label"] for r in doc["rows"]} == {"unverified"}
    assert {r["footnote"] for r in doc["rows"]} == {UNVERIFIED_FOOTNOTE}

    run("partition", out, "--verified-out", verified, "--post-deadline-out", post, expect=0)
    assert read_csv(verified) == []
    assert [r["source"] for r in read_csv(post)] == ["v6.0/Dell/v1/results-dell.csv:2",
                                                     "v6.0/Dell/v1/results-dell.csv:3"]


def test_declared_post_deadline_is_no_finding(root, tmp_path):
    submit(root, DATA / "results-dell.csv", status="post-deadline", submitted_at=LATE)
    doc = run_json("ingest", root, "-o", tmp_path / "out.csv", expect=0)
    assert doc["findings"] == []
    assert {r["status"] for r in doc["rows"]} == {"post-deadline"}


def test_on_time_verified_is_kept_beside_a_late_one(root, tmp_path):
    """A late 'verified' resubmission is post-deadline: it must not hide the
    reviewed on-time result, and neither may land in the other's set."""
    submit(root, DATA / "results-dell.csv", submitted_at=ON_TIME)
    late = tmp_path / "results-dell.csv"
    late.write_text((DATA / "results-dell.csv").read_text().replace("100282", "101000"))
    submit(root, late, submitted_at=LATE)
    doc = run_json("ingest", root, "-o", tmp_path / "out.csv", expect=1)
    by_status = {(r["status"], r["scenario"]): r["value"] for r in doc["rows"]}
    assert by_status[("verified", "Server")] == 100282.0
    assert by_status[("post-deadline", "Server")] == 101000.0


def test_raw_file_needs_status(tmp_path):
    result = run("ingest", DATA / "results-dell.csv", "--round", "v6.0", "-o",
                 tmp_path / "out.csv", expect=2)
    assert "--status" in result.stderr
    assert not (tmp_path / "out.csv").exists()


def test_raw_file_without_a_round_needs_round(tmp_path):
    result = run("ingest", DATA / "results-dell.csv", "--status", "verified", "-o",
                 tmp_path / "out.csv", expect=2)
    assert "--round" in result.stderr


def test_raw_file_rows_are_rejected_with_their_code(tmp_path):
    mixed = tmp_path / "mixed.csv"
    good = (DATA / "results-dell.csv").read_text()
    bad = (DATA / "results-value-with-space.csv").read_text().splitlines()[1]
    mixed.write_text(good + bad + "\n")
    out, rejected = tmp_path / "out.csv", tmp_path / "rejected.csv"
    result = run("ingest", mixed, "--status", "verified", "--round", "v6.0", "-o", out,
                 "--rejected-out", rejected, expect=1)
    assert len(read_csv(out)) == 2
    [r] = read_csv(rejected)
    assert (r["source"], r["outcome"], r["codes"]) == (f"{mixed.as_posix()}:4", "rejected",
                                                       "malformed-number")
    assert f"{mixed.as_posix()}: line 4, column value: [malformed-number]" in result.stderr


def test_exit_zero_records_findings_and_exits_0(tmp_path):
    findings = tmp_path / "findings.json"
    run("ingest", DATA / "results-value-with-space.csv", "--status", "verified", "--round", "v6.0",
        "-o", tmp_path / "out.csv", "--findings-out", findings, "--exit-zero", expect=0)
    assert [f["code"] for f in json.loads(findings.read_text())] == ["malformed-number"]


def test_rows_that_share_a_key_are_all_rejected(tmp_path):
    """Two values for one result: nothing says which is right, so neither is taken."""
    dup = tmp_path / "dup.csv"
    lines = (DATA / "results-dell.csv").read_text().splitlines()
    dup.write_text("\n".join(lines + [lines[1].replace("100282", "100999")]) + "\n")
    out, rejected = tmp_path / "out.csv", tmp_path / "rejected.csv"
    run("ingest", dup, "--status", "verified", "--round", "v6.0", "-o", out,
        "--rejected-out", rejected, expect=1)
    assert [r["value"] for r in read_csv(out)] == ["88000.0"]
    assert sorted((r["source"], r["codes"]) for r in read_csv(rejected)) == [
        (f"{dup.as_posix()}:2", "duplicate-row"), (f"{dup.as_posix()}:4", "duplicate-row")]


def test_validate_writes_nothing_and_reports(root, tmp_path):
    submit(root, DATA / "results-dell.csv")
    before = sorted(p for p in tmp_path.rglob("*"))
    result = run("validate", root, expect=0)
    assert result.stdout.splitlines()[0].split()[:3] == ["status", "round", "submitter"]
    assert result.stdout.splitlines()[-1].endswith("findings=0, errors=0")
    assert sorted(p for p in tmp_path.rglob("*")) == before
