"""The submissions store: `mlrepro submit` seals immutable versions; reading a
version checks every file against its manifest."""

from __future__ import annotations

import hashlib
import shutil

import pytest
import yaml

from conftest import RULES, DATA, LATE, ON_TIME, read_csv, run, run_json, submit


def manifest_of(root, round_="v6.0", submitter="Dell", version=1) -> dict:
    return yaml.safe_load((root / round_ / submitter / f"v{version}" / "manifest.yaml").read_text())


def snapshot(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# ---- submit ------------------------------------------------------------------------

def test_submit_creates_v1_with_a_sealed_manifest(root):
    source = DATA / "results-dell.csv"
    result = submit(root, source)
    assert result.stdout.splitlines()[0] == f"created {root / 'v6.0' / 'Dell' / 'v1'} (verified)"

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
                   "--status", "verified", "--submitted-at", ON_TIME, "--root", root, "--force", expect=0)
    assert doc["summary"]["created"] == "v6.0/Dell/v2"
    # judged as the gate judges it: no AMD reference in this root
    assert {r["verdict"] for r in doc["rows"]} == {"no-reference"}
    # v6.0's deadline is past: forced, submit seals with a warning on the version it sealed
    late = doc["findings"][0]
    assert (late["code"], late["severity"]) == ("verified-after-deadline", "warning")
    assert late["file"] == f"{root.as_posix()}/v6.0/Dell/v2/manifest.yaml"

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
    # Without its units column the file is reported against the format it most resembles.
    ("results-missing-column.csv", [], "missing-column", "no column units"),
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
    assert f["file"] == (DATA / "results-value-with-space.csv").as_posix()   # as it was given
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
    assert f["file"] == f"{root.as_posix()}/v6.0/Dell/v1/results-dell.csv"   # under the root as given
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
    assert escapes[0]["place"] == "line 7, key files.0.path"
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
    assert f["place"] == f"line {list(m).index(key) + 1}, key {key}"
    assert f["file"] == f"{root.as_posix()}/v6.0/Dell/v1/manifest.yaml"
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


def test_a_row_the_reader_refuses_in_a_version_without_manifest_keeps_its_reason(root, tmp_path):
    """No row of an unsealed version disappears: one with a field too many is
    rejected by the reader, the others for the missing manifest."""
    v1 = root / "v6.0" / "Dell" / "v1"
    v1.mkdir(parents=True)
    lines = (DATA / "results-dell.csv").read_text().splitlines()
    (v1 / "results.csv").write_text("\n".join([lines[0], lines[1] + ",extra", lines[2]]) + "\n")
    rejected = tmp_path / "rejected.csv"
    run("ingest", root, "-o", tmp_path / "out.csv", "--rejected-out", rejected, expect=1)
    assert [(r["source"], r["codes"]) for r in read_csv(rejected)] == [
        ("v6.0/Dell/v1/results.csv:2", "format-mismatch"),
        ("v6.0/Dell/v1/results.csv:3", "manifest-missing")]

def test_a_manifest_that_breaks_its_schema_is_invalid(root):
    submit(root, DATA / "results-dell.csv")
    mpath = root / "v6.0" / "Dell" / "v1" / "manifest.yaml"
    m = yaml.safe_load(mpath.read_text())
    m["status"] = "official"
    mpath.write_text(yaml.safe_dump(m, sort_keys=False))
    doc = run_json("validate", root, expect=1)
    assert [f["place"] for f in doc["findings"] if f["code"] == "manifest-invalid"] == ["line 5, key status"]


def test_a_merge_key_in_a_manifest_is_refused_as_anchors_are(root):
    """``<<: {status: verified}`` would set the status as surely as an alias:
    refused at its line, before the manifest is read."""
    submit(root, DATA / "results-dell.csv", "Dell", "post-deadline", LATE)
    mpath = root / "v6.0" / "Dell" / "v1" / "manifest.yaml"
    text = mpath.read_text().replace("status: post-deadline\n", "")
    mpath.write_text(text + "<<: {status: verified}\n")
    assert yaml.safe_load(mpath.read_text())["status"] == "verified"   # what a loader would make of it
    doc = run_json("validate", root, expect=1)
    (found,) = [f for f in doc["findings"] if f["code"] == "manifest-invalid"]
    assert found["place"] == f"line {len(text.splitlines()) + 1}, key <<"
    assert found["found"] == "a merge key (<<)"
    assert doc["summary"]["accepted"] == 0


