"""Work on partner input is bounded by the caps of schemas/version_folder.yaml:
over a cap a file or version gets one clear ``over-cap`` finding at once
(a Parquet file's rows counted from its metadata, before any is decoded); a
finding that repeats (``duplicate-row``) names a few others and counts the
rest. The gate's time and summary size on the worst case the caps allow are
measured by `make bench` (benchmarks/gate_hostile.py), never here."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from conftest import RULES, RESULTS_HEADER, results_row, run_json, write_results_csv
from gitrepo import commit
from test_gate import ROUND, base_repo, gate, repo  # noqa: F401
from test_version_folder import seal
from pipeline.core import limits
from pipeline.readers import parquet
from pipeline.store import contents


def bomb(path: Path, rows: int) -> Path:
    """A small Parquet file of ROWS identical rows (dictionary-encoded: a few KB)."""
    row = results_row()
    pq.write_table(pa.table({k: [row[k]] * rows for k in RESULTS_HEADER}), path)
    return path


def test_a_parquet_file_over_the_row_cap_is_refused_from_its_metadata(tmp_path, monkeypatch):
    path = bomb(tmp_path / "r.parquet", limits.cap(RULES, "rows_per_file") + 1)
    assert path.stat().st_size < 64 * 1024
    def decoded(*args, **kwargs):
        raise AssertionError("the rows were decoded")
    monkeypatch.setattr(pq, "read_table", decoded)
    result = parquet.read(path, "r.parquet", RULES)
    [finding] = result.findings
    assert (finding.code, finding.where.file) == ("over-cap", "r.parquet")
    assert finding.found == f"{limits.cap(RULES, 'rows_per_file') + 1} rows (the file's metadata)"


def test_a_csv_over_the_row_cap_is_refused_whole_with_one_row_of_trace(tmp_path):
    path = write_results_csv(tmp_path / "r.csv", [results_row(system=f"S_8xMI355X_{i}")
                                                  for i in range(limits.cap(RULES, "rows_per_file") + 1)])
    doc = run_json("validate", path, "--round", "v6.0", expect=1)
    assert [f["code"] for f in doc["findings"]] == ["over-cap"]
    assert (doc["summary"]["accepted"], doc["summary"]["rejected"]) == (0, 1)    # the file, one trace


def test_a_duplicate_row_names_a_few_others_and_counts_the_rest(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_results_csv(Path("r.csv"), [results_row()] * 40)
    doc = run_json("validate", "r.csv", "--round", "v6.0", expect=1)
    dups = [f for f in doc["findings"] if f["code"] == "duplicate-row"]
    assert len(dups) == 40                                      # every row rejected, each with its finding
    keep = limits.cap(RULES, "examples_per_finding")
    assert all(f["found"].count("r.csv:") == keep for f in dups), dups[0]["found"]
    assert all(f["found"].endswith(f"and {39 - keep} more") for f in dups)


def test_a_field_over_the_length_cap_is_refused_at_its_column(tmp_path):
    path = write_results_csv(tmp_path / "r.csv", [results_row(system="S" * 300 + "_8xMI355X")])
    doc = run_json("validate", path, "--round", "v6.0", expect=1)
    found = {(f["place"], f["found"]) for f in doc["findings"] if f["code"] == "over-cap"}
    assert ("line 2, column system", "309 characters") in found
    assert "SSSS" not in json.dumps(doc["findings"])            # never quoted at length


def test_a_version_over_the_file_cap_is_one_finding():
    cap = limits.cap(RULES, "files_per_version")
    paths = [("manifest.yaml", False), ("t", True)] + [(f"t/results/s/m/Offline/{i}/accuracy.txt", False)
                                                      for i in range(cap + 1)]
    found = [r for r in contents.judge(RULES, paths, {"t": "submission-tree"}) if r.code == "over-cap"]
    assert [(r.path, r.found) for r in found] == [("", f"{cap + 2} files")]          # the manifest counts


def test_the_gate_fails_a_parquet_bomb_with_a_located_finding(repo, tmp_path):
    source = bomb(tmp_path / "results.parquet", 100_000)
    seal(repo / f"submissions/{ROUND}/Dell/v2", {"results.parquet": "parquet"},
         {"results.parquet": source.read_bytes()})
    commit(repo, "Dell v2: 7 KB, 100,000 rows")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    # counted from the metadata before any row is decoded: the version's files are over the cap
    assert ("over-cap", f"submissions/{ROUND}/Dell/v2/manifest.yaml", "100000 rows") in {
        (f["code"], f["file"], f["found"]) for f in doc["findings"]}
    assert len(doc["rows"]) == 1 and doc["rows"][0]["outcome"] == "rejected"   # the file, refused whole


def test_a_version_over_the_row_cap_is_one_finding_and_no_file_is_read(tmp_path, monkeypatch):
    half = limits.cap(RULES, "rows_per_version") // 2 + 1
    text = ",".join(RESULTS_HEADER) + "\n" + "\n".join(",".join(results_row().values()) for _ in range(half)) + "\n"
    root = tmp_path / "submissions"
    folder = seal(root / ROUND / "Dell" / "v1", {"a.csv": "results-csv", "b.csv": "results-csv"},
                  {"a.csv": text.encode(), "b.csv": text.encode()}, number=1)
    from pipeline.readers import results_csv

    def read(*args, **kwargs):
        raise AssertionError("a file was read")
    monkeypatch.setattr(results_csv, "read", read)
    doc = run_json("validate", folder, "--root", root, expect=1)
    over = [f for f in doc["findings"] if f["code"] == "over-cap"]
    assert [(f["place"].split(", ")[-1], f["found"]) for f in over] == [("key files", f"{2 * half} rows")]
    assert (doc["summary"]["accepted"], doc["summary"]["rejected"]) == (0, 2)      # each file, unread
