"""Fuzzing every parser with generated text and bytes: no exception escapes,
the library returns findings.

In-process against the library, for speed. The CI profile runs a few dozen
examples per parser; ``make fuzz`` (``HYPOTHESIS_PROFILE=fuzz``) runs 5000.
Generated inputs mix pure noise with near-misses built from real shapes (the
control inputs of tests/hostile/, the LoadGen keys the rules read, the
manifest and ledger keys), which is where parsers break.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings, strategies as st

from conftest import RULES, canonical_row
from test_gate import base_repo  # noqa: F401  (the fixture: the gate tests' base repository)
from pipeline.analyses import claims, ledger as claims_ledger
from pipeline.ingest import submissions as ingest, table
from pipeline import readers
from pipeline.store import manifests as store
from pipeline.core import textcheck
from pipeline.core.findings import Finding
from pipeline.core.model import Source
from pipeline.readers import jsonsafe, loadgen, tree

HOSTILE = Path(__file__).resolve().parent / "hostile"
CONTROL = HOSTILE / "control"
# end-to-end examples (ingest validates a table each time) cost ~20x a parse
END_TO_END = max(8, settings.default.max_examples // 4)
fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# ---- strategies ------------------------------------------------------------------------

NASTY_TEXT = st.sampled_from([
    "", " ", "\x00", "\r", "\r\n", "\ufeff", "\u00a0", "\u202f", "Ã‚", "Â\u00a0", "â€™", "\x1b[2J", '"', "'", ",",
    ";", "\t", "\n", "NaN", "-inf", "1e999", "-0", "0x10", "１２", "٣", "100 282", "103,48", "1.042.110", "TODO",
    "N/A", "null", "[", "{", "}", "]", "*a", "&a", "!!python/object:os.system", "../", "/etc/passwd", "\\",
    "v6.0", "v9.9", "Server", "offline", "llama2-70b-99", "MI355X", "AMD Instinct MI355X 288GB HBM3E",
    # long whole numbers: past int64 and past the float range (normalize.parse_count never goes
    # through float, so any length parses and is then refused by the sanity bounds)
    "9" * 19, "1" + "0" * 30, "9" * 300, "9" * 400, "8x" + "9" * 25 + "xMI355X", "(x" + "9" * 20 + ")",
])
TEXT = st.one_of(NASTY_TEXT, st.text(max_size=24), st.lists(NASTY_TEXT, max_size=4).map("".join))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                    st.floats(allow_nan=True, allow_infinity=True), TEXT)
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(TEXT, inner, max_size=4), max_leaves=12)


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def mutated(lines: list[str], pieces) -> st.SearchStrategy[str]:
    """Lines of a real shape, some dropped, repeated, cut or replaced."""
    line = st.one_of(st.sampled_from(lines), pieces,
                     st.tuples(st.sampled_from(lines), st.integers(0, 200)).map(lambda t: t[0][:t[1]]))
    return st.lists(line, max_size=len(lines) + 6).map("\n".join) | st.lists(line, max_size=6).map("\r\n".join)


def some_bytes(text: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    return st.one_of(text.map(lambda t: t.encode("utf-8")), st.binary(max_size=400),
                     text.map(lambda t: t.encode("utf-16")),
                     text.map(lambda t: t.encode("latin-1", errors="replace")))


def assert_findings(found) -> None:
    assert all(isinstance(f, Finding) for f in found)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


# ---- LoadGen `:::MLLOG` lines ----------------------------------------------------------------

LOG_LINES = lines_of(CONTROL / "mlperf_log_detail.txt")
LOG_KEYS = [json.loads(line[len(loadgen.MARKER):])["key"] for line in LOG_LINES]
LOG_LINE = st.one_of(
    st.builds(lambda k, v: f"{loadgen.MARKER} " + json.dumps({"key": k, "value": v}),
              st.sampled_from(LOG_KEYS) | TEXT, JSON_VALUES),
    st.builds(lambda k, v: f"{loadgen.MARKER} " + json.dumps({"key": k, "value": v}), JSON_VALUES, JSON_VALUES),
    st.builds(lambda body: f"{loadgen.MARKER}{body}", TEXT),
    st.builds(lambda n: f'{loadgen.MARKER} {{"key": "x", "value": ' + "[" * n + "]" * n + "}",
              st.integers(0, 3000)),
    TEXT)
LOG_TEXT = mutated(LOG_LINES, LOG_LINE)


@given(text=LOG_TEXT)
def test_fuzz_loadgen_parse(text):
    log = loadgen.parse(text, "mlperf_log_detail.txt")
    assert_findings(log.findings)
    assert all(isinstance(k, str) for k in log.values)


@pytest.fixture(scope="module")
def one_result_tree(work) -> Path:
    from _loadgen import make_tree

    run_dir = work / "run"
    run_dir.mkdir()
    shutil.copyfile(CONTROL / "mlperf_log_detail.txt", run_dir / "mlperf_log_detail.txt")
    (run_dir / "mlperf_log_summary.txt").write_text("Result is : VALID\n", encoding="utf-8")
    return make_tree(work / "tree", {"Server": run_dir})


@fixture_ok
@given(data=some_bytes(LOG_TEXT))
def test_fuzz_loadgen_log_in_a_tree(data, one_result_tree):
    """The whole judgement of a result (rules, companions, value) on a fuzzed log."""
    log = next(one_result_tree.glob("results/*/*/Server/performance/run_1")) / "mlperf_log_detail.txt"
    log.write_bytes(data)
    result = tree.read(one_result_tree, "tree", RULES, workers=1)
    assert_findings(result.findings)
    assert len(result.records) + len(result.dispositions) == 1


# ---- CSVs: results template and checker summary ----------------------------------------------

def csv_text(header: list[str], rows: list[list[str]], quoting: bool) -> str:
    if not quoting:
        return "\n".join(",".join(r) for r in [header, *rows]) + "\n"
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    return out.getvalue()


def csv_strategy(control: Path) -> st.SearchStrategy[str]:
    header, first = list(csv.reader(io.StringIO(control.read_text(encoding="utf-8"))))[:2]
    cell = st.one_of(st.sampled_from(first), TEXT)
    columns = st.one_of(st.just(header), st.permutations(header),
                        st.lists(st.sampled_from(header) | TEXT, max_size=len(header) + 2))
    structured = st.builds(
        lambda cols, rows, quoting: csv_text(cols, rows, quoting), columns,
        st.lists(st.lists(cell, min_size=len(header) - 2, max_size=len(header) + 1), max_size=5), st.booleans())
    return st.one_of(structured, mutated(lines_of(control), TEXT))


def fuzz_ingest(path: Path, data: bytes, fmt: str | None, round_: str) -> None:
    path.write_bytes(data)
    assert_findings(readers.read(RULES, path, path.name, fmt).findings)
    report = ingest.ingest(RULES, [path], fmt, round_, "verified")
    assert_findings(report.findings)
    assert set(report.table.columns) == set(table.COLUMNS)


@settings(max_examples=END_TO_END)
@given(data=some_bytes(csv_strategy(CONTROL / "results.csv")), detected=st.booleans())
def test_fuzz_results_csv(data, detected, work):
    fuzz_ingest(work / "results.csv", data, None if detected else "results-csv", "v6.0")


@settings(max_examples=END_TO_END)
@given(data=some_bytes(csv_strategy(CONTROL / "checker.csv")), detected=st.booleans())
def test_fuzz_checker_csv(data, detected, work):
    fuzz_ingest(work / "summary.csv", data, None if detected else "mlcommons-summary-csv", "v5.1")


# ---- published JSON ---------------------------------------------------------------------------

RECORD = json.loads((CONTROL / "summary.json").read_text(encoding="utf-8"))[0]
JSON_DOC = st.one_of(
    st.lists(st.dictionaries(st.sampled_from(sorted(RECORD)) | TEXT, JSON_VALUES, max_size=8)
             | st.builds(lambda changes: {**RECORD, **changes},
                         st.dictionaries(st.sampled_from(sorted(RECORD)), JSON_VALUES, max_size=4)),
             max_size=4).map(lambda v: json.dumps(v, allow_nan=True)),
    JSON_VALUES.map(lambda v: json.dumps(v)),
    mutated(lines_of(CONTROL / "summary.json"), TEXT))


@settings(max_examples=END_TO_END)
@given(data=some_bytes(JSON_DOC), detected=st.booleans())
def test_fuzz_summary_json(data, detected, work):
    fuzz_ingest(work / "summary_results.json", data, None if detected else "mlcommons-summary-json", "v5.1")


@given(text=JSON_DOC, depth=st.integers(1, 40))
def test_fuzz_jsonsafe(text, depth):
    value, starts, found = jsonsafe.loads(text, "x.json", depth)
    assert_findings(found)
    assert value is None or not found


# ---- manifests ------------------------------------------------------------------------------

MANIFEST_LINES = lines_of(HOSTILE / "version-verified-after-deadline" / "v6.0" / "Dell" / "v1" / "manifest.yaml")
MANIFEST_KEYS = ["submitter", "round", "version", "submitted_at", "status", "files", "supersedes", "notes"]
MANIFEST_DOC = st.one_of(
    st.dictionaries(st.sampled_from(MANIFEST_KEYS) | TEXT, JSON_VALUES, max_size=8).map(
        lambda d: yaml.safe_dump(d, allow_unicode=True)),
    st.builds(lambda changes: yaml.safe_dump({**yaml.safe_load("\n".join(MANIFEST_LINES)), **changes}),
              st.dictionaries(st.sampled_from(MANIFEST_KEYS), JSON_VALUES, max_size=3)),
    mutated(MANIFEST_LINES, TEXT))


@fixture_ok
@given(data=some_bytes(MANIFEST_DOC))
def test_fuzz_manifest(data, work):
    folder = work / "submissions" / "v6.0" / "Dell" / "v1"
    if not folder.exists():
        folder.mkdir(parents=True)
        shutil.copyfile(CONTROL / "results.csv", folder / "results.csv")
    (folder / "manifest.yaml").write_bytes(data)
    version = store.version_at(folder, work / "submissions")
    store.load_manifest(RULES, version)
    assert_findings(version.findings)
    assert version.manifest is None or not [f for f in version.findings if f.code == "manifest-invalid"]


# ---- claims ledgers ------------------------------------------------------------------------

LEDGER_LINES = lines_of(CONTROL / "claims.yaml")
CLAIM = st.dictionaries(st.sampled_from(list(claims_ledger.CLAIM_KEYS)) | TEXT,
                        JSON_VALUES | st.dictionaries(st.sampled_from(list(claims_ledger.SELECTOR_KEYS)), SCALARS,
                                                      max_size=4), max_size=8)
LEDGER_DOC = st.one_of(
    st.fixed_dictionaries({"round": SCALARS, "claims": st.lists(CLAIM, max_size=3)},
                          optional={"tolerance_pct_points": SCALARS, "tolerance_ratio": SCALARS}).map(
        lambda d: yaml.safe_dump(d, allow_unicode=True)),
    mutated(LEDGER_LINES, TEXT))


@pytest.fixture(scope="module")
def results_frame() -> pd.DataFrame:
    return table.to_frame([
        canonical_row(),
        canonical_row(system="8xMI300X_2xEPYC_9575F", accelerator="MI300X", composition="MI300X:8",
                      value=50000.0, file="v6.0/AMD/v1/results.csv", line=3),
        canonical_row(submitter="Dell", system="PowerEdge_XE9785_8xMI355X", value=98000.0,
                      file="v6.0/Dell/v1/results.csv", line=2),
        canonical_row(system="87xMI355X_22xEPYC_9575F", nodes=11, total_accelerators=87, value=1042110.0,
                      scenario="Offline", file="v6.0/AMD/v1/results.csv", line=4),
        canonical_row(scenario="Offline", value=110000.0, file="v6.0/AMD/v1/results.csv", line=5)])


@fixture_ok
@given(data=some_bytes(LEDGER_DOC))
def test_fuzz_claims_ledger(data, work, results_frame):
    path = work / "claims.yaml"
    path.write_bytes(data)
    ledger = claims_ledger.read_ledger(RULES, path)
    assert_findings(ledger.findings)
    report = claims.check_claims(RULES, ledger, results_frame, "AMD")
    assert_findings(report.findings)
    json.dumps(report.rows, default=str)


# ---- text hygiene and format detection ----------------------------------------------------

@given(text=st.one_of(TEXT, st.text(), st.lists(NASTY_TEXT | st.text(max_size=5)).map("".join)))
@example(text="*a")            # an alias, an anchor and a merge key: every refusal of the YAML guard, each run
@example(text="a: &b 1\nc: *b\n")
@example(text="<<: {a: 1}")
def test_fuzz_textcheck(text):
    for checks in (textcheck.TABULAR, textcheck.JSON, textcheck.NONE):
        assert_findings(textcheck.check(text, "x", checks))
    assert_findings(textcheck.yaml_guard(text, Source("x.yaml"), "ledger-invalid", aliases=False))


@fixture_ok
@given(data=st.one_of(st.binary(max_size=300), some_bytes(csv_strategy(CONTROL / "results.csv")),
                      some_bytes(JSON_DOC)))
def test_fuzz_format_detection(data, work):
    path = work / "detect.bin"
    path.write_bytes(data)
    assert readers.detect(RULES, path) in (None, *readers.FORMATS)


def test_a_csv_field_longer_than_the_csv_module_limit_is_read(work):
    """A quoted field of 200,000 characters (with a line break inside): the csv
    module's 128 KiB field limit raised an error (exit 4)."""
    path = work / "long-field.csv"
    lines = (CONTROL / "results.csv").read_text(encoding="utf-8").splitlines()
    path.write_text(lines[0] + "\n" + lines[1].replace("PowerEdge", '"' + "P" * 200_000 + '\nx"', 1) + "\n",
                    encoding="utf-8")
    report = ingest.ingest(RULES, [path], None, "v6.0", "verified")
    assert_findings(report.findings)
    assert len(report.table) + len(report.dispositions) == 1