@pytest.mark.parametrize("reason", ["   ", "\u200b\u200b\u200b\u200b", "\u2060\u00a0\u3164 ", "a\u200b\u200bb"])
def test_a_withdrawal_reason_needs_visible_text(root, reason):
    submit(root, DATA / "results-dell.csv")
    submit(root, DATA / "results-dell.csv", "Dell", "verified", ON_TIME, "v6.0",
           "--withdraw", "8xMI355X:llama2-70b-99:Offline:a rerun is pending")
    mpath = root / "v6.0" / "Dell" / "v2" / "manifest.yaml"
    m = yaml.safe_load(mpath.read_text())
    m["withdraws"][0]["reason"] = reason
    mpath.write_text(yaml.safe_dump(m, sort_keys=False, allow_unicode=True))
    line = next(n for n, text in enumerate(mpath.read_text().splitlines(), 1) if "reason:" in text)
    doc = run_json("validate", root, expect=1)
    (found,) = [f for f in doc["findings"] if f["code"] in ("manifest-invalid", "invisible-character")]
    if reason.isspace():
        assert found["code"] == "manifest-invalid"
        assert found["place"] == f"line {line}, key withdraws.0.reason"
        assert found["expected"] == "a reason of at least 3 visible characters"
    else:   # a hidden character is refused wherever it stands, before the manifest's schema is read
        assert (found["code"], found["place"]) == ("invisible-character", f"line {line}")


def test_an_unlisted_file_is_an_error(root):
    """A sealed version is exactly its listed files."""
    submit(root, DATA / "results-dell.csv")
    (root / "v6.0" / "Dell" / "v1" / "notes.txt").write_text("added later\n")
    doc = run_json("validate", root, expect=1)
    [f] = doc["findings"]
    assert (f["code"], f["file"], f["severity"]) == ("unlisted-file", f"{root.as_posix()}/v6.0/Dell/v1/notes.txt",
                                                     "error")


def test_a_late_verified_submission_is_sealed_as_declared(root):
    # forced, submit records what was declared; the deadline is judged when read.
    submit(root, DATA / "results-dell.csv", submitted_at=LATE)
    m = manifest_of(root)
    assert m["status"] == "verified" and m["submitted_at"] == LATE


# ---- submit for real teams ------------------------------------------------------

