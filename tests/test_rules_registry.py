"""One registry per fact: every schema file walked, no name that one file knows
and another contradicts; and the round facts the checker's constants give."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml

from pipeline.core.model import Source
from pipeline.ingest import normalise, resolve
from pipeline.readers.base import RawRecord, ReadResult
from pipeline.core import rules
from pipeline.core.errors import ConfigError
from pipeline.core.rules import Rules
from pipeline.readers import round_rules
from conftest import normalised, RULES

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = REPO / "schemas"
ROUND_FILE = re.compile(r"^v\d+\.\d+\.yaml$")
# Sections of a round's rules keyed by model.
BY_MODEL = ("performance_sample_count", "min_queries", "offline_min_samples_per_query",
            "latency_constraint_ms", "llm_latency_ms", "accuracy", "metrics", "units")


def load(rel: str) -> dict:
    return yaml.safe_load((SCHEMAS / rel).read_text(encoding="utf-8"))


def round_files() -> dict[str, dict]:
    return {p.stem: yaml.safe_load(p.read_text(encoding="utf-8"))
            for p in sorted((SCHEMAS / "rules").iterdir()) if ROUND_FILE.match(p.name)}


def names_in(rules_file: dict) -> dict[str, set[str]]:
    """section -> the model names it uses, read from the raw YAML."""
    out = {s: set(rules_file.get(s) or {}) for s in BY_MODEL}
    out["models"] = set(rules_file.get("models") or ())
    out["scenarios"] = {m for kinds in (rules_file.get("scenarios") or {}).values()
                        for table in (kinds or {}).values() for m in (table or {})}
    out["compliance"] = {m for ms in (rules_file.get("compliance") or {}).values() for m in ms}
    out["folder_models"] = {v["model"] for v in (rules_file.get("folder_models") or {}).values()}
    return out


def test_every_round_has_dates_and_rules_and_no_rules_without_a_round():
    assert set(load("rounds.yaml")["rounds"]) == set(round_files())


def test_every_name_a_round_uses_is_one_of_its_models_and_in_models_yaml():
    registry = load("models.yaml")["models"]
    for round_, data in round_files().items():
        assert data["round"] == round_
        names = names_in(data)
        assert names["models"] <= set(registry), (round_, names["models"] - set(registry))
        for section, used in names.items():
            assert used <= names["models"], (round_, section, sorted(used - names["models"]))
        assert names["scenarios"] == names["models"], (round_, "a model without scenarios")


def test_models_yaml_names_no_benchmark_that_no_round_has():
    used = set().union(*(set(d["models"]) for d in round_files().values()))
    assert set(load("models.yaml")["models"]) == used


def test_no_spelling_names_two_models():
    seen: dict[str, str] = {}
    for name, info in load("models.yaml")["models"].items():
        for spelling in [name, *(info.get("aliases") or [])]:
            assert seen.setdefault(spelling.lower(), name) == name, spelling


def test_families_units_and_scenario_names_agree_across_files():
    metrics = load("rules/metrics.yaml")
    families = metrics["families"]
    registry = load("models.yaml")["models"]
    scenarios = set(load("models.yaml")["scenarios"])
    assert scenarios == set(RULES.scenarios())
    assert {info["family"] for info in registry.values()} <= set(families)
    assert set(metrics.get("models") or {}) <= set(registry)
    for family, table in families.items():
        assert set(table) <= scenarios, family
    for round_, data in round_files().items():
        for kinds in (data.get("scenarios") or {}).values():
            for table in (kinds or {}).values():
                for model, listed in (table or {}).items():
                    assert set(listed) <= scenarios, (round_, model)
        for section in ("min_queries", "latency_constraint_ms", "llm_latency_ms", "metrics", "units"):
            for model, by_scenario in (data.get(section) or {}).items():
                assert set(by_scenario) <= scenarios, (round_, section, model)
        for model, by_scenario in (data.get("units") or {}).items():
            family = families[registry[model]["family"]]
            for scenario, units in by_scenario.items():
                assert scenario in family and family[scenario]["units"] in units, \
                    (round_, model, scenario, "an override must still accept the family's unit")


def test_accuracy_metrics_have_patterns_and_compliance_pass_names_required_tests():
    patterns = set(load("rules/accuracy.yaml")["patterns"])
    for round_, data in round_files().items():
        for model, targets in data["accuracy"].items():
            for target in targets:
                assert target["metric"] in patterns, (round_, model, target)
        assert set(data["compliance_pass"]) <= set(data["compliance"]), round_


def test_every_round_loads_and_every_model_scenario_has_units():
    loaded = round_rules.all_rounds(RULES)
    assert set(loaded) == set(round_files())
    for round_, r in loaded.items():
        assert set(r.benchmarks) == set(round_files()[round_]["models"])
        for model in r.benchmarks.values():
            assert model.units and all(model.units.values()), (round_, model.name)


def test_the_rules_files_ship_in_the_wheel():
    """Every file under schemas/ matches a package-data glob of its package."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    data = config["package-data"]
    for path in SCHEMAS.rglob("*"):
        if path.is_file():
            package = ".".join(["pipeline.schemas", *path.parent.relative_to(SCHEMAS).parts])
            assert package in config["packages"], package
            assert any(fnmatch.fnmatch(path.name, g) for g in data.get(package, ())), path