# ---- the gate, on any file a partner can write ------------------------------------------------
# A partner's pull request adds a version folder: a manifest and files in every
# input format, with any text in every numeric column. Whatever it holds, the
# gate judges it (exit 0 or 1) and never crashes (exit 4). Each example is one
# gate run in a real git repository (a base holding AMD's and Dell's v1).

GATE_EXAMPLES = max(5, settings.default.max_examples // 10)
NUMBER_TEXT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=True, allow_infinity=True).map(lambda x: f"{x:.17g}"),
    st.integers(min_value=-2**80, max_value=2**80).map(str),
    st.sampled_from(["0", "-0", "-0.0", "5e-324", "1e308", "1.7976931348623157e308", "1e999", "-1e999", "NaN",
                     "nan", "inf", "Infinity", "9" * 400, "1e-7", "1e12", "8", "8.0", "0x10", "1_000"]),
    TEXT)
NUMERIC_COLUMNS = {"results-csv": ("accelerators_per_node", "nodes", "value"),
                   "mlcommons-summary-csv": ("Result", "number_of_nodes", "accelerators_per_node",
                                             "total_accelerators")}
CONTROLS = {"results-csv": ("results.csv", CONTROL / "results.csv"),
            "mlcommons-summary-csv": ("summary.csv", CONTROL / "checker.csv")}