def test_concurrent_submits_each_take_the_next_number(root, tmp_path):
    """Eight processes at once (each a console script: the lock is between
    processes): eight versions v1..v8, no error, nothing half-written."""
    import os
    import subprocess

    from conftest import REPO

    count = 8

    sources = []
    for i in range(count):
        path = tmp_path / f"in{i}" / "results.csv"
        path.parent.mkdir()
        path.write_text((DATA / "results-dell.csv").read_text().replace("100282", str(100000 + i)))
        sources.append(path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "MLREPRO_"))}
    procs = [subprocess.Popen([str(REPO / ".venv" / "bin" / "mlrepro"), "submit", str(src),
                               "--submitter", "Dell", "--round", "v6.0", "--status", "post-deadline",
                               "--submitted-at", LATE, "--root", str(root), "--format", "json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for src in sources]
    results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
    assert [code for code, _, _ in results] == [0] * count, [err for _, _, err in results if err]
    import json as json_mod
    created = sorted(json_mod.loads(out)["summary"]["created"] for _, out, _ in results)
    assert created == sorted(f"v6.0/Dell/v{n}" for n in range(1, count + 1))
    folder = root / "v6.0" / "Dell"
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"v{n}" for n in range(1, count + 1))
    values = set()
    for n in range(1, count + 1):
        m = manifest_of(root, version=n)
        assert m["version"] == n and m.get("supersedes") == (n - 1 if n > 1 else None)
        values.add(hashlib.sha256((folder / f"v{n}" / "results.csv").read_bytes()).hexdigest())
        assert m["files"][0]["sha256"] in values
    assert len(values) == count
    run_json("validate", root, expect=0)


def test_a_zero_padded_version_folder_is_never_read_as_a_version(root):
    submit(root, DATA / "results-dell.csv")
    shutil.copytree(root / "v6.0" / "Dell" / "v1", root / "v6.0" / "Dell" / "v01")
    for command in ("validate",):
        doc = run_json(command, root, expect=1)
        assert [(f["code"], f["file"]) for f in doc["findings"]] == [
            ("bad-version-folder", f"{root.as_posix()}/v6.0/Dell/v01")]
    doc = run_json("validate", root / "v6.0" / "Dell" / "v01", "--root", root, expect=1)
    assert [f["code"] for f in doc["findings"]] == ["bad-version-folder"]
    assert doc["summary"]["accepted"] == 0


def test_a_manifest_may_list_withdrawals(root, tmp_path):
    submit(root, DATA / "results-dell.csv")
    submit(root, DATA / "results-dell.csv", "Dell", "verified", ON_TIME, "v6.0",
           "--withdraw", "8xMI355X:llama2-70b-99:Offline:a rerun is pending")
    m = manifest_of(root, version=2)
    assert m["withdraws"] == [{"system": "8xMI355X", "model": "llama2-70b-99", "scenario": "Offline",
                               "reason": "a rerun is pending"}]
    out = tmp_path / "versions.csv"
    run("ingest", root, "-o", tmp_path / "t.csv", "--versions-out", out, expect=0)
    rows = read_csv(out)
    assert [r["withdraws"] for r in rows] == ["", "8xMI355X llama2-70b-99 Offline: a rerun is pending"]
    # the DVC pipeline's ingest stage keeps it in data/versions.csv too
    run("ingest-all", root, "-o", tmp_path / "all.parquet", "--rejected-out", tmp_path / "r.csv",
        "--findings-out", tmp_path / "f.json", "--versions-out", tmp_path / "all-versions.csv",
        "--cache", tmp_path / "cache", expect=0)
    assert [r["withdraws"] for r in read_csv(tmp_path / "all-versions.csv")] == [
        "", "8xMI355X llama2-70b-99 Offline: a rerun is pending"]
    run("submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0", "--status",
        "verified", "--root", root, "--withdraw", "no-reason-given", expect=2)


# ---- the clock: when a version became visible (the project's visibility record) ----------------

def _git_root(tmp_path):
    from gitrepo import init

    repo = init(tmp_path / "repo", "Clock Test")
    root = repo / "submissions"
    root.mkdir()
    return repo, root


def _record(repo, entries: dict | None = None) -> None:
    """The visibility record as the regenerate workflow appends it (one line per version)."""
    path = repo / "record" / "visible.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("schema_version: 1\nversions:\n"
                    + "".join(f"  '{k}': '{v}'\n" for k, v in (entries or {}).items()))


def test_ingest_dates_a_version_by_the_visibility_record(tmp_path):
    from gitrepo import commit

    repo, root = _git_root(tmp_path)
    submit(root, DATA / "results-dell.csv")                   # declared 2026-02-20, deadline 2026-02-27
    _record(repo, {"v6.0/Dell/v1": "2026-02-21T00:00:00Z"})
    commit(repo, "Dell v1, seen on main in time")
    doc = run_json("validate", root, expect=0)
    assert doc["summary"]["verified"] == doc["summary"]["accepted"] > 0

    submit(root, DATA / "results-dell.csv")                   # v2: same declared date ...
    _record(repo, {"v6.0/Dell/v1": "2026-02-21T00:00:00Z", "v6.0/Dell/v2": "2026-03-05T00:00:00Z"})
    commit(repo, "Dell v2, seen on main after the deadline", when="2026-02-22T00:00:00Z")
    doc = run_json("validate", root, expect=1)
    [late] = [f for f in doc["findings"] if f["code"] == "verified-after-deadline"]
    assert late["file"] == f"{root.as_posix()}/v6.0/Dell/v2/manifest.yaml"
    assert late["found"] == ("2026-03-05T00:00:00+00:00 (visible: recorded in record/visible.yaml; "
                             "declared 2026-02-20T10:00:00+00:00)")
    assert doc["summary"]["verified"] > 0 and doc["summary"]["post_deadline"] > 0   # v1 stays verified


def test_a_back_dated_fast_forward_is_not_verified_when_the_record_does_not_hold_it(tmp_path):
    """A partner's branch commits a verified version with commit dates before
    the deadline; main fast-forwards to it, so the commit that brought the
    manifest into main's first-parent history is the partner's own. The
    record (the project's, not the partner's) has no entry: visible now,
    post-deadline, in validate and in the DVC pipeline's ingest-all."""
    from gitrepo import commit, git

    repo, root = _git_root(tmp_path)
    _record(repo)
    commit(repo, "start", when="2026-01-10T00:00:00Z")
    git(repo, "checkout", "-q", "-b", "partner")
    submit(root, DATA / "results-dell.csv")
    commit(repo, "Dell v1, 'in time'", when="2026-02-21T00:00:00Z")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "partner")
    assert git(repo, "log", "-1", "--format=%cI", "main").strip() == "2026-02-21T00:00:00+00:00"
    doc = run_json("validate", root, expect=1)
    [late] = [f for f in doc["findings"] if f["code"] == "verified-after-deadline"]
    assert late["file"] == f"{root.as_posix()}/v6.0/Dell/v1/manifest.yaml" and late["place"] == "line 4, key submitted_at"
    assert "not in record/visible.yaml yet" in late["found"]
    assert doc["summary"]["verified"] == 0 and doc["summary"]["post_deadline"] == doc["summary"]["accepted"] > 0
    run("ingest-all", root, "-o", tmp_path / "all.parquet", "--rejected-out", tmp_path / "r.csv",
        "--findings-out", tmp_path / "f.json", "--versions-out", tmp_path / "v.csv", expect=0)
    assert [(r["status_declared"], r["status"]) for r in read_csv(tmp_path / "v.csv")] == [
        ("verified", "post-deadline")]


