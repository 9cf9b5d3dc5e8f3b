"""Crosscheck: every result a submission declares verified, looked up in the
table MLCommons published for its round (a verified result is one MLCommons
reviewed, so it must be there, with the same value). A row is looked up by
(round, submitter, system, model, scenario), narrowed by its result id and
used model when it states them: ``matches`` within ``tolerance_pct`` (default
0), ``differs`` (a ``published-value-differs`` finding, with the deviation
against the published value), or ``not-published`` (a finding). Post-deadline
rows and rounds without a published table are counted, not looked up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.core.findings import Finding, Report, located
from pipeline.core.formulas import deviation_pct, within
from pipeline.core.model import VERIFIED, Source, typed_rows
from pipeline.core.rules import Rules
from pipeline.core.vocabulary import CrosscheckVerdict, tally

KEY = ("round", "submitter", "system", "model", "scenario")
if TYPE_CHECKING:
    import pandas as pd

MATCHES, DIFFERS, NOT_PUBLISHED = VERDICTS = tuple(CrosscheckVerdict)
COLUMNS = ("round", "submitter", "system", "model", "scenario", "division", "units", "value",
           "result_id", "source", "file", "line", "published_value", "published_result_id", "published_source",
           "deviation_pct", "tolerance_pct", "verdict", "reason")


def load_published(rules: Rules, paths: Iterable[Path], round_: str | None = None
                   ) -> tuple[dict[str, pd.DataFrame], list[Finding]]:
    """Published tables (any format the readers know, read by ingest; verified by
    definition, of the round they state unless ``round_`` says it) as canonical
    frames, one per round, and the findings of the reading."""
    import pandas as pd

    from pipeline.ingest.submissions import ingest

    tables: dict[str, list[pd.DataFrame]] = {}
    found: list[Finding] = []
    for path in paths:
        report = ingest(rules, [Path(path)], round_=round_, status=VERIFIED, published=True)
        found.extend(report.findings)
        for stated, frame in report.table.groupby("round", sort=True):   # never rebinds round_
            tables.setdefault(str(stated), []).append(frame)
    return {r: pd.concat(frames, ignore_index=True) for r, frames in sorted(tables.items())}, found


def _text(value) -> str | None:
    return None if value is None else str(value)   # records() made every missing value None


def check(table: pd.DataFrame | list[dict], published: Mapping[str, pd.DataFrame],
          tolerance_pct: float = 0.0) -> Report:
    """Look up every verified row of ``table`` (a canonical frame, or its
    :func:`records`, built once when several published tables are checked
    against it) in ``published`` (round -> canonical frame, as
    :func:`load_published` gives). The rows are the crosscheck verdicts, the
    findings the ``differs`` and ``not-published`` rows."""
    rows = table if isinstance(table, list) else records(table)
    index: dict[tuple, list[dict]] = {}
    for frame in published.values():
        for rec in records(frame):
            index.setdefault(tuple(rec[k] for k in KEY), []).append(rec)
    verified = [r for r in rows if r["status"] == VERIFIED]
    checked = [r for r in verified if str(r["round"]) in published]
    judged = [_verdict(rec, index.get(tuple(rec[k] for k in KEY), []), tolerance_pct) for rec in checked]
    looked_up = typed_rows("CrosscheckRow", ({k: row.get(k) for k in COLUMNS} for row, _ in judged))
    return Report(looked_up, [f for _, found in judged for f in found], {
        "tolerance_pct": tolerance_pct, "published_rounds": sorted(published), "checked": len(looked_up),
        **tally([r["verdict"] for r in looked_up], VERDICTS),
        "not_checked_post_deadline": sum(1 for r in rows if r["status"] != VERIFIED),
        "not_checked_no_published_table": len(verified) - len(checked)})


def records(frame: pd.DataFrame) -> list[dict]:
    """A canonical frame's rows as plain values (None for a missing one)."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def _narrow(rec: dict, candidates: list[dict]) -> list[dict]:
    """The published results that can be this row: same result id and used
    model when the row states them (a published id names a system entry, so
    several results may share it)."""
    for key in ("result_id", "used_model"):
        mine = _text(rec.get(key))
        if mine is None or (key == "used_model" and mine == rec["model"]):
            continue   # not stated (the used model defaults to the benchmark)
        candidates = [c for c in candidates if _text(c.get(key)) == mine]
    return candidates


def _verdict(rec: dict, candidates: list[dict], tolerance_pct: float) -> tuple[dict, list[Finding]]:
    row = {k: rec.get(k) for k in COLUMNS if k in rec}
    row.update(published_value=None, published_result_id=None, published_source=None,
               deviation_pct=None, tolerance_pct=tolerance_pct)
    where = Source.of_row(rec).at(column="value")
    what = f"{rec['submitter']} {rec['system']} {rec['model']} {rec['scenario']}"
    pool = _narrow(rec, candidates)
    if not pool:
        narrowed = " with this result id / used model" if candidates else ""
        row.update(verdict=NOT_PUBLISHED,
                   reason=f"the {rec['round']} published table has no result{narrowed} for "
                          "this submitter, system, model and scenario")
        return row, [located("not-published", where, f"a result in the published {rec['round']} table",
                             f"no published result for {what}",
                             f"{what} is declared verified but MLCommons published no such result")]
    best = min(pool, key=lambda c: (abs(deviation_pct(rec["value"], c["value"])), str(c["file"]), c["line"] or 0))
    dev = deviation_pct(rec["value"], best["value"])
    row.update(published_value=best["value"], published_result_id=best.get("result_id"),
               published_source=best.get("source"), deviation_pct=round(dev, 6))
    if within(dev, tolerance_pct):
        row.update(verdict=MATCHES, reason="")
        return row, []
    row.update(verdict=DIFFERS,
               reason=f"published {best['value']:g} ({best.get('result_id') or best.get('source')}); "
                      f"deviation {dev:+.4f}% outside ±{tolerance_pct:g}%")
    return row, [located("published-value-differs", where,
                         f"{best['value']:g} as published ({best.get('result_id') or best.get('source')})"
                         f", within ±{tolerance_pct:g}%",
                         f"{rec['value']:g} ({dev:+.4f}%)",
                         f"{what} differs from the value MLCommons published")]
