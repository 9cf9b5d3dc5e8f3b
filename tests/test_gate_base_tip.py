"""The gate judges a pull request merged into the base branch as it is now:
the policy, the rules and the reference come from the tip of `--base`, never
from the merge base, which the submitter chooses by where the branch starts.
Each case starts the branch, then moves main on as a maintainer would."""

from __future__ import annotations

from pathlib import Path

from gitrepo import commit, git
from test_gate import AMD, DELL_SYSTEM, ROUND, base_repo, csv_text, gate, repo, submit  # noqa: F401 (fixtures)
from test_gate_bypasses import codes, doc_of, set_params


def on_main(repo: Path, change, message: str) -> None:
    """A maintainer's commit on main after the pull request's branch started."""
    git(repo, "checkout", "-q", "main")
    change(repo)
    commit(repo, message)
    git(repo, "checkout", "-q", "pr")


def test_a_branch_started_before_main_tightened_the_tolerance_is_judged_by_the_tighter_one(repo):
    submit(repo, csv_text("Dell", {"Server": "102300"}, DELL_SYSTEM), "Dell")        # +2.01%
    commit(repo, "Dell v2")
    assert gate(repo).returncode == 0                          # within main's 4% when the branch started
    on_main(repo, lambda r: set_params(r, tolerance_pct=1.0), "policy: tolerance 1%")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1, done.stdout
    doc = doc_of(done)
    assert doc["summary"]["tolerance_pct"] == 1.0 and doc["summary"]["change"] == "submission"
    assert codes(doc) == {("deviates-from-reference", f"submissions/{ROUND}/Dell/v2/results.csv", "line 2, column value")}
    # the branch's own tree holds params.yaml as it was: not a policy change of the pull request
    assert not any(f["code"] == "policy-change" for f in doc["findings"])


def test_a_branch_started_before_the_reference_changed_is_judged_against_the_current_one(repo):
    submit(repo, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")        # +0.72% from AMD v1
    commit(repo, "Dell v2")
    on_main(repo, lambda r: submit(r, csv_text("AMD", {"Server": "110000", "Offline": "110000"}), "AMD"),
            "AMD v2: the reference, rerun")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1, done.stdout
    doc = doc_of(done)
    [row] = doc["rows"]
    assert row["verdict"] == "deviates" and row["reference_source"] == f"submissions/{ROUND}/AMD/v2/results.csv:2"
    assert codes(doc) == {("deviates-from-reference", f"submissions/{ROUND}/Dell/v2/results.csv", "line 2, column value")}


def test_a_version_number_main_has_taken_since_the_branch_started_is_immutable(repo):
    submit(repo, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")
    commit(repo, "Dell v2")
    on_main(repo, lambda r: submit(r, csv_text("Dell", {"Server": "100500"}, DELL_SYSTEM), "Dell"),
            "Dell v2, merged from another pull request")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    assert ("version-immutable", f"submissions/{ROUND}/Dell/v2/results.csv", "line 2") in codes(doc_of(done))


def test_an_up_to_date_good_branch_still_passes_after_main_moved_elsewhere(repo):
    submit(repo, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")
    commit(repo, "Dell v2")
    on_main(repo, lambda r: (r / "NOTES.md").write_text("notes\n"), "a maintainer's note")
    done = gate(repo, "--format", "json")
    assert done.returncode == 0, done.stdout
    doc = doc_of(done)
    assert doc["summary"]["versions"] == [f"{ROUND}/Dell/v2"] and doc["summary"]["change"] == "submission"
    assert doc["summary"]["base_commit"] == git(repo, "rev-parse", "--short=12", "main").strip()
