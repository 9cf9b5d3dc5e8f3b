"""The commands of the DVC stages after ingest, on the shipped submissions:

- `compare --verified-dir --post-deadline-dir` (the compare stage) writes the
  agreement table and the verified and post-deadline sets of the table and of
  the agreement table: the sets `partition` writes, each row in one set, a row
  that fails the schema in neither;
- `report-all` (the report stage) writes what `metrics`, `claims`, `scaling`
  and `crosscheck` write, and the HTML report; the table's own findings are
  listed once, the exit code is 1 on an error unless --exit-zero, and the
  claims follow compare.reference_vendor of the parameters.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, UNVERIFIED_FOOTNOTE, canonical_row, run, write_canonical

PUBLISHED = {"v5.1": REPO / "published/v5.1/summary_results.json", "v6.0": REPO / "published/v6.0/summary.csv"}
PARAMS = REPO / "params.yaml"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """The ingest stage's outputs of the shipped submissions (data/)."""
    folder = tmp_path_factory.mktemp("stages") / "data"
    run("ingest-all", REPO / "submissions", "-o", folder / "results.parquet", "--rejected-out",
        folder / "rejected.csv", "--findings-out", folder / "findings.json", "--versions-out",
        folder / "versions.csv", "--exit-zero", expect=0)
    return folder


def compare_stage(table: Path, out: Path, *extra, expect=0):
    return run("compare", table, "-o", out / "agreement.csv", "--summary-out", out / "agreement_summary.json",
               "--verified-dir", out / "verified", "--post-deadline-dir", out / "post_deadline",
               "--params", PARAMS, *extra, expect=expect)


def test_the_compare_stage_writes_the_sets_partition_writes(data, tmp_path):
    done = compare_stage(data / "results.parquet", tmp_path, "--exit-zero")
    assert "verified) and" in done.stdout
    for name, whole in (("results", data / "results.parquet"), ("agreement", tmp_path / "agreement.csv")):
        run("partition", whole, "--verified-out", tmp_path / f"alone/v-{name}.csv",
            "--post-deadline-out", tmp_path / f"alone/p-{name}.csv", expect=0)
        for kind, short in (("verified", "v"), ("post_deadline", "p")):
            assert (tmp_path / kind / f"{name}.csv").read_bytes() == \
                (tmp_path / f"alone/{short}-{name}.csv").read_bytes(), (kind, name)
        verified = pd.read_csv(tmp_path / "verified" / f"{name}.csv")
        post = pd.read_csv(tmp_path / "post_deadline" / f"{name}.csv")
        assert set(verified["status"]) == {"verified"} and set(post["status"]) <= {"post-deadline"}
        assert set(post["label"]) <= {"unverified"} and set(post["footnote"]) <= {UNVERIFIED_FOOTNOTE}
        rows = pd.read_csv(whole) if name == "agreement" else pd.read_parquet(whole)
        assert len(verified) + len(post) == len(rows)
    late = int((pd.read_parquet(data / "results.parquet")["status"] == "post-deadline").sum())
    assert late and len(pd.read_csv(tmp_path / "post_deadline/results.csv")) == late
    # the agreement and its summary are those of compare without the sets
    run("compare", data / "results.parquet", "-o", tmp_path / "alone/agreement.csv", "--summary-out",
        tmp_path / "alone/summary.json", "--params", PARAMS, "--exit-zero", expect=0)
    assert (tmp_path / "agreement.csv").read_bytes() == (tmp_path / "alone/agreement.csv").read_bytes()
    assert (tmp_path / "agreement_summary.json").read_bytes() == (tmp_path / "alone/summary.json").read_bytes()


@pytest.mark.parametrize("option", ["--verified-dir", "--post-deadline-dir"])
def test_one_set_folder_without_the_other_is_a_usage_error(data, tmp_path, option):
    result = run("compare", data / "results.parquet", "-o", tmp_path / "agreement.csv", option, tmp_path / "set",
                 expect=2)
    assert "--verified-dir and --post-deadline-dir go together" in result.stderr
    assert list(tmp_path.iterdir()) == []


def bad_table(data: Path, path: Path) -> Path:
    """40 shipped rows, one verified value changed (the published table says
    otherwise), and two rows that fail the schema: a value out of the plausible
    range (the schema's range check: invalid-value) and an unknown scenario."""
    rows = pd.read_parquet(data / "results.parquet").head(40).to_dict("records")
    rows[3]["value"] = rows[3]["value"] * 1.5
    bad = [canonical_row(system="BAD1", value=-5.0, file="v6.0/AMD/v1/bad.csv", line=2),
           canonical_row(system="BAD2", scenario="Bogus", file="v6.0/AMD/v1/bad.csv", line=3)]
    return write_canonical(path, rows + bad)


