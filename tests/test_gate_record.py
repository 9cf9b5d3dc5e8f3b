"""The visibility record (record/visible.yaml) is the maintainers': the gate
dates the versions already on the base by the base's record, never by a
commit, and a pull request may not write to it."""

from __future__ import annotations

from pathlib import Path

from conftest import ON_TIME
from gitrepo import commit, git
from test_gate import AMD, DELL_SYSTEM, ROUND, base_repo, csv_text, gate, repo, submit  # noqa: F401 (fixtures)
from test_gate_bypasses import codes, doc_of

CLOSED = "v6.0"
RECORD = "record/visible.yaml"


def record(repo: Path, entries: dict[str, str]) -> None:
    path = repo / RECORD
    path.parent.mkdir(exist_ok=True)
    path.write_text("schema_version: 1\nversions:\n" + "".join(f"  '{k}': '{v}'\n" for k, v in entries.items()),
                    encoding="utf-8")


def closed_round_on_main(repo: Path, entries: dict[str, str]) -> None:
    """main gains AMD's and Dell's v6.0 (Dell's declared verified, on time,
    in a commit back-dated before the deadline) and a record holding ENTRIES;
    then the branch `late` starts, with Dell's v2 declared post-deadline that
    leaves v1's Server row out."""
    git(repo, "checkout", "-q", "main")
    submit(repo, csv_text("AMD", AMD), "AMD", "post-deadline", round_=CLOSED)
    submit(repo, csv_text("Dell", {"Server": "95000", "Offline": "108000"}, DELL_SYSTEM), "Dell", round_=CLOSED)
    record(repo, entries)
    commit(repo, "v6.0 'in time'", when="2026-02-21T00:00:00Z")
    git(repo, "checkout", "-q", "-B", "late")
    submit(repo, csv_text("Dell", {"Offline": "108000"}, DELL_SYSTEM), "Dell", "post-deadline", ON_TIME,
           "results.csv", CLOSED)
    commit(repo, "Dell v2 leaves Server out")


def test_the_base_record_not_the_commit_date_dates_the_versions_on_the_base(repo):
    """Dell's v1 is committed with a date before the deadline; only the record
    decides whether it counts as verified. Not in the record: post-deadline,
    so the post-deadline v2 supersedes it and must withdraw the row."""
    closed_round_on_main(repo, {f"{CLOSED}/AMD/v1": "2026-03-01T00:00:00Z"})
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    assert ("result-dropped", f"submissions/{CLOSED}/Dell/v2/manifest.yaml", "key withdraws") in codes(doc_of(done))


def test_a_version_the_base_record_saw_in_time_stays_verified_and_is_not_superseded(repo):
    closed_round_on_main(repo, {f"{CLOSED}/AMD/v1": "2026-03-01T00:00:00Z",
                                f"{CLOSED}/Dell/v1": "2026-02-21T00:00:00Z"})
    done = gate(repo, "--format", "json")
    assert done.returncode == 0, done.stdout
    assert doc_of(done)["summary"]["withdrawals"] == []


def test_a_pull_request_that_writes_the_record_fails(repo):
    submit(repo, csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM), "Dell")
    record(repo, {f"{ROUND}/Dell/v2": "2026-02-21T00:00:00Z"})
    commit(repo, "Dell v2, seen 'in time'")
    for label in ((), ("--allow-maintenance",)):
        done = gate(repo, "--format", "json", *label)
        assert done.returncode == 1
        doc = doc_of(done)
        assert doc["summary"]["change"] == "mixed"
        assert ("maintenance-change", RECORD, "whole file") in codes(doc)


def test_every_shipped_version_is_in_the_record():
    """A shipped version the record lacks counts as visible now: the regenerate
    workflow would append it at its run time (a round shipped without its lines
    here, as v6.1 once was, shows up as new on the next push)."""
    import yaml

    repo_root = Path(__file__).resolve().parents[1]
    record = yaml.safe_load((repo_root / "record" / "visible.yaml").read_text(encoding="utf-8"))["versions"]
    shipped = {m.parent.relative_to(repo_root / "submissions").as_posix()
               for m in (repo_root / "submissions").glob("*/*/v*/manifest.yaml")}
    assert shipped - set(record) == set()