def test_a_recorded_time_moves_a_cached_submitter_too(tmp_path):
    """The record is part of ingest-all's cache key: a version it comes to
    hold is read again, not taken from a part cached before."""
    from gitrepo import commit

    repo, root = _git_root(tmp_path)
    submit(root, DATA / "results-dell.csv")
    _record(repo)
    commit(repo, "Dell v1")
    args = ("ingest-all", root, "-o", tmp_path / "all.parquet", "--rejected-out", tmp_path / "r.csv",
            "--findings-out", tmp_path / "f.json", "--versions-out", tmp_path / "v.csv", "--cache",
            tmp_path / "cache")
    run(*args, expect=0)
    assert [r["status"] for r in read_csv(tmp_path / "v.csv")] == ["post-deadline"]
    _record(repo, {"v6.0/Dell/v1": "2026-02-21T00:00:00Z"})
    run(*args, expect=0)
    assert [r["status"] for r in read_csv(tmp_path / "v.csv")] == ["verified"]


# ---- submit --dry-run ---------------------------------------------------------------------

def as_amd(tmp_path):
    """The Dell test file as AMD's reference."""
    path = tmp_path / "amd" / "results.csv"
    path.parent.mkdir(parents=True)
    text = (DATA / "results-dell.csv").read_text()
    path.write_text("\n".join(line.replace("Dell,", "AMD,", 1) if line.startswith("Dell,") else line
                              for line in text.split("\n")))
    return path


def test_dry_run_runs_the_gate_checks_and_seals_nothing(root, tmp_path):
    submit(root, as_amd(tmp_path), "AMD", "post-deadline", LATE)
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    low = DATA / "results-dell.csv"
    done = run("submit", low, "--submitter", "Dell", "--round", "v6.0", "--status", "post-deadline",
               "--submitted-at", LATE, "--root", root, "--dry-run", "--format", "json", expect=None)
    import json as json_mod
    doc = json_mod.loads(done.stdout)
    assert doc["summary"]["dry_run"] is True and doc["summary"]["sealed"] is False
    assert doc["summary"]["versions"] == ["v6.0/Dell/v1"]
    assert doc["rows"] and {r["verdict"] for r in doc["rows"]} == {"agree"}
    assert {r["reference_source"] for r in doc["rows"]} >= {f"{root.as_posix()}/v6.0/AMD/v1/results.csv:2"}
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before


