"""``submission-tree``: real MLPerf submission folders, read in parallel.

The real v5.1 tree (tests/real) is read in place; mutated copies are made in tmp dirs;
small trees around genuine LoadGen runs come from tests/_loadgen.py.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from _loadgen import generated_runs, make_tree, relaxed_rules
from pipeline.core.rules import Rules
from pipeline import readers
from pipeline.ingest.submissions import ingest
from pipeline.readers import tree
from conftest import RULES, writable_copy

SHARED = Path(__file__).resolve().parent / "real"   # tests/real/PROVENANCE.md
TREE = SHARED / "v5.1-submission-tree"
PUBLISHED = SHARED / "v5.1-summary_results.json"
DETAIL = "performance/run_1/mlperf_log_detail.txt"
V60_SEEDS = (2465351861681999779, 14276810075590677512, 3936089224930324775)
V51_SEEDS = (1780908523862526354, 14771362308971278857, 18209322760996052031)



def edit_key(log: Path, key: str, old: str, new: str) -> None:
    """Change the value of the first ``key`` line of a detail log."""
    lines = log.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if f'"key": "{key}"' in line)
    assert f'"value": {old}' in lines[at]
    lines[at] = lines[at].replace(f'"value": {old}', f'"value": {new}', 1)
    log.write_text("\n".join(lines), encoding="utf-8")


def result_dir(root: Path, submitter: str, system: str, model: str, scenario: str) -> Path:
    return root / "closed" / submitter / "results" / system / model / scenario


def by_key(records) -> dict[tuple, object]:
    return {(r.fields["submitter"], r.fields["system"], r.fields["model"], r.fields["scenario"]): r
            for r in records}


# ---- detection -------------------------------------------------------------------------

def test_a_tree_is_detected_at_root_division_and_submitter(tmp_path):
    for path in (TREE, TREE / "closed", TREE / "closed" / "AMD"):
        assert readers.detect(RULES, path) == tree.NAME
    assert readers.detect(RULES, TREE / "closed" / "AMD" / "results") is None
    assert readers.detect(RULES, tmp_path) is None


# ---- the real v5.1 tree ---------------------------------------------------------------

@pytest.fixture(scope="module")
def real_read():
    return tree.read(TREE, "v5.1-tree", RULES)


def test_the_real_tree_is_read_whole(real_read):
    assert len(real_read.records) == 30 and not real_read.dispositions
    assert not [f for f in real_read.findings if f.severity == "error"]
    assert real_read.round == "v5.1"


def test_every_result_equals_the_published_value(real_read):
    published = {(r["Submitter"], r["Platform"], r["Model"], r["Scenario"]): r
                 for r in json.loads(PUBLISHED.read_text(encoding="utf-8"))}
    for key, record in by_key(real_read.records).items():
        row = published[key]
        assert float(record.fields["value"]) == row["Performance_Result"], key
        assert record.fields["units"] == row["Performance_Units"], key
        assert record.fields["accelerator"] == row["Accelerator"], key
        assert record.fields["division"] == row["Category"], key


def test_records_carry_the_system_facts_and_their_places(real_read):
    record = by_key(real_read.records)[("AMD", "8xMI300X_2xEPYC_9575F", "llama2-70b-99", "Interactive")]
    assert record.fields["value"] == "8840.42"
    assert (record.fields["accelerators_per_node"], record.fields["nodes"]) == ("8", "1")
    assert record.fields["availability"] == "available"
    assert record.source.file.endswith(f"Interactive/{DETAIL}")
    assert record.place("value") == record.where.at(key="result_completed_tokens_per_second")
    system = record.place("accelerator")
    assert system.file.endswith("systems/8xMI300X_2xEPYC_9575F.json") and system.key == "accelerator_model_name"


def test_ingest_reads_a_raw_tree():
    report = ingest(RULES, [TREE], status="verified")
    assert len(report.table) == 30 and report.report().ok
    assert set(report.table["round"]) == {"v5.1"}
    assert set(report.table["accelerator"]) == {"MI300X", "MI325X"}
    assert report.table["source"].str.contains(DETAIL).all()
    again = ingest(RULES, [TREE / "closed" / "MiTAC"], status="verified", round_="v5.1")
    assert len(again.table) == 6


def test_a_stated_round_judges_the_tree_by_its_rules():
    result = tree.read(TREE / "closed" / "MiTAC", "MiTAC", RULES, round_="v6.0")
    assert not result.records and len(result.dispositions) == 6
    assert all("wrong-seed" in d.codes for d in result.dispositions)


# ---- the real v6.1 tree of the reference vendor -------------------------------------------

TREE61 = SHARED / "v6.1-submission-tree"
PUBLISHED61 = Path(__file__).resolve().parent.parent / "published" / "v6.1" / "summary.csv"
# The results the cut-down tree cannot give, and why (tests/real/PROVENANCE.md)
UNREADABLE61 = {
    **{("8xMI355X_2xEPYC_9575F", "llama2-70b-99.9", s): ("compliance-missing", "TEST06")
       for s in ("Offline", "Server", "Interactive")},
    **{(system, "dlrm-v3", s): ("missing-file", DETAIL)
       for system in ("8xMI350X_2xEPYC_9575F", "8xMI355X_2xEPYC_9575F") for s in ("Offline", "Server")},
}


@pytest.fixture(scope="module")
def real_read61():
    return tree.read(TREE61, "v6.1-tree", RULES)


def _published61() -> dict[tuple, dict]:
    import csv
    import io

    text = PUBLISHED61.read_text(encoding="utf-8")
    return {(r["Organization"], r["Platform"], r["Model"], r["Scenario"], r["Division"]): r
            for r in csv.DictReader(io.StringIO(text, newline=""))}


def test_every_readable_v61_result_equals_the_published_value(real_read61):
    assert real_read61.round == "v6.1"     # known from the round's seeds
    published = _published61()
    closed = {k for k in published if k[0] == "AMD" and k[4] == "closed"}
    assert len(closed) == 15
    read = {}
    for r in real_read61.records:
        f = r.fields
        key = (f["submitter"], f["system"], f["model"], f["scenario"], f["division"])
        read[key] = r
        row = published[key]
        assert float(f["value"]) == float(row["Result"]), key
        assert f["units"] == row["Units"], key
        assert f["accelerator"] == row["accelerator_model_name"], key
        assert int(f["nodes"]) == int(row["number_of_nodes"]), key
    assert len(read) == 8
    # every closed AMD result is read or accounted for, none twice
    rejected = {tuple(d.source.split("/results/", 1)[1].split("/")[:3]) for d in real_read61.dispositions}
    assert {k[1:4] for k in read} | rejected == {k[1:4] for k in closed}
    assert not {k[1:4] for k in read} & rejected


def test_the_v61_results_the_cut_down_tree_cannot_give_are_located_findings(real_read61):
    assert len(real_read61.dispositions) == len(UNREADABLE61) == 7
    for d in real_read61.dispositions:
        system, model, scenario = d.source.split("/results/", 1)[1].split("/")[:3]
        code, missing = UNREADABLE61[(system, model, scenario)]
        assert d.outcome == "rejected" and d.codes == code, d.source
        [finding] = [f for f in real_read61.findings if f.code == code
                     and f"/{system}/{model}/{scenario}/" in f.file]
        assert finding.severity == "error" and finding.file.endswith(f"{system}/{model}/{scenario}/{missing}")
    assert not [f for f in real_read61.findings if f.severity == "error" and f.code not in
                {"compliance-missing", "missing-file"}]


def test_the_v61_cluster_keeps_its_nine_nodes(real_read61):
    [offline] = [r for r in real_read61.records if r.fields["system"] == "9x8xMI355X_2xEPYC_9575F"
                 and r.fields["scenario"] == "Offline"]
    assert (offline.fields["nodes"], offline.fields["accelerators_per_node"]) == ("9", "8")
    assert offline.place("value") == offline.where.at(key="result_tokens_per_second")
    assert offline.source.file.endswith(f"9x8xMI355X_2xEPYC_9575F/gpt-oss-120b/Offline/{DETAIL}")


# ---- mutated copies of the real tree --------------------------------------------------

@pytest.fixture(scope="module")
def mutated(tmp_path_factory):
    """The real tree with one fault per result below; everything else intact."""
    root = writable_copy(TREE, tmp_path_factory.mktemp("mutated") / "tree")
    amd = ("AMD", "8xMI300X_2xEPYC_9575F", "llama2-70b-99")
    edit_key(result_dir(root, *amd, "Offline") / DETAIL, "result_validity", '"VALID"', '"INVALID"')
    edit_key(result_dir(root, "AMD", "8xMI325X_2xEPYC_9575F_2", "llama2-70b-99", "Interactive") / DETAIL,
             "result_first_token_99.00_percentile_latency_ns", "334009081", "500000000")
    edit_key(result_dir(root, "GigaComputing", "8xMI325X_2xEPYC_9575F", "llama2-70b-99", "Server") / DETAIL,
             "effective_sample_index_rng_seed", str(V51_SEEDS[1]), "12345")
    (result_dir(root, "MiTAC", "8xMI325X_2xEPYC_9755", "llama2-70b-99.9", "Offline") / DETAIL).unlink()
    (root / "closed" / "Supermicro" / "systems" / "8xMI325X_2xEPYC_9575F.json").unlink()
    broken = result_dir(root, "AMD", "8xMI325X_2xEPYC_9575F_1", "llama2-70b-99", "Server") / DETAIL
    lines = broken.read_text().split("\n")
    lines[19] = lines[19][:-1]
    broken.write_text("\n".join(lines))
    return root, tree.read(root, "tree", RULES, round_="v5.1")


def rejection(result, path: str):
    """The disposition of the one rejected result whose path holds ``path``."""
    found = [d for d in result.dispositions if path in d.source]
    assert len(found) == 1, (path, [d.source for d in result.dispositions])
    return found[0]


def test_the_rest_of_a_faulty_tree_is_still_read(mutated):
    _, result = mutated
    assert len(result.records) == 30 - 5 - 4     # five faulty results, four without a system
    assert len(result.dispositions) == 9


def test_an_invalid_run_is_rejected(mutated):
    _, result = mutated
    d = rejection(result, "8xMI300X_2xEPYC_9575F/llama2-70b-99/Offline")
    assert d.codes == "run-invalid"
    f = next(f for f in result.findings if f.code == "run-invalid")
    assert f.file.endswith(f"8xMI300X_2xEPYC_9575F/llama2-70b-99/Offline/{DETAIL}")
    assert (f.place.split(", ")[1], f.expected, f.found) == ("key result_validity", "VALID", "INVALID")


def test_a_ttft_over_the_interactive_limit_is_rejected(mutated):
    _, result = mutated
    d = rejection(result, "8xMI325X_2xEPYC_9575F_2/llama2-70b-99/Interactive")
    assert d.codes == "latency-limit-exceeded"
    f = next(f for f in result.findings if f.code == "latency-limit-exceeded")
    assert f.place.endswith("key result_first_token_99.00_percentile_latency_ns")
    assert (f.expected, f.found) == ("<= 450 ms (Interactive TTFT limit)", "500 ms")


def test_a_wrong_seed_is_rejected(mutated):
    _, result = mutated
    d = rejection(result, "GigaComputing/results/8xMI325X_2xEPYC_9575F/llama2-70b-99/Server")
    assert d.codes == "wrong-seed"
    f = next(f for f in result.findings if f.code == "wrong-seed")
    assert (f.expected, f.found) == (str(V51_SEEDS[1]), "12345")
    assert f.place.endswith("key effective_sample_index_rng_seed")


def test_a_missing_detail_log_rejects_only_its_result(mutated):
    _, result = mutated
    d = rejection(result, "8xMI325X_2xEPYC_9755/llama2-70b-99.9/Offline")
    assert d.codes == "missing-file"
    assert ("MiTAC", "8xMI325X_2xEPYC_9755", "llama2-70b-99", "Offline") in by_key(result.records)


def test_a_missing_system_description_rejects_its_results(mutated):
    _, result = mutated
    gone = [d for d in result.dispositions if "/Supermicro/" in d.source]
    assert len(gone) == 4 and {d.codes for d in gone} == {"missing-file"}
    f = next(f for f in result.findings if f.code == "missing-file" and "systems" in f.file)
    assert f.file.endswith("closed/Supermicro/systems/8xMI325X_2xEPYC_9575F.json")


def test_a_malformed_log_line_rejects_with_its_line_number(mutated):
    _, result = mutated
    d = rejection(result, "8xMI325X_2xEPYC_9575F_1/llama2-70b-99/Server")
    assert d.codes == "malformed-log-line"
    f = next(f for f in result.findings if f.code == "malformed-log-line")
    assert f.place == "line 20"


def test_ingest_accounts_for_every_result_of_a_faulty_tree(mutated):
    root, _ = mutated
    report = ingest(RULES, [root], status="verified", round_="v5.1")
    assert len(report.table) == 21
    assert sum(d.outcome == "rejected" for d in report.dispositions) == 9
    assert not report.report().ok


# ---- system descriptions --------------------------------------------------------------

@pytest.fixture
def giga(tmp_path) -> Path:
    """A writable copy of GigaComputing's submission (six results)."""
    return writable_copy(TREE / "closed" / "GigaComputing", tmp_path / "closed" / "GigaComputing")


