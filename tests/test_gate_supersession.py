"""What a new version supersedes is decided by the status ingest counts it
under (its effective status), never by the status it declares: otherwise a
version declared one way could drop a result the pipeline then hides."""

from __future__ import annotations

from conftest import ON_TIME
from gitrepo import commit, git
from test_gate import AMD, DELL_SYSTEM, base_repo, csv_text, gate, repo, submit  # noqa: F401 (fixtures)
from test_gate_bypasses import doc_of

CLOSED = "v6.0"                 # its deadline has passed: a version seen now is post-deadline


def _late_verified_v1(repo) -> None:
    """main: AMD's reference and Dell's v1 (declared verified), both in after
    the deadline; branch late checked out for Dell's v2."""
    git(repo, "checkout", "-q", "main")
    submit(repo, csv_text("AMD", AMD), "AMD", "post-deadline", round_=CLOSED)
    submit(repo, csv_text("Dell", {"Server": "95000", "Offline": "108000"}, DELL_SYSTEM), "Dell",
           round_=CLOSED)
    commit(repo, "AMD and Dell v6.0, in after the deadline", when="2026-03-10T00:00:00Z")
    git(repo, "checkout", "-q", "-B", "late")


def test_a_version_that_drops_a_late_verified_result_fails_whatever_it_declares(repo):
    """main holds Dell's v1 in a closed round, declared verified but in after
    the deadline: the pipeline counts it post-deadline. A v2 declared
    post-deadline that leaves out v1's Server row supersedes it there, so the
    row must be withdrawn, although the two versions declare different statuses."""
    _late_verified_v1(repo)
    submit(repo, csv_text("Dell", {"Offline": "108000"}, DELL_SYSTEM), "Dell", "post-deadline", ON_TIME,
           "results.csv", CLOSED)
    commit(repo, "Dell v2 leaves Server out")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1, done.stdout
    [dropped] = [f for f in doc_of(done)["findings"] if f["code"] == "result-dropped"]
    assert (dropped["file"], dropped["place"]) == (f"submissions/{CLOSED}/Dell/v2/manifest.yaml", "key withdraws")
    assert f"{DELL_SYSTEM} llama2-70b-99 Server" in dropped["expected"]
    assert "v1's result" in dropped["message"] and "deviated by -5.27%" in dropped["message"]


def test_the_same_version_with_its_withdrawal_passes(repo):
    _late_verified_v1(repo)
    submit(repo, csv_text("Dell", {"Offline": "108000"}, DELL_SYSTEM), "Dell", "post-deadline", ON_TIME,
           "results.csv", CLOSED, "--withdraw", f"{DELL_SYSTEM}:llama2-70b-99:Server:rerun pending")
    commit(repo, "Dell v2 withdraws Server")
    done = gate(repo, "--format", "json")
    assert done.returncode == 0, done.stdout
    [w] = doc_of(done)["summary"]["withdrawals"]
    assert (w["version"], w["supersedes"], w["text"]) == (f"{CLOSED}/Dell/v2", 1,
                                                          "withdraws 1 result; 1 deviated by -5.27%")