def test_every_rules_file_has_a_json_schema_that_it_meets():
    for path in sorted(SCHEMAS.rglob("*.yaml")):
        name = path.relative_to(SCHEMAS).as_posix()
        schema = rules.schema_of(name)
        assert (schema is None) == name.startswith("results."), name   # the table schemas are pandera's
        if schema is not None:
            jsonschema.Draft202012Validator.check_schema(json.loads((SCHEMAS / schema).read_text()))
            RULES.load_yaml(name)


@pytest.mark.parametrize("name, old, new, message", [
    ("rounds.yaml", 'submission_deadline: "2026-02-27T13:00:00-08:00"', 'submission_deadline: "2026-02-27"',
     r'rounds.yaml:\d+: key rounds.v6.0.submission_deadline: expected an ISO-8601 time with a time zone, quoted '
     r'\(e.g. "2026-02-27T13:00:00-08:00"\); found \'2026-02-27\' .*: change the file to match rounds.schema.json'),
    ("rules/v6.1.yaml", "- {metric: vbench_score, reference: 70.48, low: 0.99}", "- {metric: vbench_score, reference: 70.48}",
     r"v6.1.yaml:\d+: key accuracy.wan-2.2-t2v-a14b.0: expected an accuracy target: \{metric, reference, low and/or "
     r"high\} or \{metric, min and/or max\}"),
    ("accelerators.yaml", "pattern: 'Radeon 8060S'", "pattern: 'Radeon (8060S'",
     r"accelerators.yaml:\d+: key accelerators.5.pattern: expected a Python regular expression"),
])
def test_a_rules_file_that_breaks_its_schema_names_the_line_key_expected_and_found(tmp_path, name, old, new, message):
    copy = shutil.copytree(SCHEMAS, tmp_path / "schemas")
    text = (copy / name).read_text(encoding="utf-8")
    assert old in text
    (copy / name).write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        Rules.load(copy).load_yaml(name)


# ---- facts of the checker's constants -------------------------------------------------

def units(round_: str, model: str, scenario: str) -> tuple[str, ...]:
    return RULES.round_models(round_)[model].units[scenario]


def test_units_per_round():
    assert units("v6.0", "llama3.1-8b", "Interactive") == ("Tokens/s",)
    assert units("v5.1", "llama3.1-8b", "Interactive") == ("Queries/s", "Tokens/s")
    assert units("v6.1", "e2e-rag-qna", "Offline") == ("Tasks/s",)
    assert units("v6.1", "e2e-rag-db", "Offline") == ("Samples/s",)
    assert units("v6.0", "qwen3-vl-235b-a22b", "Interactive") == ("Queries/s",)
    assert units("v6.0", "wan-2.2-t2v-a14b", "SingleStream") == ("Latency (s)",)
    assert units("v6.1", "qwen3.6-27b", "SingleStream") == ("Latency (ms)",)


def test_v6_1_adds_and_drops_models():
    v60, v61 = set(RULES.round_models("v6.0")), set(RULES.round_models("v6.1"))
    assert v61 - v60 == {"qwen3.6-27b", "e2e-rag-qna", "e2e-rag-db"}
    assert v60 - v61 == {"retinanet", "llama2-70b-99", "mixtral-8x7b", "llama3.1-405b", "pointpainting"}
    r = round_rules.all_rounds(RULES)
    assert r["v6.1"].seeds["effective_qsl_rng_seed"] == 2085463073848966840
    assert r["v6.1"].seeds != r["v6.0"].seeds


