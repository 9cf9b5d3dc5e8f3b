"""When a version counts as submitted: a clock no partner writes.

A version's effective submission time is the latest of its declared
``submitted_at`` and the time it became visible: the gate's own clock, or in
``ingest`` the project's **visibility record** (:data:`RECORD`), appended by
the regenerate workflow's trusted job (never a commit's date: after a
fast-forward merge that is the partner's own). Outside git, or for a version
``schemas/attested.yaml`` pins, the declared time counts. An implausible or
late ``verified`` version counts as post-deadline.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import yaml

from pipeline.core.errors import ConfigError
from pipeline.core.rules import Rules, memo
from pipeline.core.findings import Finding, located
from pipeline.core.model import POST_DEADLINE, VERIFIED
from pipeline.store.hashes import sha256_file
from pipeline.store.manifests import MANIFEST

RECORD = "record/visible.yaml"   # repository-relative: the maintainers' file the regenerate workflow appends to
FUTURE_SLACK = timedelta(days=1)


def now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


@dataclass(frozen=True)
class Visible:
    """When a version became visible, and how that is known."""

    at: datetime
    how: str          # "committed <sha>", "not committed yet", "the gate's clock"


Clock = Callable[[object], "Visible | None"]   # Version -> Visible (None: trust the declared time)


@memo()
def attested(rules: Rules) -> dict[str, str]:
    """version display (``v5.1/Dell/v1``) -> the sha256 of the manifest attested."""
    if not (rules.folder / "attested.yaml").is_file():
        return {}
    data = rules.load_yaml("attested.yaml")
    return {str(k): str((v or {}).get("manifest_sha256", "")) for k, v in (data.get("versions") or {}).items()}


def is_attested(rules: Rules, version) -> bool:
    want = attested(rules).get(version.display)
    path = version.path / MANIFEST
    return bool(want) and path.is_file() and not path.is_symlink() and sha256_file(path) == want


def read_record(text: bytes | None, where: str = RECORD) -> dict[str, datetime]:
    """version display -> when it became visible on main (None: no record); a
    record that does not read is a ConfigError: it is the maintainers' file."""
    if text is None:
        return {}
    try:
        data = yaml.safe_load(text.decode("utf-8")) or {}
        entries = data.get("versions") or {}
        return {str(k): _utc(v) for k, v in entries.items()}
    except (yaml.YAMLError, UnicodeDecodeError, AttributeError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: not a visibility record (versions: <round>/<submitter>/v<N>: "
                          f"<ISO-8601 time>): {exc}") from exc


def _utc(value) -> datetime:
    when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if when.tzinfo is None:
        raise ValueError(f"{value}: a time without a timezone")
    return when.astimezone(timezone.utc)


def record_clock(rules: Rules, entries: dict[str, datetime], at: datetime | None = None, where: str = RECORD) -> Clock:
    """When each version became visible by ENTRIES (one they do not hold: AT, default now)."""
    seen = at or now()

    def visible(version) -> Visible | None:
        if is_attested(rules, version):
            return None
        when = entries.get(version.display)
        if when is None:
            return Visible(seen, f"not in {where} yet")
        return Visible(when, f"recorded in {where}")

    return visible


def project_record(start: Path) -> dict[str, datetime] | None:
    """The visibility record of the repository holding START (empty when absent); None outside git."""
    start = start if start.is_dir() else start.parent
    try:
        done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=start,
                              capture_output=True, text=True, check=False)
    except (FileNotFoundError, OSError):
        return None
    if done.returncode:
        return None
    path = Path(done.stdout.strip()) / RECORD
    return read_record(path.read_bytes() if path.is_file() else None)


def project_clock(rules: Rules, start: Path, at: datetime | None = None) -> Clock | None:
    """The clock of :func:`project_record` (None outside git: the declared time counts)."""
    entries = project_record(start)
    return None if entries is None else record_clock(rules, entries, at)


def plausibility(rules: Rules, versions: list, at: datetime) -> dict[str, list[Finding]]:
    """version display -> findings on its declared submitted_at (versions with a manifest)."""
    out: dict[str, list[Finding]] = {}
    previous: dict[tuple[str, str], object] = {}
    for v in sorted((v for v in versions if v.manifest is not None),
                    key=lambda v: (v.round, v.submitter, v.number)):
        m = v.manifest
        where = m.where(v, "submitted_at")
        found = []
        info = rules.rounds().get(m.round)
        if info is not None and info.opens is not None and m.submitted_at < info.opens:
            found.append(located("submitted-before-round-opens", where,
                                 f"at or after {info.opens.isoformat()} (the {m.round} round opens)",
                                 m.submitted_at.isoformat(), "submitted before the round opened"))
        if m.submitted_at > at + FUTURE_SLACK:
            found.append(located("submitted-in-future", where,
                                 f"at most a day after {at.isoformat()} (now)", m.submitted_at.isoformat(),
                                 "submitted_at lies in the future"))
        before = previous.get((v.round, v.submitter))
        if before is not None and m.submitted_at < before.manifest.submitted_at:
            found.append(located("submitted-before-previous", where,
                                 f"at or after {before.manifest.submitted_at.isoformat()} "
                                 f"(v{before.number}'s submitted_at)", m.submitted_at.isoformat(),
                                 "a later version cannot be submitted before the one it follows"))
        previous[(v.round, v.submitter)] = v
        if found:
            out[v.display] = found
    return out


def statuses(rules: Rules, versions: list, visible: Clock, at: datetime) -> dict[str, tuple[str, list[Finding]]]:
    """version display -> (the status its rows count under, the findings that
    decide it): the one rule by which ingest and the gate supersede."""
    implausible = plausibility(rules, versions, at)
    out = {}
    for v in versions:
        if v.manifest is not None:
            status, found = effective_status(rules, v, visible(v), v.display in implausible)
            out[v.display] = (status, implausible.get(v.display, []) + found)
    return out


def predecessor(versions: list, effective: dict[str, tuple[str, list[Finding]]], number: int):
    """The version that version NUMBER supersedes among VERSIONS (one submitter's
    round, oldest first): the newest earlier one with the same effective status."""
    mine = next((v for v in versions if v.number == number), None)
    if mine is None or mine.display not in effective:
        return None
    status = effective[mine.display][0]
    earlier = [v for v in versions if v.number < number and effective.get(v.display, (None,))[0] == status]
    return earlier[-1] if earlier else None


def effective_status(rules: Rules, version, visible: Visible | None, implausible: bool) -> tuple[str, list[Finding]]:
    """Verified only when declared verified, plausible, and in by the deadline at the effective time."""
    m = version.manifest
    info = rules.rounds().get(m.round)
    if m.status != VERIFIED or info is None:
        return m.status, []
    if implausible:
        return POST_DEADLINE, []
    when = m.submitted_at if visible is None else max(m.submitted_at, visible.at)
    if when <= info.submission_deadline:
        return VERIFIED, []
    shown = m.submitted_at.isoformat() if visible is None or visible.at <= m.submitted_at else (
        f"{when.isoformat()} (visible: {visible.how}; declared {m.submitted_at.isoformat()})")
    return POST_DEADLINE, [located(
        "verified-after-deadline", m.where(version, "submitted_at"),
        f"at or before {info.submission_deadline.isoformat()} (the {m.round} deadline)", shown,
        "declared verified after the deadline: its rows go to the post-deadline set; declare it "
        "post-deadline: seal it again with mlrepro submit --status post-deadline (or --status auto)")]
