"""Every number a partner can write, through every numeric path: a value or
count of 0, -0.0, a subnormal, 1e308, the largest float, inf or nan is
`invalid-value` where it is read, and no later step (ingest, compare,
partition, scaling, claims, report, gate) raises or exits 4; every input row
is accepted or rejected with a finding.

Hypothesis drives the values; the special ones are explicit examples, so
they run whatever the profile."""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st

from conftest import RULES, canonical_row, read_csv, run, write_canonical
from gitrepo import commit, git
from test_gate import DELL_SYSTEM, HEADER, MI355X, ROUND, base_repo, sealed_version  # noqa: F401

from pipeline.ingest import table
from pipeline.ingest.resolve import bounds

LOW, HIGH = bounds(RULES)["value"]   # the table schema's plausible range


def plausible(value: float) -> bool:
    return LOW <= value <= HIGH


SPECIAL = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1e-300, 1e-7, 1e-6, 1e12, 1.0000000000000002e12,
           1e300, 1e308, sys.float_info.max, math.inf, -math.inf, math.nan, 100282.0]
FLOATS = st.one_of(st.sampled_from(SPECIAL), st.floats(allow_nan=True, allow_infinity=True))
SPELLINGS = (repr, lambda x: f"{x:.17g}", lambda x: f"{x:e}")
COUNTS = ["0", "-0", "-0.0", "1e308", "1.7976931348623157e308", "inf", "nan", "9" * 30, "8", "8.0"]
LEDGER = """\
round: v6.0
claims:
  - id: ratio
    kind: ratio
    subject: {submitter: AMD, model: llama2-70b-99, scenario: Server, nodes: 1}
    comparator: {submitter: Dell}
    claimed_pct: 100
  - id: scaling
    kind: scaling
    subject: {submitter: AMD, nodes: 2}
    claimed_pct: 90
  - id: partners
    kind: reproducibility
    subject: {accelerator: MI355X}
    claimed_pct: 4
"""


def ok(result) -> None:
    """Data never crashes a command: exit 0 (clean) or 1 (a finding), never 4."""
    assert result.exit_code in (0, 1), (result.exit_code, result.output, result.exception)
    assert "internal error" not in result.stderr


def partner_csv(rows: list[tuple]) -> str:
    """results-csv rows: (submitter, system, per node, nodes, scenario, value)."""
    lines = [HEADER] + [f"{sub},{system},{MI355X},{per_node},{nodes},llama2-70b-99,{sc},{value},Tokens/s,"
                        "closed,available" for sub, system, per_node, nodes, sc, value in rows]
    return "\n".join(lines) + "\n"


def downstream(work: Path, results: Path, rejected: Path | None, versions: Path | None) -> None:
    """partition, compare (with the two sets), scaling, claims and the report of a table."""
    ok(run("partition", results, "--verified-out", work / "verified.csv", "--post-deadline-out", work / "late.csv"))
    ok(run("compare", results, "-o", work / "agreement.csv", "--summary-out", work / "summary.json",
           "--verified-dir", work / "verified", "--post-deadline-dir", work / "post"))
    ok(run("scaling", results, "-o", work / "scaling.json"))
    (work / "claims.yaml").write_text(LEDGER, encoding="utf-8")
    ok(run("claims", work / "claims.yaml", results, "-o", work / "claims.json"))
    if rejected is not None and (work / "agreement.csv").exists():
        ok(run("report", results, "--agreement", work / "agreement.csv", "--rejected", rejected,
               "--versions", versions, "--scaling", work / "scaling.json", "--claims", work / "claims.json",
               "-o", work / "report.html"))


def dell_rows(values: list[float], text) -> list[tuple]:
    """One Dell result per value, each on its own system (the same scenario)."""
    return [("Dell", f"{DELL_SYSTEM}_{i}", 8, 1, "Server", text(v)) for i, v in enumerate(values)]


