"""Every way a pull request could talk its way past the gate, each in a
real temporary git repository (a base on `main` holding the project's policy
and a round whose deadline is ahead, then a pull-request branch), each
failing with its located finding; read from the JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import ON_TIME
from gitrepo import commit, git
from test_gate import (AMD, DELL_SYSTEM, ROUND, base_repo, csv_text, gate, mlrepro, repo,  # noqa: F401
                       sealed_version, submit)

DELL_V1 = f"submissions/{ROUND}/Dell/v1/results.csv"


def doc_of(done) -> dict:
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def codes(doc: dict, severity: str = "error") -> set[tuple[str, str, str]]:
    return {(f["code"], f["file"], f["place"]) for f in doc["findings"] if f["severity"] == severity}


def edit_yaml(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def set_params(repo: Path, **compare) -> None:
    edit_yaml(repo / "params.yaml", lambda d: d["compare"].update(compare))


def line_after(path: Path, *marks: str) -> int:
    """The line of the last of MARKS, each looked for after the one before it."""
    line = 0
    lines = path.read_text(encoding="utf-8").splitlines()
    for mark in marks:
        line = next(i for i, text in enumerate(lines, 1) if i > line and text.lstrip(" -").startswith(mark))
    return line


# ---- policy comes from the base --------------------------------------------------------------

@pytest.mark.parametrize("change, key, old, new", [
    ({"tolerance_pct": 50.0}, "compare.tolerance_pct", "4.0", "50.0"),
    ({"reference_submitter": "Dell"}, "compare.reference_submitter", "AMD", "Dell"),
    ({"reference_submitter": "Nobody"}, "compare.reference_submitter", "AMD", "Nobody"),
    ({"reference_vendor": "NVIDIA"}, "compare.reference_vendor", "(absent)", "NVIDIA"),
])
def test_a_pr_that_loosens_params_is_judged_by_the_base_and_fails(repo, change, key, old, new):
    set_params(repo, **change)
    submit(repo, csv_text("Dell", {"Server": "95000"}, DELL_SYSTEM), "Dell")   # -5.27%
    commit(repo, "Dell v2, 5% low, and a friendlier params.yaml")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    doc = doc_of(done)
    assert doc["summary"]["tolerance_pct"] == 4.0 and doc["summary"]["reference_submitter"] == "AMD"
    [policy] = [f for f in doc["findings"] if f["code"] == "policy-change"]
    line = line_after(repo / "params.yaml", "compare:", key.split(".")[1] + ":")
    assert (policy["file"], policy["place"], policy["expected"], policy["found"]) == (
        "params.yaml", f"line {line}, key {key}", old, new)
    assert f"{key}: {old} -> {new}" in policy["message"]
    assert ("deviates-from-reference", f"submissions/{ROUND}/Dell/v2/results.csv", "line 2, column value") \
        in codes(doc)
    assert [r["deviation_pct"] for r in doc["rows"]] == [pytest.approx(-5.267, abs=1e-3)]


def test_even_the_allow_flag_does_not_pass_policy_and_submissions_together(repo):
    set_params(repo, tolerance_pct=50.0)
    submit(repo, csv_text("Dell", {"Server": "95000"}, DELL_SYSTEM), "Dell")
    commit(repo, "both at once")
    doc = doc_of(gate(repo, "--format", "json", "--allow-policy-change"))
    assert doc["summary"]["verdict"] == "fail"
    assert ("policy-change", "params.yaml", "line 2, key compare.tolerance_pct") in codes(doc)


def test_a_moved_deadline_is_a_policy_change_and_the_base_deadline_holds(repo):
    """Round v6.0's deadline is past; the PR moves it and adds a verified v6.0 version."""
    edit_yaml(repo / "schemas" / "rounds.yaml",
              lambda d: d["rounds"]["v6.0"].update(submission_deadline="2099-01-01T00:00:00+00:00"))
    submit(repo, csv_text("AMD", AMD), "AMD", round_="v6.0")
    commit(repo, "AMD v6.0, and a later deadline")
    doc = doc_of(gate(repo, "--format", "json"))
    assert doc["summary"]["verdict"] == "fail"
    [policy] = [f for f in doc["findings"] if f["code"] == "policy-change"]
    line = line_after(repo / "schemas" / "rounds.yaml", "rounds:", "v6.0:", "submission_deadline:")
    assert (policy["file"], policy["place"], policy["expected"], policy["found"]) == (
        "schemas/rounds.yaml", f"line {line}, key rounds.v6.0.submission_deadline", "2026-02-27T13:00:00-08:00",
        "2099-01-01T00:00:00+00:00")
    assert ("verified-after-deadline", "submissions/v6.0/AMD/v1/manifest.yaml",
            "line 4, key submitted_at") in codes(doc)
    assert {r["status"] for r in doc["rows"]} == {"post-deadline"}


