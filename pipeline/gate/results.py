"""The gate's files, rows and comparison, on the pipeline's one path: ingest
reads the gated versions' context (the canonical table) and compare compares
it (the agreement table); the gated versions are judged from those two tables.

Ingest and the store name a version's files relative to the submissions root
the gate reads (its full path, or a dry run's copy); the gate names that root
as the user gave it (``shown``) in every location.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from pipeline.analyses import compare as compare_mod, crosscheck
from pipeline.analyses.reference import deviation_finding
from pipeline.core.findings import Finding, located
from pipeline.core.model import (ACCEPTED, DEVIATES, EXCLUDED, NO_REFERENCE, REFERENCE, REJECTED, SET_ASIDE,
                                 VERIFIED, Source, label, plain, result_key, typed_rows)
from pipeline.core.vocabulary import Severity
from pipeline.gate import withdrawals
from pipeline.gate.policy import Policy, unverifiable
from pipeline.ingest.submissions import ingest
from pipeline.store import clock
from pipeline.store.manifests import MANIFEST, read_declared
from pipeline.store.versions import Version

RESULT_KEYS = ("submitter", "system", "model", "scenario", "value", "units", "status")
VERDICT_KEYS = ("verdict", "deviation_pct", "tolerance_pct", "reference_value", "reference_system",
                "reference_source", "label", "reason", "differences")


def check(report, root: Path, shown: str | None, pol: Policy, now, committed: clock.Clock | None = None) -> None:
    """Ingest the context (:func:`context_paths`) of the gated versions under ROOT,
    then judge their files and rows under POL. A gated version became visible now
    (the gate's clock); the context, when the base's visibility record says
    (COMMITTED; default: the record of the repository holding ROOT, if any)."""
    gated = report.versions
    names = {g.display for g in gated}
    committed = committed or clock.project_clock(pol.rules, root) or (lambda version: None)
    visible = lambda v: clock.Visible(now, "the gate's clock") if v.display in names else committed(v)  # noqa: E731
    full = ingest(pol.rules, context_paths(root, gated, pol.reference_submitter), root=root, visible=visible)
    used = {v["path"] for v in full.versions if v["used"]}
    table, found, dispositions = full.table, list(full.findings), list(full.dispositions)
    for g in (g for g in gated if g.display not in used):   # superseded or unsealed: read it as named
        extra = ingest(pol.rules, [root / g.display], root=root, visible=visible)
        found = [f for f in found if not g.holds(f.where.file)] + extra.findings
        dispositions = [d for d in dispositions if not g.holds(d.where.file)] + extra.dispositions
        table = _swap(table, extra.table, g, gated)
    mine = lambda file: any(g.holds(file) for g in gated)  # noqa: E731
    report.findings.extend(_named(dict.fromkeys(f for f in found if mine(f.where.file)), shown))
    report.findings.extend(_reference_unverifiable(found, gated, pol.reference_submitter, mine, shown))
    agreement = _compare(table, pol)
    own = table[_rows_of(table, gated)]
    rows = _result_rows(own, agreement, shown) + [_disposed_row(d, shown) for d in dispositions if mine(d.where.file)]
    report.rows = typed_rows("GateRow", sorted(rows, key=lambda r: (r["file"], r["line"] or 0)))
    report.findings.extend(_deviations(agreement, mine, shown))
    report.findings.extend(_crosscheck(own, gated, pol, shown))
    report.findings.extend(_empty(gated, report, root, shown))
    _withdrawals(report, root, shown, table, pol, visible, now)
    report.files = sorted(Source(f"{g.display}/{p.relative_to(root / g.display).as_posix()}", root=shown).path
                          for g in gated for p in (root / g.display).rglob("*") if p.is_file())


def _named(found, shown: str | None) -> list[Finding]:
    """Findings named under the root as the user named it (not the root read)."""
    return [replace(f, where=f.where.at(root=shown)) for f in found]


def _compare(table: pd.DataFrame, pol: Policy) -> pd.DataFrame:
    return compare_mod.compare(pol.rules, table, pol.tolerance_pct, pol.reference_submitter, pol.reference_vendor).table


def _rows_of(table: pd.DataFrame, gated: list[Version]) -> pd.Series:
    """Which rows of a canonical table come from the gated versions."""
    return table["file"].str.startswith(tuple(f"{g.display}/" for g in gated))


def _records(frame: pd.DataFrame) -> list[dict]:
    return [plain(r) for r in frame.to_dict("records")]


def context_folders(gated: list[Version], reference_submitter: str) -> list[str]:
    """What a gated version is judged against, as folders relative to the
    submissions root: its own submitter folder and the reference submitter's
    in the same round; for a new reference version, the whole round (every
    partner it may move out of tolerance). Other rounds and partners cannot
    change a verdict, so they are not read."""
    rounds = {g.round for g in gated if g.submitter == reference_submitter}
    folders = {f"{g.round}/{s}" for g in gated if g.round not in rounds
               for s in (g.submitter, reference_submitter)}
    return sorted(rounds) + sorted(folders)


def context_paths(root: Path, gated: list[Version], reference_submitter: str) -> list[Path]:
    """The :func:`context_folders` that ROOT holds (ROOT itself when none)."""
    return [root / f for f in context_folders(gated, reference_submitter) if (root / f).is_dir()] or [root]


def _swap(table: pd.DataFrame, extra: pd.DataFrame, g: Version, gated: list[Version]) -> pd.DataFrame:
    """The context rows with a named version's rows in place of its submitter's
    other rows of the same round and status (rows of gated versions stay)."""
    if extra.empty:
        return table
    same = ((table["round"] == g.round) & (table["submitter"] == g.submitter)
            & table["status"].isin(set(extra["status"])) & ~_rows_of(table, gated))
    return pd.concat([table[~same], extra], ignore_index=True)


def _result_rows(own: pd.DataFrame, agreement: pd.DataFrame, shown: str | None) -> list[dict]:
    """One row per accepted result of a gated version, with its verdict (a
    result of the reference submitter is the reference)."""
    verdicts = {result_key(r): r for r in _records(agreement[agreement["file"].isin(own["file"])])}
    out = []
    for row in _records(own):
        out_row = _row(Source.of_row(row, shown), ACCEPTED, "")
        out_row.update({k: row.get(k) for k in RESULT_KEYS})
        compared = verdicts.get(result_key(row))
        if compared is None:
            out_row.update({k: None for k in VERDICT_KEYS}, verdict=REFERENCE, label=label(row["status"]),
                           reason="a result of the reference submitter")
        else:
            out_row.update({k: compared.get(k) for k in VERDICT_KEYS})
            if compared["reference_file"]:   # the reference's place, under the root as the user named it
                out_row["reference_source"] = str(Source.of_row(compared, shown, prefix="reference_"))
        out.append(out_row)
    return out


def _disposed_row(d, shown: str | None) -> dict:
    return _row(d.where.under(shown), d.outcome, d.codes) | {k: None for k in RESULT_KEYS + VERDICT_KEYS} | {
        "reason": d.reason}


def _row(where: Source, outcome: str, codes: str) -> dict:
    """A gate row's place and outcome: its version, file and line."""
    version, _ = Version.parse(where.file)
    return {"version": version.display if version else "/".join(where.file.split("/")[:3]), "file": where.path,
            "line": where.line, "outcome": outcome, "codes": codes}


def _deviations(agreement: pd.DataFrame, mine, shown: str | None) -> list[Finding]:
    """Errors for gated partner results out of tolerance; warnings for other
    partners' results that a gated reference version moves out of tolerance."""
    return [deviation_finding(r, shown, mine(r["file"])) for r in _records(agreement[agreement["verdict"] == DEVIATES])
            if mine(r["file"]) or mine(r["reference_file"] or "")]


def _crosscheck(own: pd.DataFrame, gated: list[Version], pol: Policy, shown: str | None) -> list[Finding]:
    """A gated result declared verified must be the one MLCommons published for its
    round in the base's published/ tables (published-value-differs, not-published);
    a round with no table is not checked, and with no verified row none is read. A
    table that does not read whole is reference-broken, named from the repository root."""
    if pol.published is None or not (own["status"] == VERIFIED).any():
        return []
    published: dict[str, pd.DataFrame] = {}
    scratch = pol.published.parent.as_posix() + "/"   # a published row is named from the repository root
    broken: list[Finding] = []
    for round_ in sorted({g.round for g in gated}):
        folder = pol.published / round_        # published/<round>/: that round's tables
        paths = sorted(p for p in folder.glob("*") if p.is_file() and p.suffix in (".csv", ".json"))
        tables, found = crosscheck.load_published(pol.rules, paths, round_) if paths else ({}, [])
        broken += [_unverified_table(f, scratch) for f in found if f.severity == Severity.ERROR]
        published.update({r: t.assign(source=t["source"].str.removeprefix(scratch)) for r, t in tables.items()})
    if broken:                         # a table that does not verify cannot clear or fail a result
        return list({f.file: f for f in broken}.values())
    if not published:
        return []
    return _named(crosscheck.check(own, published).findings, shown)


def _unverified_table(f: Finding, scratch: str) -> Finding:
    where = Source(f.where.path.removeprefix(scratch), line=f.where.line)
    return unverifiable(where, "the published table reads whole", f"{f.code}: {f.message}")


def _reference_unverifiable(found: list[Finding], gated: list[Version], reference: str, mine,
                            shown: str | None) -> list[Finding]:
    """One ``reference-broken`` per file of the reference submitter, in
    a round of a gated partner version, that fails a check of this run (a
    hash, a manifest, a row): the partner's verdicts depend on it, so it can
    neither be dropped nor turn them into no-reference."""
    rounds = tuple(f"{g.round}/{reference}/" for g in gated if g.submitter != reference)
    out: dict[str, Finding] = {}
    for f in found:
        file = f.where.file
        if f.severity == Severity.ERROR and rounds and file.startswith(rounds) and not mine(file) and file not in out:
            out[file] = unverifiable(f.where.at(root=shown), "the reference's files verify as sealed",
                                     f"{f.code}: {f.message}")
    return list(out.values())


def not_compared(rows: list[dict], reference_submitter: str) -> list[dict]:
    """Every result of a gated partner version that was not compared
    (no-reference, excluded, rejected), with why."""
    return [{"file": r["file"], "line": r["line"], "version": r["version"],
             "outcome": r.get("verdict") if r.get("verdict") in (NO_REFERENCE, EXCLUDED) else r["outcome"],
             "reason": r.get("reason") or ""}
            for r in rows if getattr(Version.parse(r["version"])[0], "submitter", None) != reference_submitter
            and (r.get("verdict") in (NO_REFERENCE, EXCLUDED) or r["outcome"] in (REJECTED, SET_ASIDE))]


def _empty(gated: list[Version], report, root: Path, shown: str | None) -> list[Finding]:
    """An error for a gated version that holds no result at all (a sealed file
    with a header and no row) and fails nothing else: it must not pass."""
    empty = [g for g in gated if not any(r["version"] == g.display for r in report.rows) and not any(
        f.severity == Severity.ERROR and g.holds(f.where.file) for f in report.findings)]
    return [located("format-mismatch", Source(f"{g.display}/{MANIFEST}", key="files",
                                              line=read_declared(root / g.display)[1].get("files"), root=shown),
                    "at least one result row in the version's files", "no result", "the version holds no result")
            for g in empty]


def _withdrawals(report, root: Path, shown: str | None, table: pd.DataFrame, pol: Policy, visible,
                 now) -> None:
    """result-dropped findings and the withdrawal summary of each gated version."""
    unread = {r["version"] for r in report.rows if r["outcome"] != ACCEPTED} | {
        g.display for g in report.versions for f in report.findings
        if f.severity == Severity.ERROR and g.holds(f.where.file) and f.code != "deviates-from-reference"}
    for g in report.versions:
        if g.display in unread:         # what it drops is unknown until its rows read: fix those first
            continue
        pair = withdrawals.predecessor(pol.rules, root, g, visible, now)
        if pair is None:
            continue
        prev, version = pair
        old = ingest(pol.rules, [prev.path], root=root, visible=visible).table
        refs = table[table["submitter"] == pol.reference_submitter]
        both = old if g.submitter == pol.reference_submitter else pd.concat([refs, old], ignore_index=True)
        verdicts = {result_key(r): r for r in _records(_compare(both, pol))}
        found, summary = withdrawals.check(pol.rules, g, version, prev.number, _records(table[_rows_of(table, [g])]),
                                           _records(old), verdicts, shown)
        report.findings.extend(found)
        report.withdrawals.append(summary)