def numbers_in(fmt: str) -> st.SearchStrategy[bytes]:
    """The control file's rows, every numeric column drawn from NUMBER_TEXT."""
    header, *rows = list(csv.reader(io.StringIO(CONTROLS[fmt][1].read_text(encoding="utf-8"))))
    columns = [header.index(c) for c in NUMERIC_COLUMNS[fmt]]

    def build(draws: list[list[str]]) -> bytes:
        out = []
        for row, drawn in zip(rows * len(draws), draws):
            row = list(row)
            for at, text in zip(columns, drawn):
                row[at] = text
            out.append(row)
        return csv_text(header, out, quoting=True).encode("utf-8")
    return st.lists(st.lists(NUMBER_TEXT, min_size=len(columns), max_size=len(columns)),
                    min_size=1, max_size=4).map(build)


def parquet_bytes(rows: list[dict]) -> bytes:
    out = io.BytesIO()
    pd.DataFrame(rows, columns=list(csv.reader(io.StringIO(lines_of(CONTROL / "results.csv")[0])))[0]
                 ).astype("object").to_parquet(out)
    return out.getvalue()


RESULTS_HEADER = next(csv.reader(io.StringIO(lines_of(CONTROL / "results.csv")[0])))
PARQUET = st.lists(st.fixed_dictionaries({c: st.one_of(TEXT, NUMBER_TEXT) for c in RESULTS_HEADER}),
                   max_size=3).map(parquet_bytes)
