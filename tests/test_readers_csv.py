"""CSV readers on real MLCommons files (read in place) and on the quirks seen
in real published data (small samples in tests/data)."""

from __future__ import annotations

import csv

import pytest

from conftest import normalised, RULES, DATA, REAL, read_csv, run, run_json

from pipeline import readers
from pipeline.core.model import Source, plain
from pipeline.ingest.normalise import Context

CHECKER = REAL / "v5.1-checker-summary.csv"
GIGA = REAL / "v5.1-submission-tree" / "closed" / "GigaComputing" / "summary.csv"



def header_of(path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return next(csv.reader(fh))


def rows_of(path, fmt=None, round_=None):
    """(accepted canonical rows, findings, rows not accepted) of a file, normalised as an ingest does."""
    done = normalised(readers.read(RULES, path, path.name, fmt), Context(status="verified", round=round_))
    return plain(done.frame.to_dict("records")), done.findings, done.dispositions


# ---- the current checker summary (31 columns) --------------------------------------

def test_current_checker_summary_is_detected_and_read_whole():
    assert len(header_of(CHECKER)) == 31
    assert readers.detect(RULES, CHECKER) == "mlcommons-summary-csv"
    result = readers.read(RULES, CHECKER, "summary.csv")
    records = list(result.records)
    assert len(records) == 98
    assert result.findings == [] and result.dispositions == []
    assert result.round == "v5.1"
    assert [r.line for r in records] == list(range(2, 100))


def test_current_checker_summary_ingests_91_rows_and_excludes_7_cpu_only(tmp_path):
    out, rejected = tmp_path / "results.csv", tmp_path / "rejected.csv"
    doc = run_json("ingest", CHECKER, "--status", "verified", "-o", out,
                   "--rejected-out", rejected, expect=0)
    s = doc["summary"]
    assert (s["accepted"], s["rejected"], s["set_aside"]) == (91, 0, 7)
    excluded = read_csv(rejected)
    assert len(excluded) == 7
    assert {r["outcome"] for r in excluded} == {"set-aside"}
    assert {r["reason"] for r in excluded} == {"CPU-only result: no accelerator to compare"}
    rows = read_csv(out)
    assert {r["round"] for r in rows} == {"v5.1"}
    assert all(r["accelerator"] for r in rows)


def test_every_input_row_is_accounted_for(tmp_path):
    """accepted + rejected + excluded = rows in the file (real checker summary)."""
    out, rejected = tmp_path / "out.csv", tmp_path / "rejected.csv"
    doc = run_json("ingest", CHECKER, "--status", "verified",
                   "-o", out, "--rejected-out", rejected, expect=0)
    s = doc["summary"]
    assert s["accepted"] + s["rejected"] + s["set_aside"] == 98
    assert len(read_csv(out)) + len(read_csv(rejected)) == 98


def test_a_known_real_figure_comes_through_unchanged(tmp_path):
    out = tmp_path / "results.csv"
    run("ingest", CHECKER, "--status", "verified", "-o", out, expect=0)
    [row] = [r for r in read_csv(out) if r["submitter"] == "AMD"
             and r["system"] == "8xMI300X_2xEPYC_9575F"
             and r["model"] == "llama2-70b-99" and r["scenario"] == "Offline"]
    assert float(row["value"]) == 27803.9
    assert row["units"] == "Tokens/s"
    assert (row["accelerator"], row["composition"], row["total_accelerators"]) == (
        "MI300X", "MI300X:8", "8")
    assert row["system_name"] == "Supermicro AS-8125GS-TNMR2"
    assert row["source"] == f"{CHECKER.as_posix()}:3"
    assert (row["division"], row["availability"], row["status"]) == ("closed", "available", "verified")


def test_the_two_amd_mi325x_reference_systems_are_both_kept(tmp_path):
    out = tmp_path / "results.csv"
    run("ingest", CHECKER, "--status", "verified", "-o", out, expect=0)
    offline = {r["system"]: float(r["value"]) for r in read_csv(out)
               if r["submitter"] == "AMD" and r["model"] == "llama2-70b-99"
               and r["scenario"] == "Offline" and r["accelerator"] == "MI325X"}
    assert offline == {"8xMI325X_2xEPYC_9575F_1": 34520.4, "8xMI325X_2xEPYC_9575F_2": 34555.0}


# ---- the older checker summary (28 columns) -----------------------------------------

def test_older_checker_summary_layout(tmp_path):
    assert len(header_of(GIGA)) == 28
    assert not {"total_accelerators", "design_power_watts", "PrivateID"} & set(header_of(GIGA))
    assert readers.detect(RULES, GIGA) == "mlcommons-summary-csv"
    out = tmp_path / "results.csv"
    doc = run_json("ingest", GIGA, "--status", "verified", "-o", out, expect=0)
    assert (doc["summary"]["accepted"], doc["summary"]["rejected"]) == (18, 0)
    rows = read_csv(out)
    assert {r["submitter"] for r in rows} == {"GigaComputing"}
    # no total_accelerators column: nodes x per node
    assert {(r["accelerator"], r["composition"], r["total_accelerators"]) for r in rows} == {
        ("B200", "B200:8", "8")}
    [server] = [r for r in rows if r["model"] == "llama2-70b-99" and r["scenario"] == "Server"]
    assert float(server["value"]) == 99066.0


# ---- quirks of real data --------------------------------------------------------------

QUIRK_FILES = [("checker-quirks.csv", "mlcommons-summary-csv"), ("results-quirks.csv", "results-csv")]


@pytest.fixture(params=QUIRK_FILES, ids=[f for f, _ in QUIRK_FILES])
def quirk_rows(request):
    name, fmt = request.param
    path = DATA / name
    assert readers.detect(RULES, path) == fmt
    rows, found, not_accepted = rows_of(path)
    assert found == [] and not_accepted == [], [f.render() for f in found]
    return rows


def test_lower_case_scenario_is_read_as_the_mlperf_scenario(quirk_rows):
    assert quirk_rows[0]["scenario"] in ("Offline", "Server")
    assert quirk_rows[0]["submitter"] == "AMD"


def test_model_alias_is_read_as_the_benchmark_id(quirk_rows):
    assert quirk_rows[1]["model"] == "llama3.1-8b"


def test_platform_id_gives_the_true_accelerator_count(quirk_rows):
    row = quirk_rows[2]
    assert row["system"] == "87xMI355X_22xEPYC_9575F"
    assert (row["nodes"], row["accelerators_per_node"]) == (11, 8)
    assert row["total_accelerators"] == 87  # not 11 x 8 = 88
    assert row["composition"] == "MI355X:87"
    assert row["value"] == 1042110.0


def test_heterogeneous_accelerator_text_gives_the_composition(quirk_rows):
    row = quirk_rows[3]
    assert row["composition"] == "MI300X:32,MI325X:16"
    assert row["accelerator"] == "MI300X+MI325X"
    assert row["total_accelerators"] == 48


def test_the_same_result_in_two_formats_is_a_duplicate(tmp_path):
    """Both quirk files hold the GigaComputing and the 87-GPU results: after
    normalisation they are the same rows, so all four copies are rejected."""
    out = tmp_path / "results.csv"
    doc = run_json("ingest", DATA / "checker-quirks.csv", DATA / "results-quirks.csv",
                   "--status", "verified", "-o", out, expect=1)
    dups = [f for f in doc["findings"] if f["code"] == "duplicate-row"]
    assert sorted((f["file"], f["place"]) for f in dups) == [
        (f"{(DATA / 'checker-quirks.csv').as_posix()}", "line 3"),
        (f"{(DATA / 'checker-quirks.csv').as_posix()}", "line 4"),
        (f"{(DATA / 'results-quirks.csv').as_posix()}", "line 3"),
        (f"{(DATA / 'results-quirks.csv').as_posix()}", "line 4")]
    assert doc["summary"]["accepted"] == 4


@pytest.mark.parametrize("name", ["results-quirks.csv", "checker-quirks.csv"])
def test_a_file_stating_its_round_needs_no_round_option(tmp_path, name):
    out = tmp_path / "results.csv"
    run("ingest", DATA / name, "--status", "verified", "-o", out, expect=0)
    assert {r["round"] for r in read_csv(out)} == {"v6.0"}


@pytest.mark.parametrize(("edit", "code"), [
    (("llama2-70b-99", "llama9-1b"), "unknown-model"),
    ((",Offline,", ",Batch,"), "unknown-scenario"),
    ((",Tokens/s,", ",Samples/s,"), "units-mismatch"),
    ((",closed,", ",secret,"), "invalid-choice"),
    ((",8,1,", ",eight,1,"), "malformed-number"),
    ((",102725,", ",-5,"), "invalid-value"),
])
def test_results_csv_field_problems_name_their_place(tmp_path, edit, code):
    sample = tmp_path / "one.csv"
    lines = (DATA / "results-dell.csv").read_text().splitlines()
    bad = lines[2].replace("Interactive", "Offline").replace("88000", "102725")
    sample.write_text("\n".join([lines[0], bad.replace(*edit)]) + "\n")
    rows, found, [rejected] = rows_of(sample, round_="v6.0")
    assert rows == [] and rejected.source == "one.csv:2"
    assert code in [f.code for f in found]
    assert all(f.file == "one.csv" and f.place.startswith("line 2, column ") for f in found)


def test_a_row_with_the_wrong_number_of_fields_is_rejected(tmp_path):
    sample = tmp_path / "short.csv"
    lines = (DATA / "results-dell.csv").read_text().splitlines()
    sample.write_text("\n".join([lines[0], lines[1], lines[2].rsplit(",", 1)[0]]) + "\n")
    result = readers.read(RULES, sample, "short.csv")
    assert len(list(result.records)) == 1
    [d] = result.dispositions
    assert (d.source, d.outcome, d.codes) == ("short.csv:3", "rejected", "format-mismatch")


def test_an_unknown_column_is_a_warning(tmp_path):
    sample = tmp_path / "extra.csv"
    lines = (DATA / "results-dell.csv").read_text().splitlines()
    sample.write_text("\n".join([lines[0] + ",comment"] + [x + ",ok" for x in lines[1:]]) + "\n")
    result = readers.read(RULES, sample, "extra.csv")
    assert len(list(result.records)) == 2
    assert [(f.code, f.severity) for f in result.findings] == [("unexpected-column", "warning")]


def test_a_file_that_is_not_utf8_is_a_finding(tmp_path):
    sample = tmp_path / "latin1.csv"
    text = (DATA / "results-dell.csv").read_text().replace("PowerEdge", "PowerÉdge")
    sample.write_bytes(text.encode("latin-1"))
    result = readers.read(RULES, sample, "latin1.csv", "results-csv")
    assert list(result.records) == []
    [f] = result.findings
    at = text.encode("latin-1").index("É".encode("latin-1"))
    assert f.code == "not-utf8" and f.where == Source("latin1.csv", line=2)   # the byte offset is in found
    assert f.found == f"{'Édge'.encode('latin-1')!r} at byte {at}"


def test_an_unknown_format_is_a_finding_not_a_crash(tmp_path):
    sample = tmp_path / "notes.csv"
    sample.write_text("a,b\n1,2\n")
    assert readers.detect(RULES, sample) is None
    result = readers.read(RULES, sample, "notes.csv")
    assert [f.code for f in result.findings] == ["unknown-format"]


# ---- one label per mixed cluster, variants kept, published counts ----

def _one_row(tmp_path, **fields) -> dict:
    from conftest import results_row, write_results_csv

    row = results_row(**fields)
    path = write_results_csv(tmp_path / "r.csv", [row], header=tuple(row))
    out = tmp_path / "o.csv"
    run("ingest", path, "--status", "verified", "--round", "v6.0", "-o", out, expect=0)
    [got] = read_csv(out)
    return got


@pytest.mark.parametrize("platform", ["8xMI325X_2xEPYC_9655_8xMI300X_2xEPYC_9534",
                                      "8xMI300X_2xEPYC_9534_8xMI325X_2xEPYC_9655"])
def test_a_mixed_cluster_has_one_label_whatever_the_order(tmp_path, platform):
    got = _one_row(tmp_path, system=platform, platform=platform, nodes="2",
                   accelerator="AMD Instinct MI325X 256GB HBM3e")
    assert (got["accelerator"], got["composition"]) == ("MI300X+MI325X", "MI300X:8,MI325X:8")


@pytest.mark.parametrize(("text", "family", "variant"), [
    ("NVIDIA H100-SXM-80GB", "H100", "H100 SXM 80GB"),
    ("NVIDIA H100-PCIe-80GB", "H100", "H100 PCIe 80GB"),
    ("NVIDIA H100-NVL-94GB", "H100", "H100 NVL 94GB"),
    ("AMD Instinct MI300X-NPS1-SPX-192GB-750W", "MI300X", "MI300X 192GB"),
    ("AMD Instinct MI355X 288GB HBM3e", "MI355X", "MI355X 288GB"),
    ("NVIDIA L40S", "L40S", "L40S"),
])
def test_the_accelerator_keeps_its_variant(tmp_path, text, family, variant):
    got = _one_row(tmp_path, system="XE9680", accelerator=text, model="resnet", scenario="Offline",
                   units="Samples/s")
    assert (got["accelerator"], got["accelerator_variant"]) == (family, variant)


def test_a_count_in_the_name_larger_than_the_nodes_hold_is_refused_in_a_partners_file(tmp_path):
    """A partner's system id states 4 H100; its labels say 1 node of 1: the
    row is refused, never read with one of the two counts (a published table
    keeps its own count with a warning: test_reader_summary_json)."""
    from conftest import results_row, write_results_csv

    row = results_row(system="XE8640_4xH100_vLLM", accelerator="NVIDIA H100-SXM-80GB",
                      accelerators_per_node="1", model="resnet", scenario="Offline", units="Samples/s")
    path = write_results_csv(tmp_path / "r.csv", [row])
    doc = run_json("ingest", path, "--status", "verified", "--round", "v6.0", "-o", tmp_path / "o.csv",
                   expect=1)
    assert doc["rows"] == []
    [f] = doc["findings"]
    assert (f["code"], f["severity"], f["line"], f["column"]) == ("label-mismatch", "error", 2,
                                                                  "accelerators_per_node")
    assert f["expected"] == "4 stated in the name 'XE8640_4xH100_vLLM': nodes x per node = 4"
    assert f["found"] == "1 (nodes 1 x per node 1)"


# ---- a file no reader recognises: said against the format it most resembles ----------

DELL = (DATA / "results-dell.csv").read_text()


def _only_finding(tmp_path, name: str, text: str):
    sample = tmp_path / name
    sample.write_text(text)
    assert readers.detect(RULES, sample) is None
    result = readers.read(RULES, sample, name)
    assert list(result.records) == []
    [f] = result.findings
    return f


def test_a_results_file_without_units_names_the_missing_column(tmp_path):
    f = _only_finding(tmp_path, "dell.csv", "\n".join(",".join(cells[:8] + cells[9:]) for cells in
                                                      (line.split(",") for line in DELL.splitlines())) + "\n")
    assert (f.code, f.where, f.found) == ("missing-column", Source("dell.csv", line=1), "no column units")
    assert f.expected.startswith("the results-csv columns submitter, system, accelerator, ")
    assert f.message == ("cannot detect the file's format: it looks like results-csv without its column "
                         "units: add it to the header line")


def test_a_column_named_in_another_case_is_named_as_found(tmp_path):
    f = _only_finding(tmp_path, "dell.csv", DELL.replace(",units,", ",Units,", 1))
    assert f.code == "missing-column"
    assert f.found == "no column units (the header has Units: column names are case-sensitive)"


@pytest.mark.parametrize(("separator", "name"), [(";", "semicolons"), ("\t", "tabs")])
def test_a_file_separated_by_semicolons_or_tabs_says_so(tmp_path, separator, name):
    text = DELL.replace(",", separator).replace("100282", "100282,5")   # the decimal comma that comes with it
    f = _only_finding(tmp_path, "dell.csv", text)
    assert (f.code, f.where, f.expected) == ("wrong-separator", Source("dell.csv", line=1),
                                             "fields separated by commas (,)")
    assert f.found == f"fields separated by {name} ({separator!r})"
    assert f.message.startswith(f"the file looks like results-csv with its fields separated by {name}: "
                                "save it as comma-separated values")


@pytest.mark.parametrize(("text", "found"), [("", "0 bytes"), ("\n \n", "only blank lines")])
def test_an_empty_file_is_empty_not_of_an_unknown_format(tmp_path, text, found):
    f = _only_finding(tmp_path, "dell.csv", text)
    assert (f.code, f.where, f.found) == ("empty-file", Source("dell.csv"), found)
    assert f.message == "the file is empty: nothing to read as results-csv"


def test_an_empty_file_in_its_declared_format_is_empty_too(tmp_path):
    sample = tmp_path / "dell.csv"
    sample.write_text("")
    [f] = readers.read(RULES, sample, "dell.csv", "results-csv").findings
    assert (f.code, f.found, f.message) == ("empty-file", "0 bytes", "the file is empty")


def test_a_header_of_no_known_format_says_which_it_comes_closest_to(tmp_path):
    f = _only_finding(tmp_path, "notes.csv", "submitter,system,comment\nDell,x,y\n")
    assert f.code == "unknown-format"
    assert f.found == "a first line matching no known header; closest: results-csv, 2 of its 11 columns"


def test_json_that_is_not_the_published_summary_says_so(tmp_path):
    f = _only_finding(tmp_path, "results.json", '{"results": []}\n')
    assert (f.code, f.found) == ("unknown-format", "a JSON object")
    assert "Performance_Result" in f.expected


def test_the_cli_reports_the_missing_column_of_an_undetected_file(tmp_path):
    sample = tmp_path / "dell.csv"
    sample.write_text((DATA / "results-missing-column.csv").read_text())
    done = run("validate", sample, "--round", "v6.0", expect=1)
    assert "[missing-column]" in done.stderr and "found no column units)" in done.stderr


# ---- a row with one field too many: which field holds the unquoted comma -----------------

def _field_count(tmp_path, text: str, line: int = 2):
    sample = tmp_path / "dell.csv"
    sample.write_text(text)
    result = readers.read(RULES, sample, "dell.csv", "results-csv")
    list(result.records)
    [f] = [f for f in result.findings if f.line == line]
    assert (f.code, f.expected) == ("format-mismatch", "11 fields, as the header")
    return f


def test_an_unquoted_comma_decimal_is_named_in_its_column(tmp_path):
    f = _field_count(tmp_path, DELL.replace("100282", "103,48"))
    assert (f.where, f.found) == (Source("dell.csv", line=2, column="value"), "12 fields")
    assert f.message == ("the row has one field too many: the value field probably holds an unquoted "
                         "comma (103,48); write 103.48")


def test_a_thousands_separator_in_every_row_is_still_found(tmp_path):
    """No good row to learn the columns from: the number columns are known by name."""
    text = DELL.replace("100282", "100,282").replace("88000", "88,000")
    for line in (2, 3):
        f = _field_count(tmp_path, text, line)
        assert f.where.column == "value"
        assert f.message.endswith("; write 100.282 (a decimal) or 100282 (thousands)" if line == 2 else
                                  "; write 88.000 (a decimal) or 88000 (thousands)")


def test_an_unquoted_comma_in_a_name_says_to_quote_it(tmp_path):
    f = _field_count(tmp_path, DELL.replace("PowerEdge_XE9785", "PowerEdge, XE9785", 1))
    assert f.where.column == "system"
    assert f.message.endswith('; quote the field ("PowerEdge, XE9785_8xMI355X")')


def test_a_comma_ending_the_line_says_to_remove_it(tmp_path):
    lines = DELL.splitlines()
    f = _field_count(tmp_path, "\n".join([lines[0], lines[1] + ",", lines[2]]) + "\n")
    assert f.message == "the row has one field too many: a comma ends the line; remove it"


def test_two_fields_too_many_get_no_guess(tmp_path):
    lines = DELL.splitlines()
    f = _field_count(tmp_path, "\n".join([lines[0], lines[1] + ",x,y", lines[2]]) + "\n")
    assert (f.where, f.found) == (Source("dell.csv", line=2), "13 fields")
    assert f.message == "the row has too many fields: unquoted commas in a field?"
