"""The submissions store: `mlrepro submit` seals immutable versions; reading a
version checks every file against its manifest."""

from __future__ import annotations

import hashlib
import shutil

import pytest
import yaml

from conftest import DATA, LATE, ON_TIME, read_csv, run, run_json, submit


def manifest_of(root, round_="v6.0", submitter="Dell", version=1) -> dict:
    return yaml.safe_load((root / round_ / submitter / f"v{version}" / "manifest.yaml").read_text())


def snapshot(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# ---- submit ------------------------------------------------------------------------

def test_submit_creates_v1_with_a_sealed_manifest(root):
    source = DATA / "results-dell.csv"
    result = submit(root, source)
    assert result.stdout.splitlines()[0] == f"created {root / 'v6.0' / 'Dell' / 'v1'}"

    v1 = root / "v6.0" / "Dell" / "v1"
    assert sorted(p.name for p in v1.iterdir()) == ["manifest.yaml", "results-dell.csv"]
    assert (v1 / "results-dell.csv").read_bytes() == source.read_bytes()
    m = manifest_of(root)
    assert m["submitter"] == "Dell" and m["round"] == "v6.0" and m["version"] == 1
    assert m["status"] == "verified"
    assert m["submitted_at"] == ON_TIME
    assert "supersedes" not in m
    assert m["files"] == [{"path": "results-dell.csv", "format": "results-csv",
                           "sha256": hashlib.sha256(source.read_bytes()).hexdigest()}]


def test_second_submit_creates_v2_and_never_touches_v1(root, tmp_path):
    submit(root, DATA / "results-dell.csv")
    v1 = root / "v6.0" / "Dell" / "v1"
    before = snapshot(v1)

    corrected = tmp_path / "results.csv"
    corrected.write_text((DATA / "results-dell.csv").read_text().replace("100282", "100300"))
    doc = run_json("submit", corrected, "--submitter", "Dell", "--round", "v6.0",
                   "--status", "verified", "--submitted-at", ON_TIME, "--root", root, expect=0)
    assert doc["summary"]["created"] == "v6.0/Dell/v2"
    assert doc["rows"] == [] and doc["findings"] == []

    m2 = manifest_of(root, version=2)
    assert m2["version"] == 2
    assert m2["supersedes"] == 1
    assert m2["files"][0]["sha256"] == hashlib.sha256(corrected.read_bytes()).hexdigest()
    assert snapshot(v1) == before  # v1 is immutable

    submit(root, corrected)
    assert sorted(p.name for p in (root / "v6.0" / "Dell").iterdir()) == ["v1", "v2", "v3"]
    assert snapshot(v1) == before


def test_submitters_and_rounds_are_versioned_separately(root):
    submit(root, DATA / "results-dell.csv")
    hpe = root.parent / "hpe.csv"
    hpe.write_text((DATA / "results-dell.csv").read_text().replace("Dell,", "HPE,"))
    submit(root, hpe, submitter="HPE")
    assert (root / "v6.0" / "HPE" / "v1" / "manifest.yaml").is_file()
    assert not (root / "v6.0" / "HPE" / "v2").exists()


@pytest.mark.parametrize(("sample", "extra", "code", "found"), [
    ("results-value-with-space.csv", [], "malformed-number", "100 282"),
    ("results-value-with-comma.csv", [], "malformed-number", "103,48"),
    ("results-unknown-accelerator.csv", [], "unknown-accelerator", "AMD Instinct MI999X"),
    # Without its units column the file is no known format; named, it lacks a column.
    ("results-missing-column.csv", [], "unknown-format", "no reader recognises it"),
    ("results-missing-column.csv", ["--input-format", "results-csv"], "missing-column", "'units'"),
])
def test_submit_refuses_a_file_that_does_not_parse(root, sample, extra, code, found):
    result = submit(root, DATA / sample, "Dell", "verified", ON_TIME, "v6.0", *extra, expect=1)
    assert f"[{code}]" in result.stderr
    assert found in result.stderr
    assert "nothing written" in result.stdout
    assert list(root.iterdir()) == []  # not even the round folder


def test_submit_refusal_in_json_lists_the_findings(root):
    doc = run_json("submit", DATA / "results-value-with-space.csv", "--submitter", "Dell",
                   "--round", "v6.0", "--status", "verified", "--submitted-at", ON_TIME,
                   "--root", root, expect=1)
    assert doc["summary"]["created"] is None
    [f] = doc["findings"]
    assert f["code"] == "malformed-number"
    assert f["file"] == "results-value-with-space.csv"
    assert f["place"] == "line 2, column value"
    assert f["found"] == "100 282"
    assert list(root.iterdir()) == []


def test_submit_refuses_rows_of_another_submitter(root):
    result = submit(root, DATA / "results-dell.csv", submitter="HPE", expect=1)
    assert "[submitter-mismatch]" in result.stderr
    assert list(root.iterdir()) == []


@pytest.mark.parametrize("when", ["2026-02-20T10:00:00", "2026-02-20"])
def test_submitted_at_without_time_zone_is_a_usage_error(root, when):
    result = submit(root, DATA / "results-dell.csv", submitted_at=when, expect=2)
    assert "time zone" in result.stderr
    assert list(root.iterdir()) == []


@pytest.mark.parametrize("args", [
    ["--submitted-at", "yesterday"],
    ["--status", "maybe"],
    ["--input-format", "excel"],
    ["--round", "6.0"],
    ["--submitter", "../Dell"],
])
def test_submit_usage_errors(root, args):
    base = {"--submitter": "Dell", "--round": "v6.0", "--status": "verified",
            "--submitted-at": ON_TIME}
    base.update(dict(zip(args[::2], args[1::2])))
    flat = [x for kv in base.items() for x in kv]
    result = run("submit", DATA / "results-dell.csv", *flat, "--root", root, expect=2)
    assert "Usage:" in result.stderr
    assert list(root.iterdir()) == []


def test_submit_a_missing_file_is_a_usage_error(root):
    run("submit", root / "nope.csv", "--submitter", "Dell", "--round", "v6.0",
        "--status", "verified", "--root", root, expect=2)
    assert list(root.iterdir()) == []


# ---- sealing: what reading a version checks --------------------------------------

def test_a_file_edited_after_sealing_is_rejected(root, tmp_path):
    submit(root, DATA / "results-dell.csv")
    sealed = root / "v6.0" / "Dell" / "v1" / "results-dell.csv"
    sealed.write_text(sealed.read_text().replace("100282", "104282"))

    out, rejected = tmp_path / "results.csv", tmp_path / "rejected.csv"
    result = run("ingest", root, "-o", out, "--rejected-out", rejected, expect=1)
    assert "[hash-mismatch]" in result.stderr
    assert read_csv(out) == []
    assert read_csv(rejected) == [
        {"source": "v6.0/Dell/v1/results-dell.csv:2", "outcome": "rejected",
         "codes": "hash-mismatch", "reason": "changed after it was sealed: its rows are rejected"},
        {"source": "v6.0/Dell/v1/results-dell.csv:3", "outcome": "rejected",
         "codes": "hash-mismatch", "reason": "changed after it was sealed: its rows are rejected"},
    ]


def test_hash_mismatch_finding_names_both_digests(root, tmp_path):
    submit(root, DATA / "results-dell.csv")
    sealed = root / "v6.0" / "Dell" / "v1" / "results-dell.csv"
    expected = hashlib.sha256(sealed.read_bytes()).hexdigest()
    sealed.write_text(sealed.read_text() + "\n")
    doc = run_json("validate", root, expect=1)
    [f] = [f for f in doc["findings"] if f["code"] == "hash-mismatch"]
    assert f["file"] == "v6.0/Dell/v1/results-dell.csv"
    assert f["expected"] == expected
    assert f["found"] == hashlib.sha256(sealed.read_bytes()).hexdigest()


@pytest.mark.parametrize("path", [
    "../../../outside.csv",        # leaves the root
    "../v1/results-dell.csv",      # comes back in, but a manifest path never holds ..
    "/etc/hostname",               # absolute
])
def test_a_manifest_path_with_dotdot_is_a_path_escape(root, tmp_path, path):
    submit(root, DATA / "results-dell.csv")
    mpath = root / "v6.0" / "Dell" / "v1" / "manifest.yaml"
    m = yaml.safe_load(mpath.read_text())
    shutil.copyfile(DATA / "results-dell.csv", root / "outside.csv")
    m["files"][0]["path"] = path
    mpath.write_text(yaml.safe_dump(m, sort_keys=False))

    out, rejected = tmp_path / "results.csv", tmp_path / "rejected.csv"
    doc = run_json("ingest", root, "-o", out, "--rejected-out", rejected, expect=1)
    escapes = [f for f in doc["findings"] if f["code"] == "path-escape"]
    assert len(escapes) == 1
    assert escapes[0]["found"] == path
    assert escapes[0]["place"] == "key files.0.path"
    assert escapes[0]["expected"] == "a path inside the version folder"
    assert doc["rows"] == [] and read_csv(out) == []
    assert [r["codes"] for r in read_csv(rejected)] == ["path-escape"]


def test_a_symlink_leaving_the_version_is_a_path_escape(root, tmp_path):
    submit(root, DATA / "results-dell.csv")
    v1 = root / "v6.0" / "Dell" / "v1"
    outside = tmp_path / "outside.csv"
    shutil.copyfile(v1 / "results-dell.csv", outside)
    (v1 / "results-dell.csv").unlink()
    (v1 / "results-dell.csv").symlink_to(outside)
    doc = run_json("validate", root, expect=1)
    assert "path-escape" in {f["code"] for f in doc["findings"]}


@pytest.mark.parametrize(("key", "value"), [
    ("submitter", "HPE"), ("round", "v5.1"), ("version", 2)])
def test_a_manifest_disagreeing_with_its_folder_is_a_mismatch(root, key, value):
    submit(root, DATA / "results-dell.csv")
    mpath = root / "v6.0" / "Dell" / "v1" / "manifest.yaml"
    m = yaml.safe_load(mpath.read_text())
    m[key] = value
    mpath.write_text(yaml.safe_dump(m, sort_keys=False))
    doc = run_json("validate", root, expect=1)
    [f] = [f for f in doc["findings"] if f["code"] == "manifest-mismatch"]
    assert f["place"] == f"key {key}"
    assert f["file"] == "v6.0/Dell/v1/manifest.yaml"
    assert f["found"] == repr(value)


def test_a_version_without_manifest_has_its_rows_rejected(root, tmp_path):
    v1 = root / "v6.0" / "Dell" / "v1"
    v1.mkdir(parents=True)
    shutil.copyfile(DATA / "results-dell.csv", v1 / "results.csv")
    rejected = tmp_path / "rejected.csv"
    result = run("ingest", root, "-o", tmp_path / "out.csv", "--rejected-out", rejected, expect=1)
    assert "[manifest-missing]" in result.stderr
    assert [(r["source"], r["codes"]) for r in read_csv(rejected)] == [
        ("v6.0/Dell/v1/results.csv:2", "manifest-missing"),
        ("v6.0/Dell/v1/results.csv:3", "manifest-missing")]


def test_a_manifest_that_breaks_its_schema_is_invalid(root):
    submit(root, DATA / "results-dell.csv")
    mpath = root / "v6.0" / "Dell" / "v1" / "manifest.yaml"
    m = yaml.safe_load(mpath.read_text())
    m["status"] = "official"
    mpath.write_text(yaml.safe_dump(m, sort_keys=False))
    doc = run_json("validate", root, expect=1)
    assert [f["place"] for f in doc["findings"] if f["code"] == "manifest-invalid"] == ["key status"]


def test_an_unlisted_file_is_a_warning_not_a_failure(root):
    submit(root, DATA / "results-dell.csv")
    (root / "v6.0" / "Dell" / "v1" / "notes.txt").write_text("added later\n")
    doc = run_json("validate", root, expect=0)
    [f] = doc["findings"]
    assert (f["code"], f["severity"]) == ("unlisted-file", "warning")


def test_a_late_verified_submission_is_sealed_as_declared(root):
    # submit records what was declared; the deadline is judged when read.
    submit(root, DATA / "results-dell.csv", submitted_at=LATE)
    m = manifest_of(root)
    assert m["status"] == "verified" and m["submitted_at"] == LATE
