"""The whole output of a tree ingest, byte for byte, against a committed snapshot.

The reader of submission trees is tuned for speed; what it decides
must not move. The snapshot (tests/data/tree-snapshot.json) holds everything
the reader and ``ingest`` return for the real v5.1 tree of tests/real and for
a copy of it with a fault in most results (every record with its fields and
places, every finding, every disposition, every row), written by the reader
as it was before the speed work:

    .venv/bin/python tests/test_tree_snapshot.py     # rewrites the snapshot

Rewrite it only for a change of behaviour that is meant, and say so in the
commit."""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict
import shutil
import sys
from pathlib import Path

import pytest
from conftest import RULES, writable_copy

sys.path.insert(0, str(Path(__file__).resolve().parent))

REAL = Path(__file__).resolve().parent / "real"          # tests/real/PROVENANCE.md
TREE = "v5.1-submission-tree"
SNAPSHOT = Path(__file__).resolve().parent / "data" / "tree-snapshot.json"
DETAIL = "performance/run_1/mlperf_log_detail.txt"
RESULTS = "closed/{}/results/{}/{}/{}"



def _edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _line_of(path: Path, key: str) -> tuple[list[str], int]:
    lines = path.read_text(encoding="utf-8").split("\n")
    return lines, next(i for i, line in enumerate(lines) if f'"key": "{key}"' in line)


def faulty(root: Path) -> Path:
    """The real tree with a different fault in most of its results."""
    def res(sub, system, model, scenario) -> Path:
        return root / RESULTS.format(sub, system, model, scenario)
    amd0, amd1, amd2 = "8xMI300X_2xEPYC_9575F", "8xMI325X_2xEPYC_9575F_1", "8xMI325X_2xEPYC_9575F_2"
    # LoadGen logs: an invalid run, a wrong seed, a cut line, a duplicate key with another
    # value, a second "key" in a line, an escaped key, a key repeated with the same value,
    # a stray non-MLLOG line, CRLF line ends, a value that is a string, not UTF-8
    _edit(res("AMD", amd0, "llama2-70b-99", "Offline") / DETAIL, '"key": "result_validity", "value": "VALID"',
          '"key": "result_validity", "value": "INVALID"')
    _edit(res("AMD", amd0, "llama2-70b-99", "Server") / DETAIL, '"key": "effective_qsl_rng_seed", "value": 1780908523862526354',
          '"key": "effective_qsl_rng_seed", "value": 12345')
    path = res("AMD", amd1, "llama2-70b-99", "Server") / DETAIL
    lines, at = _line_of(path, "result_validity")
    lines[at] = lines[at][:-1]
    path.write_text("\n".join(lines), encoding="utf-8")
    path = res("AMD", amd1, "llama2-70b-99", "Offline") / DETAIL
    lines, at = _line_of(path, "result_samples_per_second")
    lines.append(lines[at].replace('"value": ', '"value": 1', 1))
    path.write_text("\n".join(lines), encoding="utf-8")
    path = res("AMD", amd1, "llama2-70b-99.9", "Offline") / DETAIL
    lines, at = _line_of(path, "loaded_qsl_set")
    lines[at] = lines[at].replace('"metadata"', '"key": "result_validity", "metadata"', 1)
    lines, at2 = _line_of(path, "loadgen_version")
    lines[at2] = lines[at2].replace('"key": "loadgen_version"', '"key": "result\\u005fvalidity"', 1)
    lines.insert(3, lines[3])
    lines.insert(5, "a line a tool added")
    path.write_text("\n".join(lines), encoding="utf-8")
    path = res("AMD", amd1, "llama2-70b-99.9", "Server") / DETAIL
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    _edit(res("AMD", amd2, "llama2-70b-99", "Offline") / DETAIL, '"key": "effective_min_duration_ms", "value": ',
          '"key": "effective_min_duration_ms", "value": "short"')
    path = res("AMD", amd2, "llama2-70b-99", "Interactive") / DETAIL
    path.write_bytes(path.read_bytes().replace(b"mlperf::logging", b"mlperf\xff:logging", 1))
    # companions: a missing summary, accuracy under target, an absent metric, a missing
    # and a failed compliance test, a missing detail log, an unknown model folder
    (res("AMD", amd0, "llama2-70b-99.9", "Offline") / "performance/run_1/mlperf_log_summary.txt").unlink()
    _edit(res("AMD", amd0, "llama2-70b-99.9", "Server") / "accuracy/accuracy.txt", "'rouge1': 4", "'rouge1': 3")
    _edit(res("AMD", amd0, "llama2-70b-99.9", "Interactive") / "accuracy/accuracy.txt", "'rougeL'", "'rougeX'")
    shutil.rmtree(root / "closed/AMD/compliance" / amd2 / "llama2-70b-99.9/Interactive/TEST06")
    _edit(root / "closed/AMD/compliance" / amd2 / "llama2-70b-99.9/Offline/TEST06/verify_accuracy.txt",
          "EOS check pass: True", "EOS check pass: False")
    (res("MiTAC", "8xMI325X_2xEPYC_9755", "llama2-70b-99.9", "Offline") / DETAIL).unlink()
    shutil.copytree(res("MiTAC", "8xMI325X_2xEPYC_9755", "llama2-70b-99.9", "Server"),
                    root / "closed/MiTAC/results/8xMI325X_2xEPYC_9755/no-such-model/Server")
    # system descriptions: one gone, one naming another submitter
    (root / "closed/Supermicro/systems/8xMI325X_2xEPYC_9575F.json").unlink()
    facts_path = root / "closed/GigaComputing/systems/8xMI325X_2xEPYC_9575F.json"
    facts = json.loads(facts_path.read_text(encoding="utf-8"))
    facts["submitter"] = "Someone"
    facts_path.write_text(json.dumps(facts), encoding="utf-8")
    return root