def system_json(sub: Path) -> Path:
    return sub / "systems" / "8xMI325X_2xEPYC_9575F.json"


def test_numbers_given_as_strings_are_accepted(giga):
    facts = json.loads(system_json(giga).read_text())
    facts.update(accelerators_per_node="8", number_of_nodes="1")
    system_json(giga).write_text(json.dumps(facts))
    report = ingest(RULES, [giga], status="verified")
    assert len(report.table) == 6 and set(report.table["total_accelerators"]) == {8}


def test_system_facts_must_fit_the_path(giga):
    facts = json.loads(system_json(giga).read_text())
    facts.update(submitter="Gigabyte", division="open")
    del facts["accelerator_memory_capacity"]
    system_json(giga).write_text(json.dumps(facts))
    result = tree.read(giga, "giga", RULES)
    assert not result.records
    found = {(f.code, f.place) for f in result.findings}
    assert ("path-mismatch", "key submitter") in found and ("path-mismatch", "key division") in found
    assert ("missing-system-field", "key accelerator_memory_capacity") in found


def test_a_system_description_that_is_not_json_is_a_finding(giga):
    system_json(giga).write_text("[" * 100_000)
    result = tree.read(giga, "giga", RULES)
    assert not result.records and {d.codes for d in result.dispositions} == {"too-deeply-nested"}


