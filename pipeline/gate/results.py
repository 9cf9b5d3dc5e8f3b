"""The gate's files, rows and comparison: ingest the context of the gated
versions, then judge their files and rows under the active policy.

Rows are plain dicts made from the canonical table that ingest checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from pipeline.store import clock
from pipeline.gate import policy as policy_mod, withdrawals
from pipeline.core.findings import Finding, finding
from pipeline.core.model import Source, plain, typed_rows
from pipeline.store.manifests import MANIFEST
from pipeline.gate.versioning import Gated

@dataclass
class IngestedRows:
    """An ingest's report with its table as plain rows."""

    rows: list[dict]
    dispositions: list
    findings: list[Finding]
    versions: list[dict]


class Engine:
    """The gate's one path: ingest (pandera's table check) and compare, as the pipeline runs them."""

    @staticmethod
    def ingest(paths: list[Path], **options):
        from pipeline.ingest import submissions as ingest_mod

        done = ingest_mod.ingest(paths, **options)
        return IngestedRows(plain(done.table.to_dict("records")), done.dispositions, done.findings,
                            done.versions)

    @staticmethod
    def compare(rows: list[dict], pol: policy_mod.Policy) -> list[dict]:
        from pipeline.analyses import compare as compare_mod
        from pipeline.ingest import table

        return compare_mod.compare(table.to_frame(rows), pol.tolerance_pct, pol.reference_submitter,
                                   pol.reference_vendor).rows


def relocate(f: Finding, prefix: str, root: Path) -> Finding:
    """A finding with a repo-relative file, and a line when it names a manifest key.
    A finding read under a submissions root named by its absolute path is
    named from that root."""
    file = f.where.path
    if f.where.root and Path(file).is_absolute() and Path(file).is_relative_to(root):
        file = Path(file).relative_to(root).as_posix()
    out = replace(f, where=f.where.at(file=prefix + file, root=None))
    if f.file.endswith(MANIFEST) and f.where.key and f.line is None:
        line = _manifest_line(root / f.file, f.where.key)
        if line:
            out = replace(out, where=out.where.at(line=line))
    return out


def _manifest_line(path: Path, key: str) -> int | None:
    """The line of a dotted key (``files.0.sha256``) in a manifest, roughly:
    the n-th line that starts the last named key, n being the last list index."""
    parts = key.split(".")
    names = [p for p in parts if not p.isdigit()]
    index = next((int(p) for p in reversed(parts) if p.isdigit()), 0)
    if not names:
        return None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    pattern = re.compile(rf"^\s*(- )?{re.escape(names[-1])}\s*:")
    hits = [i + 1 for i, text in enumerate(lines) if pattern.match(text)]
    return hits[index] if index < len(hits) else (hits[0] if hits else None)


def check(report, root: Path, prefix: str, pol: policy_mod.Policy, now) -> None:
    """Ingest the context (see :func:`context_paths`), then judge the gated
    versions' files and rows, under the active policy. A gated version became
    visible now (the gate's clock); the context, when it was committed."""
    eng = Engine
    gated = report.versions
    names = {g.display for g in gated}
    committed = clock.git_clock(root) or (lambda version: None)
    visible = lambda v: clock.Visible(now, "the gate's clock") if v.display in names else committed(v)  # noqa: E731
    full = eng.ingest(context_paths(root, gated, pol.reference_submitter), root=root, visible=visible)
    used = {v["path"] for v in full.versions if v["used"]}
    table, found, dispositions = full.rows, list(full.findings), list(full.dispositions)
    for g in (g for g in gated if g.display not in used):   # superseded or unsealed: read it as named
        extra = eng.ingest([root / g.display], root=root, visible=visible)
        found = [f for f in found if not g.holds(f.where.file)] + extra.findings
        dispositions = [d for d in dispositions if not g.holds(d.source)] + extra.dispositions
        table = _swap(table, extra.rows, g, gated)
    mine = lambda text: any(g.holds(text) for g in gated)  # noqa: E731
    report.findings.extend(relocate(f, prefix, root) for f in dict.fromkeys(found) if mine(f.where.file))
    compared = eng.compare(table, pol)
    by_source = {r["source"]: r for r in compared}
    rows = [_result_row(r, by_source.get(r["source"]), prefix) for r in table if mine(r["source"])]
    rows += [_disposed_row(d, prefix) for d in dispositions if mine(d.source)]
    report.rows = typed_rows("GateRow", sorted(rows, key=lambda r: (r["file"], r["line"] or 0)))
    report.findings.extend(_deviations(compared, mine, prefix))
    report.findings.extend(_crosscheck(table, mine, gated, pol, prefix, root, eng))
    report.findings.extend(_empty(gated, report, prefix, root))
    _withdrawals(report, root, prefix, table, pol, visible, eng)
    report.files = sorted(f"{prefix}{g.display}/{p.relative_to(root / g.display).as_posix()}"
                          for g in gated for p in (root / g.display).rglob("*") if p.is_file())