def test_v6_0_targets_and_limits_the_issue_names():
    r = round_rules.all_rounds(RULES)["v6.0"]
    upper = [t for t in r.accuracy["gpt-oss-120b"] if t.metric == "TOKENS_PER_SAMPLE"]
    assert [(t.low, t.high) for t in upper] == [(None, pytest.approx(9999 * 1.1))]
    assert {t.metric for t in r.accuracy["dlrm-v3"]} == {"DLRM_NE", "DLRM_ACC", "DLRM_AUC"}
    assert [t.metric for t in r.accuracy["wan-2.2-t2v-a14b"]] == ["vbench_score"]
    assert r.accuracy["qwen3-vl-235b-a22b"][0].low == pytest.approx(0.7903 * 0.99)
    assert r.latency_constraint_ms["resnet"] == {"Server": 15}
    assert r.min_queries["wan-2.2-t2v-a14b"] == {"SingleStream": 50, "Offline": 1}
    v61 = round_rules.all_rounds(RULES)["v6.1"]
    by_scenario = {s: t.low for t in v61.accuracy["qwen3-vl-235b-a22b"] for s in t.scenarios}
    assert by_scenario == {"Offline": pytest.approx(0.7903 * 0.99), "Server": pytest.approx(0.7903 * 0.99),
                           "Interactive": pytest.approx(0.7878 * 0.99)}
    assert [t.metric for t in v61.accuracy_targets("qwen3-vl-235b-a22b", "Interactive")] == ["F1_HIERARCHICAL"]


def test_required_scenarios_per_category():
    data = round_files()["v6.0"]["scenarios"]
    assert data["datacenter"]["required"]["qwen3-vl-235b-a22b"] == ["Offline", "Server"]
    assert data["both"]["optional"]["qwen3-vl-235b-a22b"] == ["Server", "Interactive"]
    assert data["edge"]["required"]["yolo-95"] == ["Offline", "SingleStream", "MultiStream"]


# ---- rows are judged by their round's rules -------------------------------------------

def problems(model, scenario, units_, round_):
    return [p[0] for p in resolve.resolve_benchmark(RULES, model, scenario, units_, round_)[1]]


@pytest.mark.parametrize("model, scenario, units_, round_, expected", [
    ("llama3.1-8b", "Interactive", "Tokens/s", "v6.0", []),
    ("llama3.1-8b", "Interactive", "Queries/s", "v6.0", ["units-mismatch"]),
    ("llama3.1-8b", "Interactive", "Queries/s", "v5.1", []),
    ("mixtral-8x7b", "Server", "Tokens/s", "v6.1", ["model-not-in-round"]),
    ("qwen3-vl-235b-a22b", "Server", "Queries/s", "v5.1", ["model-not-in-round"]),
    ("e2e-rag-qna", "Offline", "Tasks/s", "v6.1", []),
    ("e2e-rag-qna", "Offline", "Samples/s", "v6.1", ["units-mismatch"]),
    ("qwen3.6-27b", "Offline", "Samples/s", "v6.1", ["invalid-choice"]),
    ("yolo-99", "offline", "Samples/s", "v6.0", []),
    ("qwen3-vl-235b-a22b", "Server", "Queries/s", None, []),   # no round: any round's rules
])
def test_a_row_is_judged_by_its_round(model, scenario, units_, round_, expected):
    assert problems(model, scenario, units_, round_) == expected


def test_a_model_not_in_its_round_is_a_located_finding():
    raw = RawRecord(Source("f.csv"), 3, {"round": "v6.1", "submitter": "Dell", "system": "s",
                                         "model": "mixtral-8x7b", "scenario": "Server", "value": "1",
                                         "units": "Tokens/s", "division": "closed",
                                         "availability": "available", "accelerator": "MI355X",
                                         "accelerators_per_node": "8", "nodes": "1"})
    done = normalised(ReadResult([raw]), normalise.Context(status="verified"))
    found = done.findings
    assert len(done.frame) == 0 and [(f.code, f.where, f.found) for f in found] == \
        [("model-not-in-round", Source("f.csv", 3, column="model"), "mixtral-8x7b")]
    assert "v6.1" in found[0].expected and "e2e-rag-qna" in found[0].expected


def test_the_canonical_table_accepts_exactly_the_units_the_rules_give():
    """results.v1.yaml's units check lists what rules/metrics.yaml and the rounds' overrides give."""
    columns = load("results.v1.yaml")["columns"]
    allowed = set(columns["units"]["checks"]["isin"])
    given = {spec["units"] for table in load("rules/metrics.yaml")["families"].values() for spec in table.values()}
    given |= {u for data in round_files().values() for by_sc in (data.get("units") or {}).values()
              for units_ in by_sc.values() for u in units_}
    assert allowed == given
