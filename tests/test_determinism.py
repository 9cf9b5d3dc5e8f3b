"""The same input always gives byte-identical outputs.

In-process, with hypothesis: generated results CSVs go through ingest,
compare and partition twice, to different paths, as CSV and as Parquet.
Across processes: the shipped submissions go through the same three
commands in two interpreters with different hash seeds (``PYTHONHASHSEED``),
which would expose any output that depends on the iteration order of a set.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings, strategies as st

from conftest import RULES, REPO, RESULTS_HEADER
from pipeline.analyses import compare, partition
from pipeline.ingest import submissions as ingest
from pipeline.core.files import write_json, write_table
# each example runs ingest, compare and partition twice and writes 22 files
EXAMPLES = max(5, settings.default.max_examples // 6)
SUBMITTERS = ("AMD", "Dell", "HPE", "Supermicro", "MiTAC")
SCENARIOS = ("Server", "Offline", "Interactive", "server")
ACCELERATORS = ("AMD Instinct MI355X 288GB HBM3E", "AMD Instinct MI325X 256GB HBM3e", "MI300X", "Acme X1")
VALUES = st.one_of(st.floats(min_value=1, max_value=1e6, allow_nan=False).map(lambda v: f"{v:.1f}"),
                   st.sampled_from(["100 282", "103,48", "0", "-5", "NaN", "", "TODO", "1e999"]))
ROW = st.fixed_dictionaries({
    "submitter": st.sampled_from(SUBMITTERS), "system": st.sampled_from(("8xMI355X_2xEPYC_9575F", "SysB", "SysC")),
    "accelerator": st.sampled_from(ACCELERATORS), "accelerators_per_node": st.sampled_from(("8", "4", "0", "x")),
    "nodes": st.sampled_from(("1", "2", "11")), "model": st.sampled_from(("llama2-70b-99", "llama2-70b-99.9", "foo")),
    "scenario": st.sampled_from(SCENARIOS), "value": VALUES,
    "units": st.sampled_from(("Tokens/s", "Samples/s")), "division": st.sampled_from(("closed", "open")),
    "availability": st.just("available"),
})


def write_rows(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(RESULTS_HEADER), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def outputs(inputs: list[Path], out: Path) -> dict[str, bytes]:
    """Every output of ingest, compare and partition, by name."""
    out.mkdir(parents=True, exist_ok=True)
    report = ingest.ingest(RULES, inputs, round_="v6.0", status="verified")
    for ext in ("csv", "parquet"):
        write_table(report.table, out / f"results.{ext}")
        write_table(report.dispositions_frame(), out / f"rejected.{ext}")
    write_json([f.to_dict() for f in report.findings], out / "findings.json")
    agreement = compare.compare(RULES, report.table, 4.0, "AMD")
    for ext in ("csv", "parquet"):
        write_table(agreement.frame(), out / f"agreement.{ext}")
    write_json(agreement.summary, out / "agreement.json")
    parts = partition.partition(report.table, "results")
    for ext in ("csv", "parquet"):
        write_table(parts.verified, out / f"verified.{ext}")
        write_table(parts.post_deadline, out / f"post_deadline.{ext}")
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@settings(max_examples=EXAMPLES)
@given(files=st.lists(st.lists(ROW, min_size=0, max_size=12), min_size=1, max_size=3))
def test_the_same_input_gives_byte_identical_outputs(files, tmp_path_factory):
    base = tmp_path_factory.mktemp("determinism")
    inputs = []
    for i, rows in enumerate(files):
        inputs.append(base / f"in{i}.csv")
        write_rows(inputs[-1], rows)
    first = outputs(inputs, base / "first")
    second = outputs(inputs, base / "second")
    assert first.keys() == second.keys()
    for name in first:
        assert first[name] == second[name], name


DRIVER = """
import sys
from pipeline.cli import cli

root, out = sys.argv[1], sys.argv[2]
def call(*args):
    try:
        cli([str(a) for a in args], prog_name="mlrepro", standalone_mode=False)
    except SystemExit:
        pass
call("ingest", root, "--root", root, "-o", out + "/results.csv", "--rejected-out", out + "/rejected.csv",
     "--findings-out", out + "/findings.json", "--versions-out", out + "/versions.csv", "--exit-zero")
call("ingest", root, "--root", root, "-o", out + "/results.parquet", "--exit-zero")
call("compare", out + "/results.csv", "-o", out + "/agreement.csv", "--summary-out", out + "/summary.json",
     "--params", root + "/../params.yaml", "--exit-zero")
call("compare", out + "/results.parquet", "-o", out + "/agreement.parquet", "--params", root + "/../params.yaml",
     "--exit-zero")