def test_a_widened_accelerator_alias_is_a_policy_change(repo):
    def widen(data):
        data["accelerators"][0]["pattern"] = ".*"
    edit_yaml(repo / "schemas" / "accelerators.yaml", widen)
    commit(repo, "every part is the first accelerator")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    doc = doc_of(done)
    [policy] = [f for f in doc["findings"] if f["code"] == "policy-change"]
    line = line_after(repo / "schemas" / "accelerators.yaml", "accelerators:", "pattern:")
    assert policy["file"] == "schemas/accelerators.yaml"
    assert policy["place"] == f"line {line}, key accelerators.0.pattern"
    assert policy["found"] == ".*"


@pytest.mark.parametrize("path, code", [
    ("published/v5.1.csv", "policy-change"), ("schemas/attested.yaml", "policy-change"),
    ("pyproject.toml", "maintenance-change"), ("dvc.yaml", "maintenance-change"),
    (".github/workflows/gate.yml", "maintenance-change"), ("pipeline/gate.py", "maintenance-change")])
def test_any_file_outside_the_submissions_added_or_changed_fails(repo, path, code):
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("x: 1\n", encoding="utf-8")
    commit(repo, f"touch {path}")
    doc = doc_of(gate(repo, "--format", "json"))
    assert doc["summary"]["verdict"] == "fail" and doc["summary"]["change"] == "maintenance"
    assert {(f["code"], f["file"]) for f in doc["findings"]} == {(code, path)}


