"""Names as MLCommons publishes them, and a partner's labels cross-checked
(docs/rounds.md): real rows of the official v6.0 table, edited to the
spellings a round may bring, read as MLCommons' (under published/) and as
a partner's (anywhere else, whatever the format)."""

from __future__ import annotations

import csv
import hashlib
import io

import pytest
import yaml

from conftest import RULES, REAL, REPO, ON_TIME, results_row, write_results_csv

from pipeline.analyses import compare as compare_mod, reference
from pipeline.core import textcheck
from pipeline.core.rules import Rules
from pipeline.core.model import Source
from pipeline.ingest import composition
from pipeline.ingest.submissions import ingest

TABLE = REPO / "published" / "v6.0" / "summary.csv"
AMD_OFFLINE = 13           # AMD 8xMI355X_2xEPYC_9575F llama2-70b-99 Offline 103480
SUPERMICRO_OFFLINE = 507   # Supermicro 8xMI355X_2xEPYC-9575F llama2-70b-99 Offline 100754
B200_OFFLINE = 251         # HPE HPE_ProLiant_XD685_B200_SXM_192GBx8_TRT llama2-70b-99 Offline


def official() -> tuple[list[str], dict[int, dict]]:
    reader = csv.DictReader(io.StringIO(TABLE.read_text(encoding="utf-8"), newline=""))
    return reader.fieldnames, {line: row for line, row in enumerate(reader, start=2)}


def table(path, rows: list[dict]):
    """A checker summary.csv of these rows (the official table's header and quoting)."""
    header, _ = official()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def row(line: int, **changes) -> dict:
    # AMD's v6.0 rows state 8 host processors per node on 2xEPYC systems (a warning of its
    # own, held in test_explain); these tests are about names: the count is the system id's
    host = {"host_processors_per_node": "2"} if line == AMD_OFFLINE else {}
    return {**official()[1][line], **host, **changes}


def published(tmp_path, rows: list[dict], rules=RULES):
    """Read as MLCommons published it: the file lives in a published/ folder."""
    return ingest(rules, [table(tmp_path / "published" / "v6.0" / "summary.csv", rows)], status="verified")


