"""`mlrepro analyse` (the DVC pipeline's analyse stage) runs compare,
partition, metrics, claims, scaling, crosscheck, audit and report in one
process: every file it writes is the bytes the command of that step writes on
its own (the ten stages the pipeline had before), for the shipped submissions and for a
table with rows that fail the schema and a published table that differs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, canonical_row, run, write_canonical

PUBLISHED = {"v5.1": REPO / "published/v5.1/summary_results.json", "v6.0": REPO / "published/v6.0/summary.csv"}


@pytest.fixture
def work(tmp_path, monkeypatch) -> Path:
    """A folder with the project's params.yaml and claims.yaml, and the
    shipped submissions ingested into data/ (as the ingest stage leaves it)."""
    for name in ("params.yaml", "claims.yaml"):
        shutil.copy(REPO / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    run("ingest-all", REPO / "submissions", "-o", "data/results.parquet", "--rejected-out", "data/rejected.csv",
        "--findings-out", "data/findings.json", "--versions-out", "data/versions.csv", "--exit-zero", expect=0)
    return tmp_path


def one_by_one(table: str, out: Path) -> None:
    """What the eight stages ran (dvc.yaml before the analyse stage), into ``out``."""
    run("compare", table, "-o", out / "agreement.csv", "--summary-out", out / "agreement_summary.json",
        "--exit-zero", expect=0)
    for name, source in (("results", table), ("agreement", out / "agreement.csv")):
        run("partition", source, "--verified-out", out / f"verified/{name}.csv",
            "--post-deadline-out", out / f"post_deadline/{name}.csv", "--exit-zero", expect=0)
    run("metrics", table, "--agreement", out / "agreement.csv", "--rejected", "data/rejected.csv",
        "-o", out / "metrics.json", "--details-out", out / "metrics", expect=0)
    run("claims", "claims.yaml", table, "-o", out / "claims.json", "--exit-zero", expect=0)
    run("scaling", table, "-o", out / "scaling.json")
    for round_, published in PUBLISHED.items():
        run("crosscheck", table, "--published", published, "-o", out / f"crosscheck/{round_}.json",
            "--exit-zero", expect=0)
    run("audit", out / "verified/results.csv", out / "post_deadline/results.csv", "-o", out / "audit",
        "--no-data-docs", "--exit-zero", expect=0)
    run("report", table, "--agreement", out / "agreement.csv", "--rejected", "data/rejected.csv",
        "--versions", "data/versions.csv", "--claims", out / "claims.json", "--scaling", out / "scaling.json",
        "--validation", out / "audit/validation.json", "--plot-data", out / "reports/deviation.csv",
        "-o", out / "reports/index.html", expect=0)


def analyse_args(table: str, out: Path) -> list:
    args = ["analyse", table, "--rejected", "data/rejected.csv", "--claims", "claims.yaml"]
    for round_, published in PUBLISHED.items():
        args += ["--crosscheck", published, out / f"crosscheck/{round_}.json"]
    return args + ["--agreement-out", out / "agreement.csv", "--summary-out", out / "agreement_summary.json",
                   "--verified-dir", out / "verified", "--post-deadline-dir", out / "post_deadline",
                   "--metrics-out", out / "metrics.json", "--details-out", out / "metrics",
                   "--claims-out", out / "claims.json", "--scaling-out", out / "scaling.json",
                   "--validation-out", out / "audit/validation.json", "--versions", "data/versions.csv",
                   "--report-out", out / "reports/index.html", "--plot-data", out / "reports/deviation.csv"]


def files(folder: Path) -> dict[str, bytes]:
    """Every file's bytes, the folder's own path in them (the audit's findings
    name the set files they were given; the report lists its inputs, with
    line-break hints <wbr> in paths) written <out>."""
    def normal(path: Path) -> bytes:
        raw = path.read_bytes()
        return (raw.replace(b"<wbr>", b"") if path.suffix == ".html" else raw).replace(str(folder).encode(), b"<out>")
    return {p.relative_to(folder).as_posix(): normal(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def test_every_file_is_the_bytes_its_own_command_writes(work):
    one_by_one("data/results.parquet", work / "apart")
    done = run(*analyse_args("data/results.parquet", work / "together"), "--exit-zero", expect=0)
    apart, together = files(work / "apart"), files(work / "together")
    assert len(apart) > 20 and sorted(together) == sorted(apart)
    assert [name for name in apart if apart[name] != together[name]] == []
    for step in ("compare", "partition results.csv", "partition agreement.csv", "metrics", "claims",
                 "scaling", "crosscheck", "audit", "report"):
        assert f"\n{step}" in "\n" + done.stdout, step
    assert "[deviates-from-reference]" in done.stderr and "[claim-not-supported]" in done.stderr


def test_a_table_with_bad_rows_and_a_differing_published_value(work):
    """Rows that fail the schema are findings of every step (listed once by
    analyse); a value MLCommons published otherwise is a crosscheck finding;
    the files are still the commands' bytes, and the exit code is 1 unless
    --exit-zero."""
    frame = pd.read_parquet(work / "data/results.parquet")
    rows = frame.head(40).to_dict("records")
    rows[3]["value"] = rows[3]["value"] * 1.5
    bad = [canonical_row(system="BAD1", value=-5.0, source="v6.0/AMD/v1/bad.csv:2"),
           canonical_row(system="BAD2", scenario="Bogus", source="v6.0/AMD/v1/bad.csv:3")]
    write_canonical(work / "data/odd.parquet", rows + bad)
    one_by_one("data/odd.parquet", work / "apart")
    failed = run(*analyse_args("data/odd.parquet", work / "together"), expect=1)
    apart, together = files(work / "apart"), files(work / "together")
    assert sorted(together) == sorted(apart)
    # the report lists each input's sha256: validation.json's names the set files by their folder
    assert [name for name in apart if apart[name] != together[name]] == ["reports/index.html"]
    assert failed.stderr.count("[schema-violation]") == 2
    crosscheck = [json.loads(apart[f"crosscheck/{r}.json"]) for r in PUBLISHED]
    assert sum(doc["summary"]["differs"] for doc in crosscheck) == 1
    assert "[published-value-differs]" in failed.stderr
    assert "[expectation-failed]" in failed.stderr and b"<out>/verified/results.csv" in apart["audit/validation.json"]


def test_an_output_that_is_an_input_is_refused_before_anything_is_written(work):
    args = analyse_args("data/results.parquet", work / "out")
    args[args.index("--claims-out") + 1] = "claims.yaml"
    result = run(*args, expect=2)
    assert "claims.yaml" in result.stderr
    assert not (work / "out").exists()


@pytest.mark.parametrize(("extra", "message"), [
    (["--suites", "data"], "--validation-out"),
    (["--report-out", "r.html"], "--versions"),
    (["--versions", "data/versions.csv"], "--report-out"),
])
def test_the_audit_and_report_options_go_together(work, extra, message):
    args = analyse_args("data/results.parquet", work / "out")
    cut = args.index("--validation-out")
    result = run(*args[:cut], *extra, expect=2)
    assert message in result.stderr
    assert not (work / "out").exists()


def test_claims_follow_the_reference_vendor_of_params(work):
    """compare.reference_vendor of params.yaml decides the claims in analyse as
    it does in `mlrepro claims`: another vendor, the same claims.json."""
    params = work / "params.yaml"
    params.write_text(params.read_text(encoding="utf-8").replace("reference_vendor: AMD", "reference_vendor: NVIDIA"),
                      encoding="utf-8")
    run("claims", "claims.yaml", "data/results.parquet", "-o", work / "apart/claims.json", "--exit-zero", expect=0)
    run(*analyse_args("data/results.parquet", work / "together"), "--exit-zero", expect=0)
    default = work / "default"
    run("claims", "claims.yaml", "data/results.parquet", "-o", default / "claims.json", "--exit-zero",
        "--params", REPO / "params.yaml", expect=0)
    apart = (work / "apart/claims.json").read_bytes()
    assert apart != (default / "claims.json").read_bytes()      # the vendor changes the claims
    assert (work / "together/claims.json").read_bytes() == apart