def test_dry_run_fails_a_late_verified_version(root, tmp_path):
    submit(root, as_amd(tmp_path), "AMD", "post-deadline", LATE)
    done = run("submit", as_amd(tmp_path / "again"), "--submitter", "AMD", "--round", "v6.0",
               "--status", "verified", "--root", root, "--dry-run", "--format", "json", expect=1)
    import json as json_mod
    doc = json_mod.loads(done.stdout)
    assert "verified-after-deadline" in {f["code"] for f in doc["findings"] if f["severity"] == "error"}
    assert not (root / "v6.0" / "AMD" / "v2").exists()


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+00:00", "2025-09-08T23:59:59+00:00",
                                  "9999-12-31T00:00:00+00:00"])
def test_submit_refuses_a_submitted_at_the_gate_would_refuse(root, when):
    done = submit(root, DATA / "results-dell.csv", "Dell", "verified", when, expect=2)
    assert "--submitted-at" in done.output
    assert not (root / "v6.0" / "Dell").exists()


# ---- the partner who submits today: status auto, verified refused after the deadline ------

FUTURE_ROUND = """  v9.9:
    opens: "2026-01-01T00:00:00+00:00"
    submission_deadline: "2099-01-01T00:00:00+00:00"
    publication_date: "2099-02-01"
    estimated: {submission_deadline: true, publication_date: true}
    note: A test round whose deadline is still ahead.
"""


@pytest.fixture
def future_round(tmp_path, monkeypatch):
    """The project's schemas with a round v9.9 whose deadline is ahead."""
    from conftest import REPO

    schemas = tmp_path / "schemas"
    shutil.copytree(REPO / "schemas", schemas)
    rounds = schemas / "rounds.yaml"
    rounds.write_text(rounds.read_text(encoding="utf-8") + FUTURE_ROUND, encoding="utf-8")
    monkeypatch.setenv("MLREPRO_SCHEMAS", str(schemas))   # the command line's rules
    return "v9.9"


def test_verified_after_the_deadline_is_refused_naming_the_fix(root):
    result = run("submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0",
                 "--status", "verified", "--root", root, expect=1)
    assert result.stdout.splitlines() == ["refused: nothing written", "summary: findings=1, errors=1"]
    assert result.stderr.startswith(f"error: {root / 'v6.0' / 'Dell' / 'v1' / 'manifest.yaml'}: key status: "
                                    "[verified-after-deadline] declared verified after the v6.0 deadline, it "
                                    "would count as post-deadline: submit it with --status post-deadline "
                                    "(or --status auto); nothing written (expected sealed at or before "
                                    "2026-02-27T13:00:00-08:00 (the v6.0 deadline); found ")
    assert list(root.iterdir()) == []        # not even the round folder


def test_the_refusal_names_the_version_it_would_have_sealed(root):
    submit(root, DATA / "results-dell.csv", status="post-deadline", submitted_at=LATE)
    doc = run_json("submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0",
                   "--status", "verified", "--root", root, expect=1)
    [f] = doc["findings"]
    assert (f["code"], f["file"], f["key"]) == ("verified-after-deadline",
                                                f"{root.as_posix()}/v6.0/Dell/v2/manifest.yaml", "status")
    assert doc["summary"]["created"] is None
    assert not (root / "v6.0" / "Dell" / "v2").exists()


def test_auto_is_the_default_and_seals_post_deadline_after_the_deadline(root):
    doc = run_json("submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0",
                   "--root", root, expect=0)
    assert (doc["summary"]["created"], doc["summary"]["status"]) == ("v6.0/Dell/v1", "post-deadline")
    assert doc["findings"] == []
    assert manifest_of(root)["status"] == "post-deadline"
    run_json("validate", root, expect=0)     # the gate's reading agrees: nothing late, nothing to fix