def sealed(tmp_path, rows: list[dict], submitter: str = "Supermicro"):
    """The same table as a partner's version under a submissions root, sealed by hand
    (submit would refuse it): returns the ingest of the root."""
    root = tmp_path / "submissions"
    version = root / "v6.0" / submitter / "v1"
    path = table(version / "summary.csv", rows)
    manifest = {"submitter": submitter, "round": "v6.0", "version": 1, "submitted_at": ON_TIME,
                "status": "verified", "files": [{"path": "summary.csv", "format": "mlcommons-summary-csv",
                                                 "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}]}
    (version / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return ingest(RULES, [root], root=root, visible=lambda v: None)


def partner(tmp_path, **fields):
    """One row of a partner's results.csv, read for v6.0."""
    path = write_results_csv(tmp_path / "results.csv", [results_row(**fields)])
    return ingest(RULES, [path], status="verified", round_="v6.0")


def codes(report) -> list[tuple[str, str, str | None]]:
    return [(f.code, f.severity, f.where.column or f.where.key) for f in report.findings]


# ---- the benchmark id from whichever column names one ---------------------------------

@pytest.mark.parametrize(("mlperf_model", "model", "expected"), [
    ("llm", "llama3_1-8b", ("llama3.1-8b", "llama3.1-8b")),           # a category in MlperfModel
    ("llama3.1-8b", "text-generation", ("llama3.1-8b", "llama3.1-8b")),  # a task in Model
    ("llama2-70b-99.9", "llama3_1-70b-fp8_dyn", ("llama2-70b-99.9", "llama3_1-70b-fp8_dyn")),   # open division
    ("llama3_1-8b-foo", "llama3_1-8b", ("llama3.1-8b", "llama3_1-8b-foo")),   # only Model is a benchmark
])
def test_the_benchmark_id_comes_from_whichever_column_names_one(tmp_path, mlperf_model, model, expected):
    report = published(tmp_path, [row(AMD_OFFLINE, MlperfModel=mlperf_model, Model=model)])
    assert report.table[["model", "used_model"]].values.tolist() == [list(expected)]
    assert not report.findings and not report.dispositions


def test_a_category_is_never_a_benchmark_id(tmp_path):
    """Neither column is a registered benchmark: the row keeps the name that is
    not a category (warning); two categories name no benchmark: refused."""
    report = published(tmp_path, [row(AMD_OFFLINE, MlperfModel="text-to-video", Model="wan-3.0-t2v"),
                                  row(AMD_OFFLINE, MlperfModel="Text to Video", Model="llm", Scenario="Server")])
    assert report.table[["model", "used_model"]].values.tolist() == [["wan-3.0-t2v", "wan-3.0-t2v"]]
    assert [(f.code, f.severity, f.where.column, f.found) for f in report.findings] == [
        ("unregistered-name", "warning", "Model", "wan-3.0-t2v"),
        ("unknown-model", "error", "MlperfModel", "Text to Video")]
    assert "category" in report.findings[1].message


@pytest.mark.parametrize("path", [TABLE, REPO / "published" / "v6.1" / "summary.csv",
                                  REAL / "v5.1-checker-summary.csv", REAL / "v4.1-summary_results.json",
                                  REAL / "v5.1-summary_results.json", REPO / "published" / "v5.1" / "summary_results.json"])
def test_every_shipped_table_ingests_with_no_rejected_row_and_no_category_as_model(path):
    report = ingest(RULES, [path], status="verified", published=True)
    assert not [d for d in report.dispositions if d.outcome == "rejected"]
    assert not [m for m in report.table["model"].unique() if RULES.is_category(m)]
    assert set(report.table["model"]) <= set(RULES.models())


# ---- the vendor from the published name -------------------------------------------------

NEW_PART = "AMD Instinct MI400X 432GB HBM4"


def test_a_new_part_of_the_reference_vendor_gives_no_reference_partner_rows(tmp_path):
    rows = [row(AMD_OFFLINE), row(SUPERMICRO_OFFLINE, accelerator_model_name=NEW_PART,
                                  Platform="8xMI400X_2xEPYC-9575F"),
            row(SUPERMICRO_OFFLINE, accelerator_model_name=NEW_PART, Platform="8xMI400X_2xEPYC-9575F",
                Scenario="Server", Result="95000")]
    report = published(tmp_path, rows)
    assert not report.dispositions
    new = report.table[report.table["submitter"] == "Supermicro"]
    assert set(new["accelerator"]) == {"AMD-MI400X"} and set(new["accelerator_variant"]) == {"AMD-MI400X 432GB"}
    [warning] = report.findings   # once per name, for both rows
    assert (warning.code, warning.severity, warning.found) == ("unregistered-name", "warning", NEW_PART)
    assert "kept as 'AMD-MI400X', AMD's" in warning.message and "(and 1 more row)" in warning.message
    assert warning.expected == ("an entry of schemas/accelerators.yaml: "
                                "- {name: MI400X, vendor: AMD, pattern: '(?<![a-z0-9])MI400X(?![0-9])'}")
    verdicts = compare_mod.compare(RULES, report.table, 4.0, "AMD", "AMD").table
    assert set(verdicts["verdict"]) == {"no-reference"} and len(verdicts) == 2


def test_the_registry_line_the_warning_gives_registers_the_part(tmp_path):
    import shutil

    rows = [row(SUPERMICRO_OFFLINE, accelerator_model_name=NEW_PART, Platform="8xMI400X_2xEPYC-9575F")]
    [warning] = published(tmp_path, rows).findings
    line = warning.expected.split("schemas/accelerators.yaml: ", 1)[1]
    copy = shutil.copytree(REPO / "schemas", tmp_path / "schemas")
    registry = yaml.safe_load((copy / "accelerators.yaml").read_text())
    registry["accelerators"].insert(0, yaml.safe_load(line)[0])
    (copy / "accelerators.yaml").write_text(yaml.safe_dump(registry, sort_keys=False))
    rules = Rules.load(copy)
    again = published(tmp_path / "again", rows, rules)
    assert not again.findings and set(again.table["accelerator"]) == {"MI400X"}
    assert reference.vendors_of(rules, "MI400X") == {"AMD"}


def test_a_partners_own_file_must_name_registered_parts(tmp_path):
    report = partner(tmp_path, system="XE9785_8xMI30X", accelerator="AMD Instinct MI30X")
    assert report.table.empty
    [f] = report.findings
    assert (f.code, f.where.column) == ("unknown-accelerator", "accelerator")
    assert "did you mean" in f.message and "MI300X" in f.message


@pytest.mark.parametrize(("name", "vendor"), [("NVIDIA H300-SXM-300GB", "NVIDIA"), ("Google TPU v7", "Google"),
                                              ("Intel(R) Gaudi 4", "Intel"), ("Acme Z9", None),
                                              ("AMD Radeon AI PRO R9800", "AMD")])
def test_the_vendor_is_read_back_from_the_kept_name(name, vendor):
    [part] = composition.parts_in_name(RULES, name)
    assert not part.registered and part.vendor == vendor
    assert RULES.accelerator_vendor(part.name) == vendor


# ---- mixed clusters as compositions -----------------------------------------------------

MIXED = ("MI300X+MI325X", "MI300X:8,MI325X:8")


@pytest.mark.parametrize(("accelerator", "platform"), [
    ("AMD Instinct MI300X 192GB HBM3 (x8) and AMD Instinct MI325X 256GB HBM3e (x8)", "Cluster_A"),
    ("AMD Instinct MI325X 256GB HBM3e (x8), AMD Instinct MI300X 192GB HBM3 (x8)", "Cluster_A"),
    ("8x AMD Instinct MI325X 256GB HBM3e + 8x AMD Instinct MI300X 192GB HBM3", "Cluster_A"),
    ("4x AMD Instinct MI300X 192GB HBM3 + 4x AMD Instinct MI325X 256GB HBM3e", "Cluster_A"),   # per node
    ("AMD Instinct MI300X 192GB HBM3 & AMD Instinct MI325X 256GB HBM3e", "8xMI300X_2xEPYC_9534_8xMI325X_2xEPYC_9655"),
    ("AMD Instinct MI325X 256GB HBM3e", "8xMI325X_2xEPYC_9655_8xMI300X_2xEPYC_9534"),
])
def test_every_spelling_of_a_mixed_cluster_is_one_composition(tmp_path, accelerator, platform):
    rows = [row(SUPERMICRO_OFFLINE, accelerator_model_name=accelerator, Platform=platform,
                number_of_nodes="2", total_accelerators="16")]
    for report in (published(tmp_path / "published", rows), sealed(tmp_path / "partner", rows)):
        assert not report.findings and not report.dispositions
        assert tuple(report.table[["accelerator", "composition"]].values[0]) == MIXED
        assert report.table["total_accelerators"].tolist() == [16]


def test_a_system_that_mixes_vendors_is_excluded_for_mixed_vendors(tmp_path):
    mixed = "NVIDIA B200-SXM-180GB (x8) and AMD Instinct MI355X 288GB HBM3e (x8)"
    rows = [row(AMD_OFFLINE), row(SUPERMICRO_OFFLINE, accelerator_model_name=mixed,
                                  Platform="8xB200_8xMI355X_4xEPYC", number_of_nodes="2")]
    report = published(tmp_path, rows)
    assert not report.findings
    partner_row = report.table[report.table["submitter"] == "Supermicro"]
    assert partner_row[["accelerator", "composition"]].values.tolist() == [["B200+MI355X", "B200:8,MI355X:8"]]
    [verdict] = compare_mod.compare(RULES, report.table, 4.0, "AMD", "AMD").table.to_dict("records")
    assert verdict["verdict"] == "excluded"
    assert verdict["reason"] == "mixed vendors: B200+MI355X combines AMD and NVIDIA parts, not a AMD system"


def test_counts_written_as_nodes_of_a_type_are_that_many_of_it(tmp_path):
    """v6.1's heterogeneous cluster: ``(x2x8)`` is 2 nodes of 8, so 16 of the type."""
    mixed = "AMD Instinct MI300X 192GB HBM3 (x2x8) and AMD Instinct MI325X 256GB HBM3e (x2x8)"
    rows = [row(SUPERMICRO_OFFLINE, accelerator_model_name=mixed, Platform="2x8xMI325X_2x8xMI300X",
                number_of_nodes="4", total_accelerators="32")]
    for report in (published(tmp_path / "published", rows), sealed(tmp_path / "partner", rows)):
        assert not report.findings and not report.dispositions
        assert tuple(report.table[["accelerator", "composition"]].values[0]) == ("MI300X+MI325X",
                                                                                 "MI300X:16,MI325X:16")
        assert report.table["total_accelerators"].tolist() == [32]


@pytest.mark.parametrize(("name", "part", "vendor"), [
    ("AMD Instinct MI350P", "MI350P", "AMD"), ("AMD Radeon 8060S Graphics", "Radeon-8060S", "AMD"),
    ("NVIDIA VR200", "VR200", "NVIDIA"), ("Intel(R) Arc(TM) Pro B70", "Arc-Pro-B70", "Intel"),
    ("Intel Arc Pro B70", "Arc-Pro-B70", "Intel"), ("AMD Instinct MI350X 288GB HBM3e", "MI350X", "AMD")])
def test_the_parts_v61_names_are_registered(name, part, vendor):
    [found] = composition.parts_in_name(RULES, name)
    assert (found.name, found.registered, found.vendor) == (part, True, vendor)


def test_several_types_without_counts_are_shared_in_a_published_table_and_refused_in_a_partners(tmp_path):
    mixed = "AMD Instinct MI300X 192GB HBM3 and AMD Instinct MI325X 256GB HBM3e"
    rows = [row(SUPERMICRO_OFFLINE, accelerator_model_name=mixed, Platform="Cluster_A", number_of_nodes="2",
                total_accelerators="16")]
    kept = published(tmp_path, rows)
    assert kept.table["composition"].tolist() == ["MI300X:8,MI325X:8"]
    assert codes(kept) == [("composition-assumed", "warning", "accelerator_model_name")]
    refused = sealed(tmp_path, rows)
    assert refused.table.empty and codes(refused) == [("missing-value", "error", "accelerator_model_name")]


# ---- a partner's labels must agree --------------------------------------------------------

@pytest.mark.parametrize(("fields", "column"), [
    ({"system": "8xMI355X_2xEPYC_9575F", "accelerator": "AMD Instinct MI300X 192GB HBM3"}, "accelerator"),
    ({"system": "8xMI355X_2xEPYC_9575F", "accelerators_per_node": "7"}, "accelerators_per_node"),
    ({"system": "8xMI355X_2xEPYC_9575F", "nodes": "2"}, "nodes"),
    ({"system": "8xMI355X_2xEPYC_9575F", "accelerator": "", "accelerators_per_node": "0"}, "accelerator"),
    ({"system": "XE9680_MI300X_192GBx8", "accelerator": "AMD Instinct MI355X 288GB HBM3e"}, "accelerator"),
    ({"division": "network"}, "division"),
])
def test_labels_that_contradict_the_system_id_are_errors_in_a_partners_file(tmp_path, fields, column):
    report = partner(tmp_path, **fields)
    assert report.table.empty and [d.outcome for d in report.dispositions] == ["rejected"]
    assert ("label-mismatch", "error", column) in codes(report)
    f = next(f for f in report.findings if f.code == "label-mismatch")
    assert f.where == Source((tmp_path / "results.csv").as_posix(), 2, column=column)


def test_the_same_contradiction_in_a_published_table_is_a_warning(tmp_path):
    report = published(tmp_path, [row(SUPERMICRO_OFFLINE, accelerator_model_name="AMD Instinct MI300X 192GB HBM3")])
    assert len(report.table) == 1 and codes(report) == [("label-mismatch", "warning", "accelerator_model_name")]


def test_labels_that_agree_are_accepted(tmp_path):
    report = partner(tmp_path, division="network", system_name="PowerEdge XE9785 Network SUT")
    assert len(report.table) == 1 and not report.findings
    cluster = partner(tmp_path, system="87xMI355X_22xEPYC_9575F", nodes="11", total_accelerators="88")
    assert cluster.table["total_accelerators"].tolist() == [87] and not cluster.findings


def test_a_power_cap_needs_its_statement_and_a_power_result_its_data(tmp_path):
    capped = "8xMI355X_2xEPYC_9965_Power_Cap_1000W"
    refused = partner(tmp_path, system=capped)
    assert codes(refused) == [("power-data-missing", "error", "accelerator")]
    other_watts = partner(tmp_path, system=capped, accelerator="AMD Instinct MI355X 288GB HBM3e (Power Cap 750 W)")
    assert codes(other_watts) == [("power-data-missing", "error", "accelerator")]
    stated = partner(tmp_path, system=capped, accelerator="AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)")
    assert len(stated.table) == 1 and not stated.findings
    [verdict] = compare_mod.compare(RULES, stated.table, 4.0, "AMD", "AMD").table.to_dict("records")
    assert (verdict["verdict"], verdict["reason"]) == ("excluded", "power-capped configuration")

    power = row(SUPERMICRO_OFFLINE, has_power="True")
    missing = sealed(tmp_path / "a", [power])
    assert missing.table.empty and codes(missing) == [("power-data-missing", "error", "has_power")]
    with_data = sealed(tmp_path / "b", [{**power, "design_power_watts": "10400"}])
    assert [d.reason for d in with_data.dispositions] == ["power result: not a performance figure"]
    assert not with_data.findings


# ---- authority comes from where a file lives -------------------------------------------------

def test_a_checker_summary_under_submissions_is_a_partners_file(tmp_path):
    rows = [row(SUPERMICRO_OFFLINE, MlperfModel="llama2-70b-99\u200b", Model="llama2-70b-99\u200b")]
    as_published = published(tmp_path, rows)
    assert len(as_published.table) == 1   # MLCommons' table: the model is another name, kept with warnings
    assert {f.severity for f in as_published.findings} == {"warning"}
    as_partner = sealed(tmp_path, rows)
    assert as_partner.table.empty
    assert ("invisible-character", "error", "MlperfModel") in codes(as_partner)
    f = next(f for f in as_partner.findings if f.code == "invisible-character")
    assert "U+200B ZERO WIDTH SPACE" in f.found and f.file.endswith("v6.0/Supermicro/v1/summary.csv")


# ---- hidden characters and near misses ----------------------------------------------------------

@pytest.mark.parametrize(("field", "text", "code"), [
    ("model", "llama2-70b-99\u200b", "invisible-character"),
    ("accelerator", "\u0410MD Instinct MI355X 288GB HBM3E", "confusable-character"),    # Cyrillic А
    ("system", "8xMI355X\u202e_2xEPYC", "invisible-character"),                          # right-to-left override
    ("system_name", "PowerEdge\u00a0XE9785", "invisible-character"),
    ("scenario", "\uff33erver", "confusable-character"),                                  # fullwidth S
])
def test_a_hidden_character_in_a_name_is_an_error(tmp_path, field, text, code):
    report = partner(tmp_path, **{field: text})
    assert report.table.empty
    assert (code, "error", field) in codes(report)


def test_hidden_characters_are_found_and_plain_text_passes():
    assert textcheck.hidden_character("AMD Instinct MI355X 288GB HBM3e (x87)") is None
    assert textcheck.hidden_character("Société Générale ± 5 µs") is None   # accents and symbols are text
    for ch in ("\u200b", "\u200d", "\u2066", "\u00ad", "\u3164", "\ufeff", "\u2009"):
        assert textcheck.hidden_character(f"a{ch}b")[:2] == ("invisible-character", 1), repr(ch)
    for ch in ("\u0430", "\u03bf", "\uff4d", "\U0001d40c"):
        assert textcheck.hidden_character(f"a{ch}b")[:2] == ("confusable-character", 1), repr(ch)


def test_a_manifest_holding_a_zero_width_character_is_refused(tmp_path):
    rows = [row(SUPERMICRO_OFFLINE)]
    report = sealed(tmp_path, rows)
    assert len(report.table) == 1
    manifest = tmp_path / "submissions" / "v6.0" / "Supermicro" / "v1" / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("submitter: Supermicro", "submitter: Super\u200bmicro"))
    again = ingest(RULES, [tmp_path / "submissions"], root=tmp_path / "submissions", visible=lambda v: None)
    assert again.table.empty and "invisible-character" in {f.code for f in again.findings}


@pytest.mark.parametrize(("fields", "column", "hint"), [
    ({"model": "llama2-70b-9"}, "model", "did you mean llama2-70b-99"),
    ({"scenario": "Ofline"}, "scenario", "did you mean Offline"),
    ({"division": "closd"}, "division", "did you mean closed"),
    ({"units": "Token/s"}, "units", "did you mean Tokens/s"),
])
def test_an_unknown_name_names_the_closest_known_one(tmp_path, fields, column, hint):
    report = partner(tmp_path, **fields)
    [f] = [f for f in report.findings if f.where.column == column]
    assert hint in f.message


def test_units_and_scenarios_are_matched_in_any_case_and_kept_canonical(tmp_path):
    report = partner(tmp_path, scenario="server", units="tokens/S")
    assert report.table[["scenario", "units"]].values.tolist() == [["Server", "Tokens/s"]]
    assert not report.findings