def _crosscheck(table: list[dict], mine, gated: list[Gated], pol: policy_mod.Policy, prefix: str,
                root: Path, eng) -> list[Finding]:
    """A gated result declared verified must be the one MLCommons published for
    its round, in the base's published/ tables (published-value-differs,
    not-published); a round with no published table is not checked. Only
    verified rows are looked up: with none, no published table is read."""
    own = [r for r in table if mine(r["source"])]
    if pol.published is None or not any(r["status"] == "verified" for r in own):
        return []
    from pipeline.analyses import crosscheck

    published: dict[str, list[dict]] = {}
    scratch = pol.published.parent.as_posix() + "/"   # a published row is named from the repository root
    for round_ in sorted({g.round for g in gated}):
        folder = pol.published / round_        # published/<round>/: that round's tables
        by_round: dict[str, list[dict]] = {}
        for path in sorted(p for p in folder.glob("*") if p.is_file() and p.suffix in (".csv", ".json")):
            for r in eng.ingest([path], round_=round_, status="verified").rows:
                by_round.setdefault(str(r["round"]), []).append(
                    {**r, "source": str(r["source"]).removeprefix(scratch)})
        published.update(sorted(by_round.items()))
    if not published:
        return []
    return [relocate(f, prefix, root) for f in crosscheck.check_rows(own, published).findings]


def _withdrawals(report, root: Path, prefix: str, table: list[dict], pol: policy_mod.Policy, visible,
                 eng) -> None:
    """result-dropped findings and the withdrawal summary of each gated version."""
    unread = {r["version"] for r in report.rows if r["outcome"] != "accepted"} | {
        g.display for g in report.versions for f in report.errors
        if f.file.startswith(f"{prefix}{g.display}/") and f.code != "deviates-from-reference"}
    for g in report.versions:
        if g.display in unread:         # what it drops is unknown until its rows read: fix those first
            continue
        pair = withdrawals.predecessor(root, g)
        if pair is None:
            continue
        prev, mine = pair
        old = eng.ingest([prev.path], root=root, visible=visible).rows
        refs = [r for r in table if r["submitter"] == pol.reference_submitter]
        both = old if g.submitter == pol.reference_submitter else refs + old
        verdicts = {r["source"]: r for r in eng.compare(both, pol)}
        new = [r for r in table if g.holds(r["source"])]
        found, summary = withdrawals.check(g, new, old, verdicts, mine.manifest.withdraws, prefix, prev.number)
        report.findings.extend(found)
        report.withdrawals.append(summary)


def context_paths(root: Path, gated: list[Gated], reference_submitter: str) -> list[Path]:
    """What a gated version is judged against: its own submitter folder and the
    reference submitter's in the same round; for a new reference version, the
    whole round (every partner it may move out of tolerance). Other rounds and
    partners cannot change a verdict, so they are not read."""
    rounds = {g.round for g in gated if g.submitter == reference_submitter}
    folders = {(g.round, s) for g in gated if g.round not in rounds
               for s in (g.submitter, reference_submitter)}
    paths = [root / r for r in sorted(rounds) if (root / r).is_dir()]
    paths += [root / r / s for r, s in sorted(folders) if (root / r / s).is_dir()]
    return paths or [root]


def _empty(gated: list[Gated], report, prefix: str, root: Path) -> list[Finding]:
    """An error for a gated version that holds no result at all (a sealed file
    with a header and no row) and fails nothing else: it must not pass."""
    out = []
    for g in gated:
        own = f"{prefix}{g.display}/"
        if any(r["file"].startswith(own) for r in report.rows) or any(
                f.severity == "error" and f.file.startswith(own) for f in report.findings):
            continue
        out.append(relocate(finding("format-mismatch", f"{g.display}/{MANIFEST}", "key files",
                                    "at least one result row in the version's files", "no result",
                                    "the version holds no result"), prefix, root))
    return out


def _swap(table: list[dict], extra: list[dict], g: Gated, gated: list[Gated]) -> list[dict]:
    """The context rows with a named version's rows in place of its submitter's
    other rows of the same round and status (rows of gated versions stay)."""
    if not extra:
        return table
    statuses = {r["status"] for r in extra}

    def same(r: dict) -> bool:
        return (r["round"] == g.round and r["submitter"] == g.submitter and r["status"] in statuses
                and not any(v.holds(r["source"]) for v in gated))
    return [r for r in table if not same(r)] + extra


RESULT_KEYS = ("submitter", "system", "model", "scenario", "value", "units", "status")
VERDICT_KEYS = ("verdict", "deviation_pct", "tolerance_pct", "reference_value", "reference_system",
                "reference_source", "label", "reason")


def _result_row(row: dict, compared: dict | None, prefix: str) -> dict:
    where = Source.from_cell(row["source"])
    out = {"version": "/".join(where.file.split("/")[:3]), "file": prefix + where.file, "line": where.line,
           "outcome": "accepted", "codes": ""}
    out.update({k: plain(row.get(k)) for k in RESULT_KEYS})
    if compared is None:
        out.update({k: None for k in VERDICT_KEYS}, verdict="reference",
                   label="verified" if row["status"] == "verified" else "unverified",
                   reason="a result of the reference submitter")
    else:
        out.update({k: plain(compared.get(k)) for k in VERDICT_KEYS})
        if out["reference_source"]:
            out["reference_source"] = prefix + out["reference_source"]
    return out


def _disposed_row(d, prefix: str) -> dict:
    where = Source.from_cell(d.source)
    out = {"version": "/".join(where.file.split("/")[:3]), "file": prefix + where.file, "line": where.line,
           "outcome": d.outcome, "codes": d.codes}
    out.update({k: None for k in RESULT_KEYS + VERDICT_KEYS}, reason=d.reason)
    return out


def _deviations(compared: list[dict], mine, prefix: str) -> list[Finding]:
    """Errors for gated partner results out of tolerance; warnings for other
    partners' results that a gated reference version moves out of tolerance."""
    from pipeline.analyses.reference import deviation_finding

    out = []
    for r in compared:
        if r["verdict"] != "deviates":
            continue
        own = mine(r["source"])
        if not own and not mine(r["reference_source"] or ""):
            continue
        out.append(deviation_finding(r, prefix, own))
    return out