def test_a_params_entry_beside_a_submission_is_a_maintenance_change(repo):
    """Only the compare section decides a verdict, but a submission holds
    nothing but its version folders: another params.yaml key beside it fails."""
    edit_yaml(repo / "params.yaml", lambda d: d.update(submissions={"v9.9-Dell": {"round": ROUND}}))
    submit(repo, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")
    commit(repo, "Dell v2 and its ingest stage entry")
    done = gate(repo, "--format", "json", "--allow-maintenance")
    assert done.returncode == 1
    doc = doc_of(done)
    assert doc["summary"]["change"] == "mixed"
    [f] = doc["findings"]
    assert (f["code"], f["file"], f["severity"]) == ("maintenance-change", "params.yaml", "error")
    assert "together with a submission" in f["message"]


def test_a_policy_only_pr_fails_without_the_flag_and_shows_flips_with_it(repo):
    set_params(repo, tolerance_pct=1.0)          # Dell v1 is -1.28% off: agree -> deviates
    commit(repo, "a tighter tolerance")
    without = gate(repo, "--format", "json")
    assert without.returncode == 1
    assert ("policy-change", "params.yaml", "line 2, key compare.tolerance_pct") in codes(doc_of(without))

    done = gate(repo, "--format", "json", "--allow-policy-change")
    assert done.returncode == 0, done.stdout
    doc = doc_of(done)
    assert ("policy-change", "params.yaml", "line 2, key compare.tolerance_pct") in codes(doc, "warning")
    [flip] = doc["summary"]["flips"]
    assert flip["text"] == f"Dell {ROUND} llama2-70b-99 Server: agree -> deviates"
    assert (flip["file"], flip["line"]) == (DELL_V1, 2)
    assert flip["base"]["verdict"] == "agree" and flip["head"]["verdict"] == "deviates"
    assert ("verdict-flip", DELL_V1, "line 2") in codes(doc, "warning")
    text = gate(repo, "--allow-policy-change").stdout
    assert f"flip: Dell {ROUND} llama2-70b-99 Server: agree -> deviates" in text


def test_a_status_flip_is_listed(repo):
    edit_yaml(repo / "schemas" / "rounds.yaml",
              lambda d: d["rounds"][ROUND].update(submission_deadline="2026-02-01T00:00:00+00:00"))
    commit(repo, "an earlier deadline")
    doc = doc_of(gate(repo, "--format", "json", "--allow-policy-change"))
    texts = sorted(f["text"] for f in doc["summary"]["flips"])
    assert f"Dell {ROUND} llama2-70b-99 Server: verified -> post-deadline" in texts
    assert len(texts) == 3          # AMD's two rows and Dell's one


def test_the_environment_cannot_swap_the_schemas(repo, tmp_path):
    hostile = tmp_path / "schemas"
    import shutil
    shutil.copytree(repo / "schemas", hostile)
    edit_yaml(hostile / "rounds.yaml", lambda d: d["rounds"]["v6.0"].update(
        submission_deadline="2099-01-01T00:00:00+00:00"))
    submit(repo, csv_text("AMD", AMD), "AMD", round_="v6.0")
    commit(repo, "AMD v6.0")
    doc = doc_of(gate(repo, "--format", "json", env={"MLREPRO_SCHEMAS": str(hostile)}))
    assert "verified-after-deadline" in {f["code"] for f in doc["findings"]}


# ---- generated files ---------------------------------------------------------------------------

def test_generated_files_edited_with_submissions_fail(repo):
    """What is generated is what the base's dvc.yaml declares (its outs and
    metrics, metrics/ included), not a list kept by hand."""
    (repo / "metrics.json").write_text("{}\n", encoding="utf-8")
    (repo / "data").mkdir()
    (repo / "data" / "agreement.csv").write_text("x\n", encoding="utf-8")
    (repo / "metrics" / ROUND).mkdir(parents=True)
    (repo / "metrics" / ROUND / "verified.json").write_text("{}\n", encoding="utf-8")
    (repo / "dvc.lock").write_text("schema: '2.0'\n", encoding="utf-8")
    submit(repo, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")
    commit(repo, "Dell v2 and hand-made outputs")
    doc = doc_of(gate(repo, "--format", "json", "--allow-maintenance"))
    assert {(c, f) for c, f, _ in codes(doc)} == {
        ("generated-file-edited", "metrics.json"), ("generated-file-edited", "data/agreement.csv"),
        ("generated-file-edited", f"metrics/{ROUND}/verified.json"), ("generated-file-edited", "dvc.lock")}


# ---- one version rule ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["v02", "v0", "V2", "v2-final"])
def test_a_version_folder_not_named_exactly_v_n_fails_everywhere(repo, tmp_path, name):
    sealed_version(repo, "Dell", 2, csv_text("Dell", {"Server": "80000"}, DELL_SYSTEM), folder_name=name)
    commit(repo, f"Dell {name}")
    doc = doc_of(gate(repo, "--format", "json"))
    assert doc["summary"]["verdict"] == "fail" and doc["summary"]["versions"] == []
    assert {f["code"] for f in doc["findings"]} == {"bad-version-folder"}
    schemas = {"MLREPRO_SCHEMAS": str(repo / "schemas")}
    # validate and ingest name files under the root as given, as the gate does
    for command, prefix in ((["validate", "submissions"], "submissions/"),
                            (["ingest", "submissions", "-o", tmp_path / "t.csv"], "submissions/")):
        done = mlrepro(repo, *command, "--format", "json", env=schemas)
        assert done.returncode == 1
        found = doc_of(done)
        assert [f["file"] for f in found["findings"]] == [f"{prefix}{ROUND}/Dell/{name}"]
    rows = doc_of(mlrepro(repo, "ingest", "submissions", "-o", tmp_path / "t.csv", "--format", "json",
                          env=schemas))["rows"]
    assert {r["source"] for r in rows if r["submitter"] == "Dell"} == {f"{ROUND}/Dell/v1/results.csv:2"}


@pytest.mark.parametrize("kind", ["file", "link-outside", "link-inside"])
def test_an_unlisted_file_or_link_is_an_error(repo, tmp_path, kind):
    folder = sealed_version(repo, "Dell", 2, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM))
    extra = folder / "extra.csv"
    if kind == "file":
        extra.write_text("anything\n", encoding="utf-8")
    elif kind == "link-outside":
        (tmp_path / "secret").write_text("outside\n", encoding="utf-8")
        extra.symlink_to(tmp_path / "secret")
    else:
        extra.symlink_to("results.csv")
    commit(repo, f"Dell v2 with an unlisted {kind}")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    path = f"submissions/{ROUND}/Dell/v2/extra.csv"
    link = {("maintenance-change", path, "whole file")} if kind.startswith("link") else set()
    assert codes(doc_of(done)) == {("unlisted-file", path, "whole file")} | link


# ---- the clock ---------------------------------------------------------------------------------

def test_a_back_dated_verified_version_into_a_closed_round_is_post_deadline(repo):
    submit(repo, csv_text("AMD", AMD), "AMD", round_="v6.0", when="2026-02-20T10:00:00+00:00")
    commit(repo, "AMD v6.0 'submitted' before the deadline", when="2026-02-21T00:00:00Z")
    doc = doc_of(gate(repo, "--format", "json"))
    [late] = [f for f in doc["findings"] if f["code"] == "verified-after-deadline"]
    assert late["file"] == "submissions/v6.0/AMD/v1/manifest.yaml" and late["severity"] == "error"
    assert "the gate's clock" in late["found"]
    assert {r["status"] for r in doc["rows"]} == {"post-deadline"}


@pytest.mark.parametrize("when, code", [
    ("0001-01-01T00:00:00+00:00", "submitted-before-round-opens"),
    ("2025-12-31T23:59:59+00:00", "submitted-before-round-opens"),
    ("9999-12-31T00:00:00+00:00", "submitted-in-future"),
    ("2026-02-19T00:00:00+00:00", "submitted-before-previous"),
])
def test_an_implausible_submitted_at_fails(repo, when, code):
    sealed_version(repo, "Dell", 2, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), when=when)
    commit(repo, f"Dell v2 dated {when}")
    doc = doc_of(gate(repo, "--format", "json"))
    assert doc["summary"]["verdict"] == "fail"
    assert (code, f"submissions/{ROUND}/Dell/v2/manifest.yaml", "line 4, key submitted_at") in codes(doc)


