"""The gate fails a result declared verified that MLCommons did not
publish as declared, reading the published tables of the base (published/ is
policy, like schemas/)."""

from __future__ import annotations

from gitrepo import commit, git
from test_gate import ROUND, base_repo, csv_text, gate, repo, submit  # noqa: F401
from test_gate_bypasses import doc_of

SYSTEM = "PowerEdge_XE9785_8xMI355X"


def publish(repo, values: dict[str, str]) -> None:
    """A maintainer adds the round's published table to main; the PR branches from it."""
    git(repo, "checkout", "-q", "main")
    table = repo / "published" / ROUND / "summary.csv"
    table.parent.mkdir(parents=True)
    table.write_text(csv_text("Dell", values, SYSTEM), encoding="utf-8")
    commit(repo, f"published: the {ROUND} table")
    git(repo, "checkout", "-q", "-b", "pr-published")


def test_a_verified_result_that_differs_from_the_published_one_fails_the_gate(repo):
    publish(repo, {"Server": "99000"})
    submit(repo, csv_text("Dell", {"Server": "99500"}, SYSTEM), "Dell")        # agrees with AMD, not published
    commit(repo, "Dell v2: a better Server figure than MLCommons published")
    done = gate(repo, "--format", "json")
    assert done.returncode == 1
    [f] = [f for f in doc_of(done)["findings"] if f["code"] == "published-value-differs"]
    assert f["file"] == f"submissions/{ROUND}/Dell/v2/results.csv" and f["place"].startswith("line 2")
    assert f["found"].startswith("99500")
    assert f"(published/{ROUND}/summary.csv:2)" in f["expected"]   # named from the repository, never a temporary path


def test_an_invented_verified_result_is_not_published(repo):
    publish(repo, {"Server": "99000"})
    submit(repo, csv_text("Dell", {"Server": "99000", "Offline": "108000"}, SYSTEM), "Dell")
    commit(repo, "Dell v2: adds an Offline result MLCommons never published")
    doc = doc_of(gate(repo, "--format", "json"))
    assert doc["summary"]["verdict"] == "fail"
    assert [(f["code"], f["place"][:6]) for f in doc["findings"] if f["severity"] == "error"] == [
        ("not-published", "line 3")]


def test_the_published_result_itself_passes(repo):
    publish(repo, {"Server": "99000"})
    submit(repo, csv_text("Dell", {"Server": "99000"}, SYSTEM), "Dell")
    commit(repo, "Dell v2: the published figure")
    done = gate(repo, "--format", "json")
    assert done.returncode == 0, done.stdout