def test_auto_seals_verified_before_the_deadline(root, future_round):
    source = root.parent / "dell.csv"
    source.write_text((DATA / "results-dell.csv").read_text())
    done = run("submit", source, "--submitter", "Dell", "--round", future_round, "--status", "auto",
               "--root", root, expect=0)
    assert done.stdout.splitlines()[0] == f"created {root / future_round / 'Dell' / 'v1'} (verified)"
    assert manifest_of(root, round_=future_round)["status"] == "verified"


def test_a_forced_late_verified_version_fails_with_the_same_fix(root):
    submit(root, DATA / "results-dell.csv", submitted_at=LATE)          # --force (conftest)
    doc = run_json("validate", root, expect=1)
    [late] = [f for f in doc["findings"] if f["code"] == "verified-after-deadline"]
    assert "--status post-deadline (or --status auto)" in late["message"]


def test_a_dry_run_with_auto_says_which_status_it_would_seal(root, tmp_path):
    submit(root, as_amd(tmp_path), "AMD", "post-deadline", LATE)
    done = run("submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0", "--root", root,
               "--dry-run", "--format", "json", expect=0)
    import json as json_mod
    doc = json_mod.loads(done.stdout)
    assert (doc["summary"]["status"], doc["summary"]["verdict"], doc["summary"]["sealed"]) == (
        "post-deadline", "pass", False)
    assert not (root / "v6.0" / "Dell").exists()
    text = run("submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0", "--root", root,
               "--dry-run", expect=0).stdout.splitlines()
    assert text[0] == "dry run, nothing sealed: submit would seal it post-deadline"
    refused = run("submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0", "--root", root,
                  "--status", "verified", "--dry-run", expect=1).stdout.splitlines()
    assert refused[0] == "dry run, nothing sealed: submit would refuse it"


def test_a_time_before_the_previous_versions_is_refused(root):
    submit(root, DATA / "results-dell.csv", status="post-deadline", submitted_at=LATE)
    doc = run_json("submit", DATA / "results-dell.csv", "--submitter", "Dell", "--round", "v6.0",
                   "--status", "post-deadline", "--submitted-at", "2026-03-01T00:00:00+00:00", "--root", root,
                   expect=1)
    [f] = doc["findings"]
    assert (f["code"], f["file"], f["key"]) == ("submitted-before-previous",
                                                f"{root.as_posix()}/v6.0/Dell/v2/manifest.yaml", "submitted_at")
    assert f["expected"] == f"at or after {LATE} (v1's submitted_at)"
    assert not (root / "v6.0" / "Dell" / "v2").exists()


def test_submit_reads_its_clock_once_it_holds_the_lock(root, monkeypatch):
    """A submit waiting for the submitter folder's lock (another submit sealing)
    seals the time it took the lock, never the earlier time it started at."""
    import fcntl
    import os
    import threading
    from datetime import datetime, timezone

    from pipeline.gate import submit as submit_mod
    from pipeline.store import clock

    now = [datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)]
    monkeypatch.setattr(clock, "now", lambda: now[0])
    waiting = threading.Event()
    locked = submit_mod._locked

    def announced(folder):
        waiting.set()
        return locked(folder)

    monkeypatch.setattr(submit_mod, "_locked", announced)
    folder = root / "v6.0" / "Dell"
    folder.mkdir(parents=True)
    held = os.open(folder, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)                  # another submit holds the folder
    done = {}
    worker = threading.Thread(target=lambda: done.update(result=submit_mod.submit(
        RULES, DATA / "results-dell.csv", "Dell", "v6.0", "post-deadline", root)))
    worker.start()
    try:
        assert waiting.wait(timeout=120)
        now[0] = datetime(2026, 11, 2, 9, 5, tzinfo=timezone.utc)   # the other submit takes five minutes
    finally:
        os.close(held)                                 # ... and releases the lock
    worker.join(timeout=120)
    assert done["result"].version is not None, done["result"].findings
    assert manifest_of(root)["submitted_at"] == "2026-11-02T09:05:00+00:00"