def test_a_row_that_fails_the_schema_is_a_finding_and_in_neither_set(data, tmp_path):
    table = bad_table(data, tmp_path / "odd.parquet")
    failed = compare_stage(table, tmp_path, expect=1)
    assert failed.stderr.count("[schema-violation]") == 1 and failed.stderr.count("[invalid-value]") == 1
    sets = pd.concat([pd.read_csv(tmp_path / kind / "results.csv") for kind in ("verified", "post_deadline")])
    assert len(sets) == 40 and not {"BAD1", "BAD2"} & set(sets["system"])


def report_stage(data: Path, table: Path, out: Path, *extra, expect=0):
    args = ["report-all", table, "--agreement", out / "agreement.csv", "--rejected", data / "rejected.csv",
            "--versions", data / "versions.csv", "--ledger", REPO / "claims.yaml",
            "--claims-out", out / "claims.json", "--scaling-out", out / "scaling.json"]
    for round_, published in PUBLISHED.items():
        args += ["--crosscheck", published, out / f"crosscheck/{round_}.json"]
    return run(*args, "--metrics-out", out / "metrics.json", "-o", out / "reports/index.html", *extra,
               expect=expect)


def test_the_report_stage_writes_what_each_command_writes(data, tmp_path):
    """A table with rows that fail the schema and a value MLCommons published
    otherwise: each file is its command's; the table's findings are listed
    once; exit 1 on an error, 0 with --exit-zero."""
    table = bad_table(data, tmp_path / "odd.parquet")
    compare_stage(table, tmp_path, "--exit-zero")
    failed = report_stage(data, table, tmp_path, "--params", PARAMS, expect=1)
    assert failed.stderr.count("[schema-violation]") == 1 and failed.stderr.count("[invalid-value]") == 1
    assert "[published-value-differs]" in failed.stderr and "[claim-not-supported]" in failed.stderr
    for step in ("metrics", "claims", "scaling", "crosscheck", "report"):
        assert f"\n{step}" in "\n" + failed.stdout, step
    assert "warning: --validation" not in failed.stderr   # not given: said in the report's section

    alone = tmp_path / "alone"
    run("metrics", table, "--agreement", tmp_path / "agreement.csv", "--rejected", data / "rejected.csv",
        "-o", alone / "metrics.json", expect=0)
    run("claims", REPO / "claims.yaml", table, "-o", alone / "claims.json", "--params", PARAMS, "--exit-zero",
        expect=0)
    run("scaling", table, "-o", alone / "scaling.json", "--params", PARAMS)
    for round_, published in PUBLISHED.items():
        run("crosscheck", table, "--published", published, "-o", alone / f"crosscheck/{round_}.json",
            "--exit-zero", expect=0)
    written = {p.relative_to(alone).as_posix(): p.read_bytes() for p in sorted(alone.rglob("*")) if p.is_file()}
    assert len(written) > 10
    differ = [name for name, raw in written.items() if (tmp_path / name).read_bytes() != raw]
    assert differ == []
    crosscheck = [json.loads((tmp_path / f"crosscheck/{r}.json").read_text()) for r in PUBLISHED]
    assert sum(doc["summary"]["differs"] for doc in crosscheck) == 1
    html = (tmp_path / "reports/index.html").read_text(encoding="utf-8")
    assert "<html" in html and (tmp_path / "reports/deviation.csv").is_file()

    report_stage(data, table, tmp_path, "--params", PARAMS, "--exit-zero", expect=0)


def test_the_report_stage_claims_follow_the_reference_vendor_of_the_parameters(data, tmp_path):
    compare_stage(data / "results.parquet", tmp_path, "--exit-zero")
    params = tmp_path / "params.yaml"
    params.write_text(PARAMS.read_text(encoding="utf-8").replace("reference_vendor: AMD", "reference_vendor: NVIDIA"),
                      encoding="utf-8")
    report_stage(data, data / "results.parquet", tmp_path, "--params", params, "--exit-zero", expect=0)
    run("claims", REPO / "claims.yaml", data / "results.parquet", "-o", tmp_path / "nvidia.json", "--params", params,
        "--exit-zero", expect=0)
    run("claims", REPO / "claims.yaml", data / "results.parquet", "-o", tmp_path / "amd.json", "--params", PARAMS,
        "--exit-zero", expect=0)
    stage = (tmp_path / "claims.json").read_bytes()
    assert stage == (tmp_path / "nvidia.json").read_bytes() != (tmp_path / "amd.json").read_bytes()


def test_an_output_that_is_an_input_is_refused_before_anything_is_written(data, tmp_path):
    compare_stage(data / "results.parquet", tmp_path, "--exit-zero")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    result = run("report-all", data / "results.parquet", "--agreement", tmp_path / "agreement.csv",
                 "--rejected", data / "rejected.csv", "--versions", data / "versions.csv",
                 "--ledger", REPO / "claims.yaml", "--claims-out", tmp_path / "claims.json",
                 "--scaling-out", tmp_path / "agreement.csv", "--metrics-out", tmp_path / "metrics.json",
                 "-o", tmp_path / "index.html", expect=2)
    assert "agreement.csv" in result.stderr
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
