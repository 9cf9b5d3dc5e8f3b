"""Supersession, in memory: the status a version's rows count under (its
effective status) and which earlier version a new one supersedes
(pipeline.store.clock). Versions and manifests are built here as values, no
folder, no git, no command: each rule in milliseconds. The journeys through
ingest, the gate and the report are tests/test_store.py (the visibility
record in git), tests/test_gate_supersession.py and tests/test_superseded.py."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import RULES

from pipeline.store import clock
from pipeline.store.manifests import Manifest
from pipeline.store.versions import Version

# schemas/rounds.yaml: v6.0 opens 2025-09-09, its deadline is 2026-02-27T13:00-08:00 (21:00 UTC)
DEADLINE = datetime(2026, 2, 27, 21, 0, tzinfo=timezone.utc)
ON_TIME = datetime(2026, 2, 20, 10, 0, tzinfo=timezone.utc)
LATE = datetime(2026, 3, 20, 10, 0, tzinfo=timezone.utc)
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def version(number: int, status: str = "verified", submitted_at: datetime = ON_TIME,
            round_: str = "v6.0", submitter: str = "Dell") -> Version:
    v = Version.named(round_, submitter, number)
    v.path = Path("/no-such-root") / v.display     # no folder: nothing on disk attests it
    v.manifest = Manifest(submitter, round_, number, submitted_at, status, [],
                          lines={"submitted_at": 4})
    return v


def declared(_version) -> None:
    """A clock that trusts the declared time (outside git, or an attested version)."""
    return None


def seen_at(when: datetime, how: str = "recorded in record/visible.yaml"):
    return lambda _version: clock.Visible(when, how)


def effective(versions: list[Version], visible=declared, at: datetime = NOW) -> dict[str, str]:
    return {name: status for name, (status, _) in clock.statuses(RULES, versions, visible, at).items()}


def codes(versions: list[Version], visible=declared, at: datetime = NOW) -> dict[str, list[str]]:
    return {name: [f.code for f in found] for name, (_, found) in clock.statuses(RULES, versions, visible, at).items()}


# ---- the effective status -----------------------------------------------------------------

def test_declared_verified_on_time_is_verified():
    assert effective([version(1)]) == {"v6.0/Dell/v1": "verified"}
    assert codes([version(1)]) == {"v6.0/Dell/v1": []}


@pytest.mark.parametrize(("submitted_at", "status"), [
    (DEADLINE, "verified"),                       # the deadline itself is in time (inclusive)
    (DEADLINE.replace(second=1), "post-deadline"),
    (LATE, "post-deadline")])
def test_the_deadline_is_inclusive(submitted_at, status):
    assert effective([version(1, submitted_at=submitted_at)]) == {"v6.0/Dell/v1": status}


def test_declared_post_deadline_stays_post_deadline_whenever_it_came():
    assert effective([version(1, "post-deadline", ON_TIME)]) == {"v6.0/Dell/v1": "post-deadline"}
    assert codes([version(1, "post-deadline", LATE)]) == {"v6.0/Dell/v1": []}


def test_visible_after_the_deadline_counts_post_deadline_whatever_it_declares():
    """The effective time is the later of the declared time and the time the
    project saw the version: a back-dated submitted_at does not make it verified."""
    late = seen_at(datetime(2026, 3, 5, tzinfo=timezone.utc))
    [(status, [found])] = clock.statuses(RULES, [version(1)], late, NOW).values()
    assert status == "post-deadline" and found.code == "verified-after-deadline"
    assert found.found == ("2026-03-05T00:00:00+00:00 (visible: recorded in record/visible.yaml; "
                           "declared 2026-02-20T10:00:00+00:00)")
    assert (found.where.path, found.where.line) == ("v6.0/Dell/v1/manifest.yaml", 4)


def test_visible_before_the_deadline_keeps_a_verified_version_verified():
    assert effective([version(1)], seen_at(datetime(2026, 2, 21, tzinfo=timezone.utc))) == {"v6.0/Dell/v1": "verified"}


def test_the_visibility_record_dates_each_version_and_an_unrecorded_one_becomes_visible_now():
    entries = clock.read_record(b"versions:\n  v6.0/Dell/v1: '2026-02-21T00:00:00Z'\n")
    visible = clock.record_clock(RULES, entries, at=NOW)
    assert effective([version(1), version(2)], visible) == {"v6.0/Dell/v1": "verified",
                                                            "v6.0/Dell/v2": "post-deadline"}
    [late] = clock.statuses(RULES, [version(2)], visible, NOW)["v6.0/Dell/v2"][1]
    assert "not in record/visible.yaml yet" in late.found
    # a repository without the record: every version becomes visible now
    assert effective([version(1)], clock.record_clock(RULES, clock.read_record(None), at=NOW)) == {
        "v6.0/Dell/v1": "post-deadline"}


@pytest.mark.parametrize(("submitted_at", "code"), [
    (datetime(2025, 9, 1, tzinfo=timezone.utc), "submitted-before-round-opens"),
    (datetime(2026, 6, 3, tzinfo=timezone.utc), "submitted-in-future")])
def test_an_implausible_declared_time_counts_post_deadline(submitted_at, code):
    assert effective([version(1, submitted_at=submitted_at)]) == {"v6.0/Dell/v1": "post-deadline"}
    assert codes([version(1, submitted_at=submitted_at)]) == {"v6.0/Dell/v1": [code]}


def test_a_day_ahead_of_the_clock_is_still_plausible():
    at = datetime(2026, 2, 20, tzinfo=timezone.utc)
    assert codes([version(1, submitted_at=at.replace(hour=23))], at=at) == {"v6.0/Dell/v1": []}


def test_a_version_submitted_before_the_one_it_follows_is_implausible():
    versions = [version(1, submitted_at=ON_TIME), version(2, submitted_at=ON_TIME.replace(day=19))]
    assert effective(versions) == {"v6.0/Dell/v1": "verified", "v6.0/Dell/v2": "post-deadline"}
    assert codes(versions)["v6.0/Dell/v2"] == ["submitted-before-previous"]


def test_a_round_the_rules_do_not_know_keeps_the_declared_status():
    assert effective([version(1, round_="v9.7")]) == {"v9.7/Dell/v1": "verified"}


def test_a_version_without_a_manifest_has_no_status():
    bare = Version.named("v6.0", "Dell", 1)
    assert clock.statuses(RULES, [bare], declared, NOW) == {}


# ---- which version a new one supersedes -------------------------------------------------------

def supersedes(versions: list[Version], number: int, visible=declared) -> str | None:
    found = clock.predecessor(versions, clock.statuses(RULES, versions, visible, NOW), number)
    return None if found is None else found.display


def test_a_new_version_supersedes_the_newest_earlier_one_of_its_status():
    versions = [version(1), version(2, "post-deadline"), version(3)]
    assert supersedes(versions, 3) == "v6.0/Dell/v1"
    assert supersedes(versions, 2) is None
    assert supersedes(versions + [version(4, "post-deadline", LATE)], 4) == "v6.0/Dell/v2"


def test_supersession_follows_the_effective_status_not_the_declared_one():
    """v1 declared verified but seen after the deadline counts post-deadline:
    a post-deadline v2 supersedes it, a verified v2 does not."""
    late_v1 = lambda v: clock.Visible(LATE, "recorded") if v.number == 1 else None  # noqa: E731
    assert supersedes([version(1), version(2, "post-deadline")], 2, late_v1) == "v6.0/Dell/v1"
    assert supersedes([version(1), version(2)], 2, late_v1) is None


def test_the_first_version_and_an_unknown_number_supersede_nothing():
    assert supersedes([version(1)], 1) is None
    assert supersedes([version(1)], 5) is None