PARTNER_FILE = st.one_of(
    st.tuples(st.just("results-csv"), st.just("results.csv"), some_bytes(csv_strategy(CONTROL / "results.csv"))),
    st.tuples(st.just("results-csv"), st.just("results.csv"), numbers_in("results-csv")),
    st.tuples(st.just("mlcommons-summary-csv"), st.just("summary.csv"),
              some_bytes(csv_strategy(CONTROL / "checker.csv"))),
    st.tuples(st.just("mlcommons-summary-csv"), st.just("summary.csv"), numbers_in("mlcommons-summary-csv")),
    st.tuples(st.just("mlcommons-summary-json"), st.just("summary_results.json"), some_bytes(JSON_DOC)),
    st.tuples(st.just("parquet"), st.just("results.parquet"), PARQUET),
    st.tuples(st.just("submission-tree"), st.just("tree"), some_bytes(LOG_TEXT)))


@pytest.fixture(scope="module")
def gate_repo(base_repo, tmp_path_factory) -> Path:
    """main: the project's schemas with round v9.9 (deadline ahead), AMD's and
    Dell's v1 (a copy of the gate tests' base); the branch ``pr`` is where each
    example's version is committed."""
    from gitrepo import git

    repo = tmp_path_factory.mktemp("fuzz-gate") / "repo"
    shutil.copytree(base_repo, repo, symlinks=True)
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def _seal(folder: Path, name: str, fmt: str, data: bytes, tree_source: Path) -> str:
    """Write the partner's file (a tree: the generated tree, its log replaced by
    DATA) and return its sha256 as the manifest seals it."""
    from pipeline.store.hashes import sha256_tree

    if fmt == "submission-tree":
        shutil.copytree(tree_source.parent.parent, folder / name)
        log = next((folder / name).rglob("mlperf_log_detail.txt"))
        log.write_bytes(data)
        return sha256_tree(folder / name)[0]
    (folder / name).write_bytes(data)
    return hashlib.sha256(data).hexdigest()


