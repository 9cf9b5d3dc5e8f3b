"""Labels a partner writes are cross-checked, and a garbled name is reported,
never repaired: the system id's node prefix (``<nodes>x<per node>x<part>``)
against ``nodes`` and ``accelerators_per_node``, and mojibake in a name
(``MI355XÂ``) as a located finding, as invisible characters are. In process
on the resolvers, then through the gate in a real repository."""

from __future__ import annotations

import json

import pytest

from gitrepo import commit
from conftest import RULES
from test_gate import DELL_SYSTEM, HEADER, MI355X, ROUND, base_repo, gate, repo, sealed_version  # noqa: F401
from pipeline.core import textcheck
from pipeline.ingest import resolve

DELL_V2 = f"submissions/{ROUND}/Dell/v2/results.csv"


@pytest.mark.parametrize("system, per_node, nodes, key", [
    ("1x8xMI355X_2xEPYC_9575F", "8", "2", "nodes"),
    ("2x8xMI355X_2xEPYC_9575F", "4", "2", "accelerators_per_node"),
    ("9x8xMI355X_2xEPYC_9575F", "8", "8", "nodes"),
])
def test_a_node_prefix_that_contradicts_the_counts_rejects_a_partner_row(system, per_node, nodes, key):
    values, problems = resolve.resolve_accelerators(RULES, MI355X, system, per_node, nodes, None)
    assert values[0] is None
    [mismatch] = [p for p in problems if p[0] == "label-mismatch"]
    assert mismatch[1] == key and system in mismatch[2]


@pytest.mark.parametrize("system, per_node, nodes, total", [
    ("1x8xMI355X_2xEPYC_9575F", "8", "1", 8), ("9x8xMI355X_2xEPYC_9575F", "8", "9", 72),
    ("PowerEdge_XE9785_8xMI355X", "8", "1", 8),
])
def test_a_node_prefix_that_agrees_is_counted(system, per_node, nodes, total):
    values, problems = resolve.resolve_accelerators(RULES, MI355X, system, per_node, nodes, None)
    assert (values[0], values[-1]) == ("MI355X", total) and not resolve.errors(problems)


def test_a_published_table_keeps_its_row_with_a_warning():
    values, problems = resolve.resolve_accelerators(RULES, MI355X, "1x8xMI355X_2xEPYC_9575F", "8", "2", None, True)
    assert values[0] == "MI355X"
    assert [p[-1] for p in problems if p[0] == "label-mismatch"] == ["warning"]


@pytest.mark.parametrize("text, at", [("MI355XÂ", 7), ("AMD Instinct MI355XÂ 288GB", 20), ("ÂMI355X", 1),
                                      ("CDNAÃ‚ 4", 5)])
def test_mojibake_in_a_name_is_found_where_it_is(text, at):
    [(code, name, _, found, _)] = resolve.characters(RULES, "accelerator", text)
    assert (code, name) == ("mojibake", "accelerator") and f"at character {at} " in found


@pytest.mark.parametrize("text", ["MI355X", "São Paulo", "SÃO PAULO", "Ã"])
def test_words_that_are_no_mojibake_pass(text):
    assert textcheck.mojibake_in(text) is None


def _csv(system: str, accelerator: str, per_node: str, nodes: str) -> str:
    return (f"{HEADER}\nDell,{system},{accelerator},{per_node},{nodes},llama2-70b-99,Server,101000,Tokens/s,"
            "closed,available\n")


@pytest.mark.parametrize("system, accelerator, nodes, code, column", [
    ("1x8xMI355X_2xEPYC_9575F", MI355X, "2", "label-mismatch", "nodes"),
    (DELL_SYSTEM, "AMD Instinct MI355XÂ", "1", "mojibake", "accelerator"),
], ids=["node prefix", "mojibake"])
def test_the_gate_fails_a_label_a_partner_got_wrong_at_its_column(repo, system, accelerator, nodes, code, column):
    sealed_version(repo, "Dell", 2, _csv(system, accelerator, "8", nodes))   # submit would refuse it
    commit(repo, "Dell v2")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1, done.stdout
    doc = json.loads(done.stdout)
    assert any(f["code"] == code and f["file"] == DELL_V2 and f["place"] == f"line 2, column {column}"
               for f in doc["findings"]), doc["findings"]
    assert [r["outcome"] for r in doc["rows"]] == ["rejected"]