def test_accuracy_below_target_rejects_in_closed_but_not_in_open(tmp_path):
    for division in ("closed", "open"):
        sub = writable_copy(TREE / "closed" / "GigaComputing", tmp_path / division / "GigaComputing")
        facts = json.loads(system_json(sub).read_text())
        facts["division"] = division
        system_json(sub).write_text(json.dumps(facts))
        accuracy = sub / "results" / "8xMI325X_2xEPYC_9575F" / "llama2-70b-99" / "Offline" / "accuracy" / "accuracy.txt"
        text = accuracy.read_text()
        accuracy.write_text(text.replace("'rouge1': 44.", "'rouge1': 40.", 1))
    closed = tree.read(tmp_path / "closed", "closed", RULES)
    assert [d.codes for d in closed.dispositions] == ["accuracy-below-target"]
    f = next(f for f in closed.findings if f.code == "accuracy-below-target")
    assert f.expected == "ROUGE1 >= 43.9869" and f.found.startswith("40.")
    assert len(tree.read(tmp_path / "open", "open", RULES).records) == 6


def test_a_missing_or_failed_compliance_test_rejects(giga):
    tests = giga / "compliance" / "8xMI325X_2xEPYC_9575F" / "llama2-70b-99"
    shutil.rmtree(tests / "Server" / "TEST06")
    verify = tests / "Offline" / "TEST06" / "verify_accuracy.txt"
    verify.write_text(verify.read_text().replace("EOS check pass: True", "EOS check pass: False"))
    result = tree.read(giga, "giga", RULES)
    assert sorted(d.codes for d in result.dispositions) == ["compliance-failed", "compliance-missing"]
    failed = next(f for f in result.findings if f.code == "compliance-failed")
    assert (failed.expected, failed.found) == ("EOS check pass: True", "EOS check pass: False")