def _finding(f) -> dict:
    return f.to_dict()


def _where(source) -> dict:
    """A Source as its set parts (file, line, column, key, row, root)."""
    return {k: v for k, v in asdict(source).items() if v is not None}


def read_doc(root: Path, display: str, round_: str | None, workers: int | None) -> dict:
    from pipeline.readers import tree

    result = tree.read(root, display, RULES, round_=round_, workers=workers)
    return {
        "round": result.round,
        "records": [{"file": r.source.path, "line": r.line, "fields": r.fields,
                     "places": {name: _where(r.place(name)) for name in r.fields}}
                    for r in result.records],
        "findings": [_finding(f) for f in result.findings],
        "dispositions": [d.to_dict() for d in result.dispositions],
    }


def ingest_doc(cwd: Path, name: str) -> dict:
    from pipeline.ingest.submissions import ingest

    with contextlib.chdir(cwd):
        report = ingest(RULES, [Path(name)], None, "v5.1", "verified")
    doc = report.report().to_dict()
    doc["dispositions"] = [d.to_dict() for d in report.dispositions]
    return doc


def documents(tmp: Path, workers: int | None = None) -> dict:
    """Everything the snapshot holds; ``workers`` 1 reads serially, None in parallel
    when the tree is large enough (it is not: both ways are tested below)."""
    bad = faulty(writable_copy(REAL / TREE, tmp / "faulty"))
    return {
        "real tree, read": read_doc(REAL / TREE, "tree", None, workers),
        "real tree, ingest": ingest_doc(REAL, TREE),
        "faulty tree, read": read_doc(bad, "tree", "v5.1", workers),
        "faulty tree, read without a round": read_doc(bad, "tree", None, workers),
        "faulty tree, ingest": ingest_doc(tmp, "faulty"),
    }


def _text(doc: dict) -> str:
    return json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n"


@pytest.fixture(scope="module")
def expected() -> dict:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_tree_ingest_gives_the_snapshot_exactly(tmp_path, expected, workers, monkeypatch):
    from pipeline.readers import tree

    if workers == 2:   # the worker pool, even for 30 results
        monkeypatch.setattr(tree, "PARALLEL_MIN_SYSTEMS", 1)
    got = json.loads(_text(documents(tmp_path, workers)))
    for name in expected:
        assert got[name] == expected[name], name


def test_the_snapshot_holds_the_faults_it_is_meant_to(expected):
    """A snapshot of an all-clean tree would prove little: the faulty tree's
    findings cover the checks of the reader."""
    codes = {f["code"] for f in expected["faulty tree, read"]["findings"]}
    assert {"run-invalid", "wrong-seed", "malformed-log-line", "duplicate-key", "missing-file",
            "accuracy-below-target", "missing-metric", "compliance-missing", "compliance-failed",
            "path-mismatch", "unknown-model", "not-utf8"} <= codes, codes
    assert len(expected["real tree, read"]["records"]) == 30
    assert len(expected["real tree, ingest"]["rows"]) == 30


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        SNAPSHOT.write_text(_text(documents(Path(tmp), 1)), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
