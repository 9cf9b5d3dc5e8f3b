"""`mlrepro metrics`: verified and post-deadline counted apart, no null
anywhere (DVC drops nulls), and short rows in `dvc metrics show` (one file
per scope, every file with the same few keys)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import canonical_row, run, write_canonical

from pipeline.analyses import metrics as metrics_mod

KEYS = ["results", "compared", "agree", "deviates", "no_reference", "excluded", "agreement_rate"]


def _inputs(tmp_path: Path) -> dict[str, Path]:
    rows = [
        canonical_row(submitter="AMD", scenario="Server", value=100000.0, file="v6.0/AMD/v1/results.csv", line=2),
        canonical_row(submitter="AMD", scenario="Offline", value=110000.0, file="v6.0/AMD/v1/results.csv", line=3),
        canonical_row(submitter="Dell", system="XE9785", scenario="Server", value=98000.0,
                      file="v6.0/Dell/v1/results.csv", line=2),
        canonical_row(submitter="Dell", system="XE9785", scenario="Offline", value=90000.0,
                      file="v6.0/Dell/v1/results.csv", line=3),
        canonical_row(submitter="Dell", system="XE9785", scenario="Server", value=150000.0, status="post-deadline",
                      file="v6.0/Dell/v2/results.csv", line=2),
        # nothing to compare with: AMD has no Interactive result
        canonical_row(submitter="Vultr", system="Cloud", scenario="Interactive", value=1.0,
                      file="v6.0/Vultr/v1/results.csv", line=2),
        canonical_row(round="v5.1", submitter="AMD", value=30000.0, file="v5.1/AMD/v1/results.csv", line=2),
        canonical_row(round="v5.1", submitter="Dell", system="XE9680", value=30300.0,
                      file="v5.1/Dell/v1/results.csv", line=2),
    ]
    results = write_canonical(tmp_path / "results.parquet", rows)
    agreement = tmp_path / "agreement.csv"
    run("compare", results, "-o", agreement, "--exit-zero", expect=0)
    rejected = tmp_path / "rejected.csv"
    rejected.write_text("source,outcome,codes,reason\nv6.0/Dell/v1/results.csv:9,rejected,malformed-number,x\n"
                        "v6.0/Dell/v1/results.csv:10,set-aside,cpu-only,y\n", encoding="utf-8")
    return {"results": results, "agreement": agreement, "rejected": rejected}


def test_metrics_files(tmp_path):
    paths = _inputs(tmp_path)
    out = tmp_path / "metrics.json"
    run("metrics", paths["results"], "--agreement", paths["agreement"], "--rejected",
        paths["rejected"], "-o", out, expect=0)
    assert json.loads(out.read_text()) == {"results": 8, "rejected": 1, "set_aside": 1}
    folder = tmp_path / "metrics"
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.json"))
    assert files == ["post_deadline.json", "v5.1/verified.json", "v5.1/verified/Dell.json",
                     "v6.0/post_deadline.json", "v6.0/post_deadline/Dell.json", "v6.0/verified.json",
                     "v6.0/verified/Dell.json", "v6.0/verified/Vultr.json", "verified.json"]
    read = lambda name: json.loads((folder / name).read_text())  # noqa: E731
    # verified and post-deadline never added together
    assert read("verified.json") == {"results": 7, "compared": 3, "agree": 2, "deviates": 1, "no_reference": 1,
                                     "excluded": 0, "agreement_rate": 0.666667}
    assert read("post_deadline.json") == {"results": 1, "compared": 1, "agree": 0, "deviates": 1,
                                          "no_reference": 0, "excluded": 0, "agreement_rate": 0.0}
    assert read("v6.0/verified/Dell.json")["agreement_rate"] == 0.5
    assert read("v5.1/verified/Dell.json")["agreement_rate"] == 1.0
    # a partner with nothing compared: zero counts and no rate, never null
    assert read("v6.0/verified/Vultr.json") == {"results": 1, "compared": 0, "agree": 0, "deviates": 0,
                                                "no_reference": 1, "excluded": 0}
    for path in folder.rglob("*.json"):
        data = json.loads(path.read_text())
        assert list(data) == [k for k in KEYS if k in data], path        # the same few keys everywhere
        assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in data.values()), path


def test_the_metrics_folder_is_replaced_whole(tmp_path):
    paths = _inputs(tmp_path)
    stale = tmp_path / "metrics" / "v4.1" / "verified" / "Gone.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    run("metrics", paths["results"], "--agreement", paths["agreement"], "--rejected",
        paths["rejected"], "-o", tmp_path / "metrics.json", expect=0)
    assert not stale.exists()
    assert (tmp_path / "metrics" / "verified.json").stat().st_mode & 0o044 == 0o044   # readable by others
    assert (tmp_path / "metrics").stat().st_mode & 0o055 == 0o055


def test_counts_of_an_empty_scope():
    import pandas as pd

    assert metrics_mod.counts(0, pd.Series([], dtype=str)) == {
        "results": 0, "compared": 0, "agree": 0, "deviates": 0, "no_reference": 0, "excluded": 0}


def test_without_output_the_totals_are_printed_and_nothing_is_written(tmp_path):
    paths = _inputs(tmp_path)
    done = run("metrics", paths["results"], "--agreement", paths["agreement"], "--rejected", paths["rejected"],
               expect=0)
    assert json.loads(done.stdout) == {"results": 8, "rejected": 1, "set_aside": 1}
    assert not (tmp_path / "metrics").exists() and not (tmp_path / "metrics.json").exists()
    details = tmp_path / "by-partner"
    run("metrics", paths["results"], "--agreement", paths["agreement"], "--rejected", paths["rejected"],
        "-o", "-", "--details-out", details, expect=0)
    assert (details / "verified.json").is_file()