call("partition", out + "/results.parquet", "--verified-out", out + "/verified.parquet",
     "--post-deadline-out", out + "/post.parquet")
call("partition", out + "/agreement.csv", "--verified-out", out + "/agreement-verified.csv",
     "--post-deadline-out", out + "/agreement-post.csv")
"""


def test_outputs_do_not_depend_on_the_hash_seed(tmp_path):
    runs = {}
    for seed in ("1", "2"):
        out = tmp_path / f"seed{seed}"
        out.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("MLREPRO_")}
        env["PYTHONHASHSEED"] = seed
        runs[seed] = (out, subprocess.Popen([sys.executable, "-c", DRIVER, str(REPO / "submissions"), str(out)],
                                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True))
    files = {}
    for seed, (out, proc) in runs.items():
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        files[seed] = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    assert len(files["1"]) == 12 and files["1"].keys() == files["2"].keys()
    for name in files["1"]:
        assert files["1"][name] == files["2"][name], name


# ---- the DVC ingest stage: what comes from the cache is what a fresh read gives ------

def _ingest_all(root: Path, out: Path, cache: Path | None) -> dict[str, bytes]:
    from pipeline.stages import ingest as merge
    from pipeline.core.files import write_json, write_table
    merged, read = merge.ingest_root(RULES, root, cache)
    out.mkdir(parents=True, exist_ok=True)
    write_table(merged.table, out / "results.parquet")
    write_table(merged.rejected, out / "rejected.csv")
    write_json(merged.findings, out / "findings.json")
    write_table(merged.versions, out / "versions.csv")
    files = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    return {**files, "cache": json.dumps(read).encode()}


def test_the_ingest_cache_changes_no_byte(tmp_path):
    """Without a cache, filling it, reading from it: the same four files. A
    stray folder in one submitter is one finding, whether the other
    submitters come from the cache or not."""
    root = tmp_path / "submissions"
    shutil.copytree(REPO / "submissions", root)
    cache = tmp_path / "cache"
    fresh = _ingest_all(root, tmp_path / "fresh", None)
    filled = _ingest_all(root, tmp_path / "filled", cache)
    cached = _ingest_all(root, tmp_path / "cached", cache)
    count = len([p for p in root.glob("*/*") if p.is_dir()])
    assert json.loads(filled.pop("cache")) == {"submitters_read": count, "submitters_cached": 0}
    assert json.loads(cached.pop("cache")) == {"submitters_read": 0, "submitters_cached": count}
    fresh.pop("cache")
    assert fresh == filled == cached

    (root / "v5.1" / "Dell" / "stray").mkdir()
    again = _ingest_all(root, tmp_path / "again", cache)
    assert json.loads(again.pop("cache")) == {"submitters_read": 1, "submitters_cached": count - 1}
    findings = json.loads(again["findings.json"])
    # beside the shipped warnings (AMD's v6.0 host counts), only the stray folder's finding
    assert [f["code"] for f in findings if f["code"] != "description-contradicts-system-id"] == ["bad-version-folder"]
    assert again == {k: v for k, v in _ingest_all(root, tmp_path / "nocache", None).items() if k != "cache"}
    assert len(list(cache.iterdir())) == count     # the old Dell entry is pruned


# ---- the audit: GX ids and clock stamps pinned; the Data Docs site readable ----------

def test_the_audit_result_is_the_same_bytes_each_run_and_data_docs_keep_the_umask(tmp_path):
    from pipeline.analyses import audit
    from pipeline.stages import audit as stage, ingest as merge
    from pipeline.core.files import write_table
    merged, _ = merge.ingest_root(RULES, REPO / "submissions")
    parts = partition.partition(merged.table, "results")
    verified, post, versions = tmp_path / "verified.csv", tmp_path / "post.csv", tmp_path / "versions.csv"
    write_table(parts.verified, verified)
    write_table(parts.post_deadline, post)
    write_table(merged.versions, versions)          # the Data Docs show the data's time, from it
    docs = tmp_path / "site"
    mask = os.umask(0o022)
    try:
        with_docs = stage.run(RULES, verified, post, tmp_path, docs=docs, versions=versions)
    finally:
        os.umask(mask)
    without = audit.audit(RULES, verified, post)
    first, second = (json.dumps(r.to_dict(), indent=2, default=str) for r in (with_docs, without))
    assert first == second
    assert "2000-01-01T00:00:00+00:00" in first
    assert [p for p in [docs, *docs.rglob("*")] if p.stat().st_mode & 0o777 not in (0o755, 0o644)] == []
    assert (docs / "index.html").is_file()
