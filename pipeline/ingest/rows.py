"""The small-table path: ingest and compare a few hundred results as plain
rows (dicts), with no table library (no pandas, pandera, pyarrow or polars).

The gate takes this path. It shares everything that decides an outcome with
the columnar path (:mod:`pipeline.ingest.submissions`, :mod:`pipeline.analyses.compare`): the walk
of versions and files (:mod:`pipeline.ingest.walk`), the readers (their row-by-row
form, :func:`pipeline.readers.tabular.rows_only`), ``normalize.build_row``,
the table's schema (:mod:`pipeline.ingest.rowschema` reads the same YAML), the
reference decision and the formulas (:mod:`pipeline.analyses.reference`). So its rows,
findings and dispositions are the columnar path's (a test runs the gate both
ways and compares the reports).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from pipeline.store import clock
from pipeline.analyses import reference
from pipeline.ingest import rowschema, walk
from pipeline.core.findings import Finding, finding
from pipeline.core.model import Source
from pipeline.ingest.normalise import Context, build_row, exclusion
from pipeline.readers.base import Disposition
from pipeline.readers.tabular import rows_only

# One result per key: a verified and a post-deadline result of the same system may coexist;
# the result id and the model used (when the source gives them) tell apart distinct
# published results of one system (v5.1 AMD 5.1-0100 "finetuned" and 5.1-0101 "pruned").
KEY = ("round", "submitter", "system", "model", "scenario", "division", "status", "result_id",
       "used_model")


# ---- records to rows (the bulk path's row-by-row half) -----------------------------------------

def normalise_records(records, ctx: Context) -> tuple[list[dict], list[Finding], list[Disposition]]:
    """Records one by one: (accepted rows, findings, dispositions)."""
    rows, found, dispositions = [], [], []
    for record in records:
        source = f"{record.file}:{record.line}"
        reason = exclusion(record)
        if reason:
            dispositions.append(Disposition(source, "excluded", "", reason))
            continue
        row, problems = build_row(record, ctx)
        found.extend(problems)
        if row is None:
            dispositions.append(rejected(source, problems))
        else:
            rows.append(row)
    return rows, found, dispositions


def rejected(source: str, found: list[Finding]) -> Disposition:
    return Disposition(source, "rejected", ",".join(dict.fromkeys(f.code for f in found)),
                       "; ".join(f.message for f in found))


def merge_warnings(found: list[Finding]) -> list[Finding]:
    """One warning per file, code, field and value: an unregistered name or a
    count that disagrees is said once (at its first row, with how many rows
    share it), not once per row. Errors are kept as they are."""
    groups: dict[tuple, list[int]] = {}
    for i, f in enumerate(found):
        if f.severity == "warning":
            groups.setdefault((f.code, f.file, f.where.column or f.where.key, f.expected, f.found),
                              []).append(i)
    drop = set()
    merged = {}
    for members in groups.values():
        if len(members) > 1:
            first = found[members[0]]
            merged[members[0]] = replace(first, message=f"{first.message} (and {len(members) - 1} more "
                                                        f"row{'s' if len(members) > 2 else ''})")
            drop.update(members[1:])
    return [merged.get(i, f) for i, f in enumerate(found) if i not in drop]


def normalise_result(result, ctx: Context) -> tuple[list[dict], list[Finding], list[Disposition]]:
    """A reader's whole output, every table row by row (what the bulk path
    gives for tables of fewer than its threshold, and the same rows above it)."""
    if getattr(result, "authoritative_names", False) and not ctx.authoritative_names:
        ctx = replace(ctx, authoritative_names=True)
    records = list(result.records)
    for table in result.tables:
        records.extend(table.record(i) for i in range(len(table)))
    rows, found, dispositions = normalise_records(records, ctx)
    return rows, merge_warnings(list(result.findings) + found), list(result.dispositions) + dispositions


# ---- ingest as rows ----------------------------------------------------------------------------

@dataclass
class RowsReport:
    """What :func:`pipeline.ingest.submissions.ingest` reports, with the table as rows."""

    rows: list[dict] = field(default_factory=list)
    dispositions: list[Disposition] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    versions: list[dict] = field(default_factory=list)

    normalise = staticmethod(normalise_result)


def ingest(paths: list[Path], fmt: str | None = None, round_: str | None = None,
           status: str | None = None, root: Path | None = None,
           visible: clock.Clock | None = None) -> RowsReport:
    """:func:`pipeline.ingest.submissions.ingest`, as rows."""
    report = RowsReport()
    with rows_only():
        parts = walk.collect(paths, report, fmt, round_, status, root, visible)
    rows = reject_duplicates([r for part in parts for r in part], report)
    columns = rowschema.spec()
    if columns is None:    # a schema check the row validator does not know: pandera decides
        accepted, bad, found = _by_pandera(rows)
    else:
        accepted, bad, found = rowschema.validate(rows, columns)
    report.findings.extend(found)
    report.dispositions.extend(schema_dispositions([r["source"] for r in bad], found))
    report.rows = accepted
    return report


def _by_pandera(rows: list[dict]):
    from pipeline.ingest import table
    from pipeline.core.model import plain

    accepted, bad, found = table.validate(table.to_frame(rows))
    return plain(accepted.to_dict("records")), plain(bad.to_dict("records")), found


def schema_dispositions(sources, found: list[Finding]) -> list[Disposition]:
    """One rejection per row the schema refused, naming the places that failed."""
    out = []
    for src in sources:
        where = Source.from_cell(src)
        codes = [f for f in found if f.file == where.file and f.line == where.line]
        out.append(Disposition(str(src), "rejected", "schema-violation",
                               "; ".join(sorted({f.place for f in codes}))))
    return out


def reject_duplicates(rows: list[dict], report) -> list[dict]:
    """Rows that share a key are all rejected: nothing says which one is the result."""
    groups: dict[tuple, list[str]] = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in KEY), []).append(r["source"])
    shared = [sources for sources in groups.values() if len(sources) > 1]
    for sources in shared:
        duplicates(sources, report)
    if not shared:
        return rows
    return [r for r in rows if len(groups[tuple(r[k] for k in KEY)]) == 1]


def duplicates(sources: list[str], report) -> None:
    """The duplicate-row finding and rejection of each row of one shared key."""
    for source in sources:
        where = Source.from_cell(source)
        others = ", ".join(o for o in sources if o != source)
        f = finding("duplicate-row", where.file, where.place,
                    "one row per system, model, scenario and status",
                    f"the same result also at {others}",
                    "duplicate result: none of the rows sharing it is taken")
        report.findings.append(f)
        report.dispositions.append(Disposition(source, "rejected", f.code, f.message))


# ---- compare as rows ---------------------------------------------------------------------------

def compare(rows: list[dict], tolerance_pct: float, reference_submitter: str,
            reference_vendor: str) -> list[dict]:
    """:func:`pipeline.analyses.compare.compare`'s agreement rows (its ``rows``), from plain rows."""
    def capped(r: dict) -> bool:
        return reference.power_capped_name(r["system"]) or reference.power_capped_name(r.get("system_name"))

    refs = [{**{k: r.get(k) for k in reference.REF_FIELDS if k != "capped"}, "capped": capped(r)}
            for r in rows if r["submitter"] == reference_submitter]
    by_key = reference.reference_index(refs)
    decided: dict[tuple, dict] = {}
    out = []
    for r in rows:
        if r["submitter"] == reference_submitter:
            continue
        r = {**r, "capped": capped(r)}
        r.setdefault("accelerator_variant", r["accelerator"])
        key = tuple(r[k] for k in reference.DECISION)
        if key not in decided:
            decided[key] = reference.decision(dict(zip(reference.DECISION, key)),
                                              by_key.get(tuple(r[m] for m in reference.MATCH), []),
                                              reference_vendor, reference_submitter)
        d = decided[key]
        row = {k: r.get(k) for k in reference.PARTNER_COLUMNS}
        row.update(d, reference_submitter=reference_submitter, tolerance_pct=tolerance_pct,
                   partner_status=r["status"], **reference.judge(r["value"], d, tolerance_pct))
        out.append({k: row[k] for k in reference.COLUMNS})
    return out