@settings(max_examples=GATE_EXAMPLES, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(partner_file=PARTNER_FILE, manifest=st.one_of(st.none(), some_bytes(MANIFEST_DOC)))
def test_fuzz_the_gate_never_exits_4(partner_file, manifest, gate_repo, one_result_tree):
    from conftest import run
    from gitrepo import commit, git

    fmt, name, data = partner_file
    git(gate_repo, "reset", "-q", "--hard", "main")
    git(gate_repo, "clean", "-qfdx")
    folder = gate_repo / "submissions" / "v9.9" / "Dell" / "v2"
    folder.mkdir(parents=True)
    digest = _seal(folder, name, fmt, data, one_result_tree)
    (folder / "manifest.yaml").write_bytes(manifest if manifest is not None else (
        "submitter: Dell\nround: v9.9\nversion: 2\nsubmitted_at: '2026-02-20T10:00:00+00:00'\n"
        f"status: verified\nfiles:\n- path: {name}\n  format: {fmt}\n  sha256: {digest}\n").encode("utf-8"))
    commit(gate_repo, "Dell v2")
    with contextlib.chdir(gate_repo):
        result = run("gate", "--base", "main", "--format", "json")
    assert result.exit_code in (0, 1), (result.exit_code, result.stderr[-2000:])
    assert "internal error" not in result.stderr
    json.loads(result.stdout)