# ---- the v6.x layout ------------------------------------------------------------------

def v6_tree(root: Path, compliance_inside: bool = True) -> Path:
    """One real v5.1 result re-laid out as v6.0 (seeds rewritten to v6.0's)."""
    src = TREE / "closed" / "MiTAC"
    sub = root / "closed" / "MiTAC"
    (sub / "systems").mkdir(parents=True)
    shutil.copyfile(src / "systems" / "8xMI325X_2xEPYC_9755.json", sub / "systems" / "8xMI325X_2xEPYC_9755.json")
    rel = Path("8xMI325X_2xEPYC_9755") / "llama2-70b-99" / "Server"
    scenario = writable_copy(src / "results" / rel, sub / "results" / rel)
    detail = scenario / DETAIL
    text = detail.read_text()
    for old, new in zip(V51_SEEDS, V60_SEEDS):
        text = text.replace(f'"value": {old},', f'"value": {new},')
    detail.write_text(text)
    (scenario / "measurements.json").write_text("{}")
    tests = scenario if compliance_inside else sub / "compliance" / rel
    writable_copy(src / "compliance" / rel / "TEST06", tests / "TEST06")
    return sub


def test_the_v6_layout_is_read_and_its_round_known_from_the_seeds(tmp_path):
    result = tree.read(v6_tree(tmp_path), "v6", RULES)
    assert len(result.records) == 1 and result.round == "v6.0"
    assert result.records[0].fields["value"] == "31755.7"


