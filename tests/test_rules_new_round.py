"""The procedure "Add a round, a model or an accelerator" (docs/rounds.md),
followed in a temporary copy of schemas/ (its own Rules value; the command
line reads it through --schemas or MLREPRO_SCHEMAS): for a
made-up round, model and accelerator, and for a round whose published table
follows no shipped convention; and a v6.1 row in the checker's summary.csv
layout."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import yaml

from conftest import RULES, DATA, MI355X, read_csv, results_row, run, write_results_csv
from pipeline.core.rules import Rules
from pipeline.ingest.submissions import ingest

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


def dump(path: Path, data: dict) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def add_round(schemas: Path) -> None:
    """Steps 1-4 of the procedure, for round v9.9 with a new model and accelerator."""
    rounds = yaml.safe_load((schemas / "rounds.yaml").read_text())
    rounds["rounds"]["v9.9"] = {"submission_deadline": "2031-02-28T13:00:00-08:00",
                                "publication_date": "2031-04-02",
                                "estimated": {"submission_deadline": True, "publication_date": True},
                                "note": "a made-up round for the procedure's test"}
    dump(schemas / "rounds.yaml", rounds)
    rules_ = yaml.safe_load((schemas / "rules" / "v6.1.yaml").read_text())
    rules_["round"] = "v9.9"
    rules_["seeds"] = {"effective_qsl_rng_seed": 11, "effective_sample_index_rng_seed": 12,
                       "effective_schedule_rng_seed": 13}
    rules_["models"].append("toy-llm-9b")
    rules_["scenarios"]["datacenter"]["required"]["toy-llm-9b"] = ["Offline"]
    rules_["scenarios"]["datacenter"]["optional"]["toy-llm-9b"] = ["Server"]
    rules_["performance_sample_count"]["toy-llm-9b"] = 1000
    rules_["accuracy"]["toy-llm-9b"] = [{"metric": "ROUGE1", "reference": 40.0, "low": 0.99}]
    rules_["llm_latency_ms"]["toy-llm-9b"] = {"Server": {"ttft": 1000, "tpot": 50}}
    dump(schemas / "rules" / "v9.9.yaml", rules_)
    models = yaml.safe_load((schemas / "models.yaml").read_text())
    models["models"]["toy-llm-9b"] = {"family": "llm", "aliases": ["toy_llm-9b"]}
    dump(schemas / "models.yaml", models)
    accelerators = yaml.safe_load((schemas / "accelerators.yaml").read_text())
    entry = dict(next(e for e in accelerators["accelerators"] if e["name"] == "MI355X"))
    entry.update(name="MI999X", pattern="(?<![a-z0-9])MI999X(?![0-9])")
    accelerators["accelerators"].insert(0, entry)
    dump(schemas / "accelerators.yaml", accelerators)


def test_a_new_round_model_and_accelerator_are_read_through_mlrepro_schemas(tmp_path, monkeypatch):
    copy = shutil.copytree(SCHEMAS, tmp_path / "schemas")
    add_round(copy)
    rows = write_results_csv(tmp_path / "v99.csv", [
        results_row(model="toy_llm-9b", scenario="Offline", system="PowerEdge_XE9785_8xMI999X",
                    accelerator="AMD Instinct MI999X", value="1234.5"),
        results_row(model="toy-llm-9b", scenario="Server", accelerator=MI355X, value="1000"),
        results_row(model="toy-llm-9b", scenario="Interactive", accelerator=MI355X, value="900"),
        results_row(model="mixtral-8x7b", scenario="Server", accelerator=MI355X, value="800"),
    ])
    before = ingest(RULES, [rows], round_="v9.9", status="verified")
    assert before.table.empty and {d.codes for d in before.dispositions} >= {"unknown-round"}

    report = ingest(Rules.load(copy), [rows], round_="v9.9", status="verified")
    got = report.table[["round", "model", "scenario", "accelerator", "value"]].values.tolist()
    assert got == [["v9.9", "toy-llm-9b", "Offline", "MI999X", 1234.5],
                   ["v9.9", "toy-llm-9b", "Server", "MI355X", 1000.0]]
    assert [d.codes for d in report.dispositions] == ["invalid-choice", "model-not-in-round"]

    out = tmp_path / "out.csv"
    monkeypatch.setenv("MLREPRO_SCHEMAS", str(copy))    # the command line's edge
    run("ingest", rows, "--status", "verified", "--round", "v9.9", "-o", out, expect=1)
    assert [r["model"] for r in read_csv(out)] == ["toy-llm-9b", "toy-llm-9b"]
    out.unlink()
    run("--schemas", copy, "ingest", rows, "--status", "verified", "--round", "v9.9", "-o", out, expect=1)
    assert [r["model"] for r in read_csv(out)] == ["toy-llm-9b", "toy-llm-9b"]

    monkeypatch.delenv("MLREPRO_SCHEMAS")               # the project's rules, untouched all along
    again = ingest(RULES, [rows], round_="v9.9", status="verified")
    assert again.table.empty and "unknown-round" in again.dispositions[0].codes


def test_a_v6_1_row_in_the_checker_layout_is_read(tmp_path):
    with open(DATA / "checker-quirks.csv", newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header, template = reader.fieldnames, next(reader)
    row = {**template, "Model": "e2e-rag-qna", "MlperfModel": "e2e-rag-qna", "Scenario": "Offline",
           "Result": "12.5", "Units": "Tasks/s", "version": "v6.1"}
    path = tmp_path / "summary.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writeheader()
        writer.writerow(row)
    report = ingest(RULES, [path], status="verified")
    assert not report.dispositions
    assert report.table[["round", "model", "scenario", "units", "value"]].values.tolist() == \
        [["v6.1", "e2e-rag-qna", "Offline", "Tasks/s", 12.5]]


# ---- a round whose table differs from every shipped one (docs/rounds.md) -----------------

def _official_rows() -> tuple[list[str], dict[int, dict]]:
    text = (SCHEMAS.parent / "published" / "v6.0" / "summary.csv").read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    return reader.fieldnames, {line: row for line, row in enumerate(reader, start=2)}


def _unseen_table(path: Path) -> Path:
    """Real v6.0 rows (AMD's 8xMI355X llama2-70b-99.9 and HPE's XD685) edited to
    conventions no shipped table has: a category in one model column and an
    alias or another model in the other, a new part of AMD (MI400X) for AMD and
    a partner, a system that mixes NVIDIA and AMD nodes, and per-type counts
    written per node."""
    header, rows = _official_rows()
    amd, hpe = rows[16], rows[248]
    new = {"accelerator_model_name": "AMD Instinct MI400X 432GB HBM4", "version": "v9.9"}
    table = [
        # AMD's v6.0 row states 8 host processors per node (a warning of its own): here, the system id's 2
        {**amd, **new, "Platform": "8xMI400X_2xEPYC_9575F", "MlperfModel": "llm", "Model": "llama2-70b-99.9",
         "Result": "200000.0", "host_processors_per_node": "2"},
        {**hpe, **new, "Platform": "HPE_ProLiant_XD785_MI400X_432GBx8", "MlperfModel": "llama2-70b-99.9",
         "Model": "Text Generation", "Result": "196000.0"},
        {**hpe, **new, "Platform": "HPE_ProLiant_XD785_MI400X_432GBx16", "number_of_nodes": "2",
         "total_accelerators": "16", "MlperfModel": "llama2-70b-99.9", "Model": "llama2_70b-fp4-hpe",
         "Division": "open", "Result": "390000.0"},
        {**hpe, "version": "v9.9", "Platform": "HPE_Hybrid_8xB200_8xMI355X", "number_of_nodes": "2",
         "total_accelerators": "16",
         "accelerator_model_name": "NVIDIA B200-SXM-180GB (x8) and AMD Instinct MI355X 288GB HBM3e (x8)"},
        {**hpe, "version": "v9.9", "Platform": "HPE_Hybrid_MI355X_MI400X", "number_of_nodes": "2",
         "total_accelerators": "16",
         "accelerator_model_name": "4x AMD Instinct MI355X 288GB HBM3e + 4x AMD Instinct MI400X 432GB HBM4"},
    ]
    path.parent.mkdir(parents=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writeheader()
        writer.writerows(table)
    return path


def test_a_round_whose_table_follows_no_shipped_convention_is_read_by_the_steps(tmp_path):
    from pipeline.analyses.compare import compare

    copy = shutil.copytree(SCHEMAS, tmp_path / "schemas")
    # steps 1-2: the round's dates and rules (v6.1's, as the newest)
    rounds = yaml.safe_load((copy / "rounds.yaml").read_text())
    rounds["rounds"]["v9.9"] = {"submission_deadline": "2031-02-28T13:00:00-08:00", "publication_date": "2031-04-02",
                                "estimated": {"submission_deadline": True, "publication_date": True},
                                "note": "a made-up round for the procedure's test"}
    dump(copy / "rounds.yaml", rounds)
    rules_ = yaml.safe_load((copy / "rules" / "v6.1.yaml").read_text())
    dump(copy / "rules" / "v9.9.yaml", {**rules_, "round": "v9.9"})
    rules = Rules.load(copy)
    # step 4: the published table in published/<round>/
    table = _unseen_table(tmp_path / "published" / "v9.9" / "summary.csv")
    # step 5: read it: no row rejected; one warning per new name, giving its registry entry
    report = ingest(rules, [table], status="verified")
    assert not report.dispositions and len(report.table) == 5
    t = report.table
    assert set(t["model"]) == {"llama2-70b-99.9"}
    assert t["used_model"].tolist() == ["llama2-70b-99.9", "llama2-70b-99.9", "llama2_70b-fp4-hpe",
                                        "llama2-70b-99.9", "llama2-70b-99.9"]
    assert t["composition"].tolist() == ["AMD-MI400X:8", "AMD-MI400X:8", "AMD-MI400X:16", "B200:8,MI355X:8",
                                         "AMD-MI400X:8,MI355X:8"]
    warnings = [f for f in report.findings if f.code == "unregistered-name"]
    assert {f.found for f in warnings} == {"AMD Instinct MI400X 432GB HBM4"}
    assert {f.severity for f in report.findings} == {"warning"}
    verdicts = compare(rules, t, 4.0, "AMD", "AMD").table.set_index("system")
    assert verdicts.loc["HPE_ProLiant_XD785_MI400X_432GBx8", "verdict"] == "agree"    # -2% against AMD's MI400X
    assert verdicts.loc["HPE_ProLiant_XD785_MI400X_432GBx16", "verdict"] == "no-reference"
    assert verdicts.loc["HPE_Hybrid_8xB200_8xMI355X", "reason"].startswith("mixed vendors")
    assert verdicts.loc["HPE_Hybrid_MI355X_MI400X", "verdict"] == "no-reference"   # one vendor's mix
    # step 6: the entry the warning gives, added; read again: registered, no warning
    line = warnings[0].expected.split("schemas/accelerators.yaml: ", 1)[1]
    accelerators = yaml.safe_load((copy / "accelerators.yaml").read_text())
    accelerators["accelerators"].insert(0, yaml.safe_load(line)[0])
    dump(copy / "accelerators.yaml", accelerators)
    rules = Rules.load(copy)   # the folder changed: its rules loaded again
    again = ingest(rules, [table], status="verified")
    assert not again.findings and not again.dispositions
    assert again.table["composition"].tolist() == ["MI400X:8", "MI400X:8", "MI400X:16", "B200:8,MI355X:8",
                                                   "MI355X:8,MI400X:8"]
    assert compare(rules, again.table, 4.0, "AMD", "AMD").table["verdict"].tolist() == \
        verdicts["verdict"].tolist()