# ---- withdrawals ---------------------------------------------------------------------------------

@pytest.fixture
def deviating_base(repo) -> Path:
    """main gains Dell v2 whose Server result deviates (-5.27%); the PR branch starts there."""
    git(repo, "checkout", "-q", "main")
    submit(repo, csv_text("Dell", {"Server": "95000", "Offline": "108000"}, DELL_SYSTEM), "Dell")
    commit(repo, "Dell v2 (merged with a deviation)", when="2026-03-01T00:00:00Z")
    git(repo, "checkout", "-q", "-B", "pr2")
    return repo


@pytest.mark.parametrize("how, rows, system, cap", [
    ("leaves it out", {"Offline": "108000"}, DELL_SYSTEM, ""),
    # a power cap the accelerator label does not state is refused when read (power-data-missing)
    ("renames the system to look power-capped", {"Server": "95000", "Offline": "108000"},
     DELL_SYSTEM + "_powercap", " (Power Cap 1000 W)"),
])
def test_a_version_that_drops_a_deviating_result_fails(deviating_base, how, rows, system, cap):
    text = csv_text("Dell", rows, system).replace("HBM3E,", f"HBM3E{cap},")
    submit(deviating_base, text, "Dell")
    commit(deviating_base, f"Dell v3 {how}")
    done = gate(deviating_base, "--format", "json")
    assert done.returncode == 1
    doc = doc_of(done)
    dropped = [f for f in doc["findings"] if f["code"] == "result-dropped"]
    assert {(f["file"], f["place"]) for f in dropped} == {
        (f"submissions/{ROUND}/Dell/v3/manifest.yaml", "key withdraws")}
    assert any("Server" in f["expected"] and "deviated by -5.27%" in f["message"] for f in dropped)