def test_the_compliance_layout_is_read_from_the_tree_not_the_round(tmp_path):
    """A v6.0 result whose tests sit beside results/ (the v5.x layout) is read."""
    result = tree.read(v6_tree(tmp_path, compliance_inside=False), "v6", RULES)
    assert len(result.records) == 1 and not result.dispositions and result.round == "v6.0"


def v51_tree(root: Path, where: str) -> Path:
    """One real v5.1 result with its TEST06 inside the scenario folder (the
    v6.x layout), beside results/ (v5.x) or nowhere."""
    src = TREE / "closed" / "MiTAC"
    sub = root / "closed" / "MiTAC"
    writable_copy(src / "systems", sub / "systems")
    rel = Path("8xMI325X_2xEPYC_9755") / "llama2-70b-99" / "Offline"
    scenario = writable_copy(src / "results" / rel, sub / "results" / rel)
    if where == "inside":
        writable_copy(src / "compliance" / rel / "TEST06", scenario / "TEST06")
    elif where == "beside":
        writable_copy(src / "compliance" / rel / "TEST06", sub / "compliance" / rel / "TEST06")
    return sub


@pytest.mark.parametrize("where", ["inside", "beside"])
def test_a_v51_tree_is_read_in_either_layout(tmp_path, where):
    result = tree.read(v51_tree(tmp_path, where), "v51", RULES)
    assert [r.fields["value"] for r in result.records] == ["33703"] and result.round == "v5.1"
    assert not result.dispositions


@pytest.mark.parametrize("beside", [False, True])
def test_a_missing_test_is_named_where_the_trees_layout_keeps_it(tmp_path, beside):
    sub = v51_tree(tmp_path, "none")
    if beside:   # the submitter keeps its tests beside results/, but not this one
        (sub / "compliance").mkdir()
    result = tree.read(sub, "v51", RULES)
    assert [d.codes for d in result.dispositions] == ["compliance-missing"]
    missing = next(f for f in result.findings if f.code == "compliance-missing")
    part = "compliance" if beside else "results"
    assert missing.file == f"v51/{part}/8xMI325X_2xEPYC_9755/llama2-70b-99/Offline/TEST06"


# ---- trees around genuine LoadGen runs ------------------------------------------------

@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return generated_runs(tmp_path_factory)


def test_generated_runs_are_read_under_relaxed_rules(tmp_path, runs):
    make_tree(tmp_path, {"Offline": runs["offline"], "Server": runs["server"],
                         "Interactive": runs["interactive"]})
    result = tree.read(tmp_path, "gen", RULES, rounds={"v5.1": relaxed_rules()})
    assert len(result.records) == 3 and not result.dispositions
    values = {r.fields["scenario"]: float(r.fields["value"]) for r in result.records}
    assert set(values) == {"Offline", "Server", "Interactive"} and min(values.values()) > 0


def test_a_server_run_in_an_interactive_folder_is_noted_and_judged_by_its_latencies(tmp_path, runs):
    """Its measured p99 TTFT/TPOT are within Interactive's limits: MLCommons'
    checker accepts it, and so does mlrepro, with a warning."""
    make_tree(tmp_path, {"Interactive": runs["server"]})
    result = tree.read(tmp_path, "gen", RULES, rounds={"v5.1": relaxed_rules()})
    assert not result.dispositions and len(result.records) == 1
    assert {(f.code, f.severity) for f in result.findings} == {("latency-setting-mismatch", "warning")}
    assert any("Interactive folder whose log carries Server's limits" in f.message for f in result.findings)


def test_real_rules_reject_generated_runs_and_say_why(tmp_path, runs):
    make_tree(tmp_path, {"Server": runs["server"], "Offline": runs["offline-too-short"]})
    report = ingest(RULES, [tmp_path], status="verified", round_="v5.1")
    assert report.table.empty
    codes = {d.source.split("/results/")[1].split("/")[2]: set(d.codes.split(",")) for d in report.dispositions}
    assert codes["Server"] == {"min-duration-short", "sample-count-low"}
    assert codes["Offline"] == {"run-invalid", "min-duration-short", "sample-count-low", "samples-per-query-low"}


# ---- parallel reading and throughput ---------------------------------------------------