def values_test(test):
    """The special values as explicit examples (they run whatever the
    profile), then a few generated ones."""
    for reference, partners in ((100282.0, SPECIAL), (1e-6, [1e12, 100282.0]), (1e12, [1e-6])):
        test = example(reference=reference, partners=partners, spelling=0)(test)
    return settings(max_examples=max(3, settings.default.max_examples // 20))(test)


@values_test
@given(reference=FLOATS, partners=st.lists(FLOATS, min_size=1, max_size=6),
       spelling=st.integers(0, len(SPELLINGS) - 1))
def test_values_from_a_partner_file_through_every_step(tmp_path_factory, reference, partners, spelling):
    work = tmp_path_factory.mktemp("values")
    text = SPELLINGS[spelling]
    amd = work / "amd.csv"
    amd.write_text(partner_csv([("AMD", "8xMI355X_2xEPYC_9575F", 8, 1, "Server", text(reference)),
                                ("AMD", "16xMI355X_4xEPYC_9575F", 8, 2, "Server", text(reference * 1.9))]),
                   encoding="utf-8")
    dell = work / "dell.csv"
    dell.write_text(partner_csv(dell_rows(partners, text)), encoding="utf-8")
    results, rejected, versions = work / "results.csv", work / "rejected.csv", work / "versions.csv"
    ingested = run("ingest", amd, dell, "--status", "verified", "--round", "v6.0", "-o", results,
                   "--rejected-out", rejected, "--versions-out", versions, "--format", "json")
    ok(ingested)
    doc = json.loads(ingested.stdout)
    accepted = table.read(results)
    assert len(accepted) + len(read_csv(rejected)) == 2 + len(partners)     # every row accounted for
    assert all(plausible(v) for v in accepted["value"])
    invalid = {(f["file"].rsplit("/", 1)[-1], f["place"]) for f in doc["findings"] if f["code"] == "invalid-value"}

    def written(x: float) -> float:   # the value as the file states it: f"{x:e}" rounds 1e12 + 2e-4 into range
        return float(text(x))

    for line, value in enumerate(partners, 2):
        assert plausible(written(value)) or ("dell.csv", f"line {line}, column value") in invalid, value
    assert plausible(written(reference)) or ("amd.csv", "line 2, column value") in invalid
    downstream(work, results, rejected, versions)


@values_test
@given(reference=FLOATS, partners=st.lists(FLOATS, min_size=1, max_size=6), spelling=st.just(0))
def test_values_in_a_canonical_table_through_every_step(tmp_path_factory, reference, partners, spelling):
    """A table given directly (not from ingest): a value outside the plausible
    range is refused where the table is read, with a finding."""
    work = tmp_path_factory.mktemp("table")
    rows = [canonical_row(value=reference),
            canonical_row(system="16xMI355X", composition="MI355X:16", nodes=2, total_accelerators=16,
                          value=reference, file="v6.0/AMD/v1/results.csv", line=3)]
    rows += [canonical_row(submitter="Dell", system=f"{DELL_SYSTEM}_{i}", value=v,
                           file="v6.0/Dell/v1/results.csv", line=i + 2) for i, v in enumerate(partners)]
    results = write_canonical(work / "results.csv", rows)
    accepted, found = table.load(RULES, results)
    refused = {(f.where.file, f.where.line) for f in found if f.severity == "error"}
    assert len(accepted) + len(refused) == len(rows) and all(plausible(v) for v in accepted["value"])
    downstream(work, results, None, None)


@pytest.mark.parametrize("count", COUNTS)
def test_a_count_from_a_partner_file_is_judged_where_it_is_read(tmp_path, count):
    dell = tmp_path / "dell.csv"
    dell.write_text(partner_csv([("Dell", DELL_SYSTEM, count, 1, "Server", "100000"),
                                 ("Dell", DELL_SYSTEM, 8, count, "Offline", "100000")]), encoding="utf-8")
    results, rejected = tmp_path / "results.csv", tmp_path / "rejected.csv"
    ok(run("ingest", dell, "--status", "verified", "--round", "v6.0", "-o", results, "--rejected-out", rejected))
    assert len(table.read(results)) + len(read_csv(rejected)) == 2
    if count not in ("8", "8.0"):
        refused = read_csv(rejected)
        assert len(refused) == 2                           # both rows carry the absurd count
        assert all(r["codes"] in ("invalid-value", "malformed-number") for r in refused), refused


@pytest.mark.parametrize("column, value", [("nodes", 10 ** 30), ("total_accelerators", 2 ** 70),
                                           ("composition", "MI355X:" + "9" * 5000)])
def test_an_absurd_count_in_a_canonical_table_is_refused(tmp_path, column, value):
    rows = [canonical_row(), canonical_row(submitter="Dell", system=DELL_SYSTEM, file="v6.0/Dell/v1/r.csv", line=2)]
    path = tmp_path / "results.csv"
    write_canonical(path, rows)
    text = path.read_text(encoding="utf-8").splitlines()
    header = text[0].split(",")
    cells = text[2].split(",")
    cells[header.index(column)] = str(value)
    path.write_text("\n".join([text[0], text[1], ",".join(cells)]) + "\n", encoding="utf-8")
    accepted, found = table.load(RULES, path)
    assert len(accepted) == 1 and [(f.code, f.where.column) for f in found] == [("invalid-value", column)]
    downstream(tmp_path, path, None, None)


# ---- the gate ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gate_repo(base_repo, tmp_path_factory) -> Path:
    """A copy of test_gate's base (AMD v1 and Dell v1 on main), on a branch."""
    copy = tmp_path_factory.mktemp("numeric-gate") / "repo"
    shutil.copytree(base_repo, copy, symlinks=True)
    git(copy, "checkout", "-q", "-b", "pr")
    return copy


def gate_on(repo: Path, text: str):
    """Dell v2 holding TEXT, committed on the branch; the gate's JSON report."""
    git(repo, "reset", "-q", "--hard", "main")
    git(repo, "clean", "-qfdx")
    sealed_version(repo, "Dell", 2, text)
    commit(repo, "Dell v2")
    with contextlib.chdir(repo):
        result = run("gate", "--base", "main", "--format", "json")
    ok(result)
    return result.exit_code, json.loads(result.stdout)


def test_the_gate_judges_every_value_and_never_exits_4(gate_repo):
    values = [repr(v) for v in SPECIAL] + ["1e999", "-1e999", "Infinity", "NaN"]
    code, doc = gate_on(gate_repo, partner_csv(dell_rows(values, str)))
    assert code == 1
    compared = {r["system"] for r in doc["rows"] if r.get("system")}
    refused = {f["place"] for f in doc["findings"] if f["code"] in ("invalid-value", "malformed-number")}
    for line, value in enumerate(values, 2):
        accepted = value in ("1e-06", "1000000000000.0", "100282.0")
        assert (f"{DELL_SYSTEM}_{line - 2}" in compared) is accepted, value    # every row accounted for
        assert (f"line {line}, column value" in refused) is not accepted, value


def test_the_gate_judges_every_count_and_never_exits_4(gate_repo):
    rows = [("Dell", f"{DELL_SYSTEM}_{i}", count, 1, "Server", "100000") for i, count in enumerate(COUNTS)]
    code, doc = gate_on(gate_repo, partner_csv(rows))
    assert code == 1
    refused = {f["place"] for f in doc["findings"] if f["code"] in ("invalid-value", "malformed-number")}
    for line, count in enumerate(COUNTS, 2):
        assert (f"line {line}, column accelerators_per_node" in refused) is (count not in ("8", "8.0")), count