def test_a_result_moved_to_another_division_fails(deviating_base):
    text = csv_text("Dell", {"Server": "95000", "Offline": "108000"}, DELL_SYSTEM).replace(
        "Server,95000,Tokens/s,closed", "Server,95000,Tokens/s,open")
    submit(deviating_base, text, "Dell")
    commit(deviating_base, "Dell v3 moves Server to open")
    doc = doc_of(gate(deviating_base, "--format", "json"))
    [dropped] = [f for f in doc["findings"] if f["code"] == "result-dropped"]
    assert "moves it to" in dropped["message"] and "(open)" in dropped["message"]


def test_an_explicit_withdrawal_passes_and_shows_the_verdict_it_had(deviating_base):
    submit(deviating_base, csv_text("Dell", {"Offline": "108000"}, DELL_SYSTEM), "Dell", "verified",
           ON_TIME, "results.csv", ROUND, "--withdraw",
           f"{DELL_SYSTEM}:llama2-70b-99:Server:rerun pending with the new firmware")
    commit(deviating_base, "Dell v3 withdraws Server")
    done = gate(deviating_base, "--format", "json")
    assert done.returncode == 0, done.stdout
    [w] = doc_of(done)["summary"]["withdrawals"]
    assert w["version"] == f"{ROUND}/Dell/v3" and w["supersedes"] == 2
    assert w["text"] == "withdraws 1 result; 1 deviated by -5.27%"
    assert w["withdrawn"][0]["reason"] == "rerun pending with the new firmware"
    assert f"withdrawal: {ROUND}/Dell/v3 withdraws 1 result; 1 deviated by -5.27%" in gate(deviating_base).stdout


# ---- one run, every format ------------------------------------------------------------------------

def test_one_run_writes_every_format(repo):
    submit(repo, csv_text("Dell", {"Server": "90000"}, DELL_SYSTEM), "Dell")
    commit(repo, "Dell v2, 10% low")
    done = gate(repo, "--format", "github", "--output", "junit=gate.xml", "--output", "markdown=summary.md",
                "--output", "json=gate.json")
    assert done.returncode == 1
    assert done.stdout.startswith("::error file=submissions/")
    assert (repo / "gate.xml").read_text().startswith("<?xml")
    assert (repo / "summary.md").read_text().startswith("## ❌ mlrepro gate: failed")
    doc = json.loads((repo / "gate.json").read_text())
    assert doc["summary"]["deviates"] == 1 and doc["summary"]["clock"] == json.loads(
        (repo / "gate.json").read_text())["summary"]["clock"]
    assert mlrepro(repo, "gate", "--base", "main", "--output", "xml=x").returncode == 2


def test_params_outside_the_repository_is_a_usage_error(repo, tmp_path):
    done = gate(repo, "--params", tmp_path / "params.yaml")
    assert done.returncode == 2 and "outside the repository" in done.stderr


def test_the_gate_ignores_a_clock_in_the_environment(repo):
    env = {"SOURCE_DATE_EPOCH": "1771581600", "TZ": "UTC", "FAKETIME": "2026-02-20 10:00:00"}
    submit(repo, csv_text("AMD", AMD), "AMD", round_="v6.0")
    commit(repo, "AMD v6.0")
    doc = doc_of(gate(repo, "--format", "json", env=env))
    assert "verified-after-deadline" in {f["code"] for f in doc["findings"]}
    assert doc["summary"]["clock"] > "2026-02-27"


def test_a_policy_change_that_does_not_load_fails_even_with_the_flag(repo):
    (repo / "schemas" / "rounds.yaml").write_text("rounds: [unclosed\n", encoding="utf-8")
    commit(repo, "a broken rounds.yaml")
    done = gate(repo, "--format", "json", "--allow-policy-change")
    assert done.returncode == 1
    doc = doc_of(done)
    assert ("policy-change", "schemas/", "whole file") in codes(doc)