def replicate(dst: Path, copies: int) -> Path:
    """``copies`` submitters per real one; results and compliance are symlinks
    to the real tree, system descriptions relabelled copies."""
    division = dst / "closed"
    for k in range(copies):
        for src in sorted((TREE / "closed").iterdir()):
            sub = division / f"{src.name}{k}"
            (sub / "systems").mkdir(parents=True)
            for path in (src / "systems").iterdir():
                facts = json.loads(path.read_text())
                facts["submitter"] = sub.name
                (sub / "systems" / path.name).write_text(json.dumps(facts))
            for part in ("results", "compliance"):
                os.symlink(src / part, sub / part)
    return dst


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory):
    return replicate(tmp_path_factory.mktemp("replicated") / "tree", 40)


def test_parallel_reading_equals_serial_reading(big_tree):
    serial = tree.read(big_tree, "t", RULES, workers=1)
    parallel = tree.read(big_tree, "t", RULES, workers=2)
    assert len(serial.records) == 1200 and not serial.dispositions
    assert [(r.where, r.fields) for r in parallel.records] == [(r.where, r.fields) for r in serial.records]


# ---- rounds that renamed folders, missing companions, configuration --------------------

V50_SEEDS = (6023615788873153749, 15036839855038426416, 9933818062894767841)


def test_v50_interactive_benchmark_folders_are_read_as_interactive(tmp_path):
    """In v5.0 Interactive was its own benchmark folder (llama2-70b-interactive-99/Server)."""
    src = TREE / "closed" / "MiTAC"
    sub = tmp_path / "closed" / "MiTAC"
    (sub / "systems").mkdir(parents=True)
    shutil.copyfile(src / "systems" / "8xMI325X_2xEPYC_9755.json", sub / "systems" / "8xMI325X_2xEPYC_9755.json")
    old = Path("8xMI325X_2xEPYC_9755") / "llama2-70b-99" / "Interactive"
    new = Path("8xMI325X_2xEPYC_9755") / "llama2-70b-interactive-99" / "Server"
    scenario = writable_copy(src / "results" / old, sub / "results" / new)
    text = (scenario / DETAIL).read_text()
    for a, b in zip(V51_SEEDS, V50_SEEDS):
        text = text.replace(f'"value": {a},', f'"value": {b},')
    (scenario / DETAIL).write_text(text)
    writable_copy(src / "compliance" / old, sub / "compliance" / new)
    result = tree.read(sub, "v5.0", RULES)
    assert [(r.fields["model"], r.fields["scenario"], r.fields["round"]) for r in result.records] == \
        [("llama2-70b-99", "Interactive", "v5.0")]


def test_a_missing_summary_log_is_a_finding(giga):
    perf = giga / "results" / "8xMI325X_2xEPYC_9575F" / "llama2-70b-99" / "Server" / "performance" / "run_1"
    (perf / "mlperf_log_summary.txt").unlink()
    result = tree.read(giga, "giga", RULES)
    assert len(result.records) == 5 and [d.codes for d in result.dispositions] == ["missing-file"]


def test_missing_round_rules_are_a_configuration_error(tmp_path):
    from pipeline.core.errors import ConfigError

    schemas = Path(__file__).resolve().parents[1] / "schemas"
    copy = shutil.copytree(schemas, tmp_path / "schemas", ignore=shutil.ignore_patterns("rules"))
    with pytest.raises(ConfigError):
        tree.read(TREE / "closed" / "MiTAC", "MiTAC", Rules.load(copy))


def test_parallel_reading_from_a_threaded_process(big_tree):
    """With other threads alive the workers are not forked (forkserver)."""
    import threading

    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        assert tree._context().get_start_method() != "fork"
        result = tree.read(big_tree, "t", RULES, workers=2)
    finally:
        stop.set()
        helper.join()
    assert len(result.records) == 1200 and not result.dispositions


def test_reading_a_tree_imports_no_table_library():
    """The tree reader runs without pandas, pandera or pyarrow (imports off
    the paths that do not need them)."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from pipeline import readers\n"
            "from pipeline.core.rules import Rules; RULES = Rules.load()\n"
            f"tree = Path({str(TREE)!r})\n"
            "assert readers.detect(RULES, tree) == 'submission-tree'\n"
            "result = readers.read(RULES, tree, 'tree')\n"
            "assert len(result.records) == 30, len(result.records)\n"
            "print(sorted(m for m in ('pandas', 'pandera', 'pyarrow', 'polars') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
