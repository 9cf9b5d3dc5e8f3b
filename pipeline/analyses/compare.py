"""Compare: each partner result against the reference submitter's result for
the same round, accelerator, accelerators per node, nodes, model and scenario.

Verdicts: agree (|deviation| <= tolerance), deviates, no-reference, excluded.

Which rows are partner results: the rows of any other submitter on the
reference *vendor's* accelerators (``vendor`` in schemas/accelerators.yaml, or
the vendor a published part the registry lacks is kept under: ``AMD-MI400X``;
``compare.reference_vendor`` in params.yaml, default AMD). A partner row with
no same-round reference is ``no-reference`` (MI350X when the reference
submitter published none); a row on another vendor's part, on a system that
mixes vendors, or on a part whose vendor nothing says, is ``excluded`` with
that reason (:func:`pipeline.analyses.reference.decide`).

Which reference, when several match: the reference submitter's *best* eligible
result (highest rate, or lowest latency), ties broken by system id. The best
is the score the vendor publishes, so a partner is held to it; the rule and
the candidates are written in every row (`reference_rule`).

Verified partner rows are compared with verified references only; a
post-deadline partner row may use any reference (verified first) and its
agreement row is labelled unverified.

How the systems differ is part of the judgement (:mod:`pipeline.analyses.differences`):
a compared row says how its system differs from its reference's
(``differences``, ``differs_in``); a no-reference row is set beside the
reference submitter's nearest result per accelerator (``context_*``, never a
verdict), or says why there is none (``context_note``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core.findings import TableReport
from pipeline.core.formulas import VERDICT_WITHIN, deviation_pct, rate, rounded_pct, within
from pipeline.core.rules import Rules
from pipeline.core.model import (AGREE, AGREEMENT_VERDICTS, DEFAULT_REFERENCE_SUBMITTER, DEFAULT_REFERENCE_VENDOR,
                                 DEFAULT_TOLERANCE_PCT, DEVIATES, NO_REFERENCE, plain, result_key)
from pipeline.core.vocabulary import tally
from pipeline.analyses import differences as systems
from pipeline.analyses.reference import (COLUMNS, DECISION, MATCH, PARTNER_COLUMNS, REF_FIELDS, decision,
                                         deviation_finding, reference_index)
from pipeline.ingest.resolve import DESCRIPTION


def summary(table: pd.DataFrame, tolerance_pct: float, reference_submitter: str, reference_vendor: str) -> dict:
    """The agreement table's counts, overall and per partner, under the parameters it was judged with."""
    per_partner = {}
    for submitter, group in table.groupby("submitter", sort=True):
        p = tally(group["verdict"], AGREEMENT_VERDICTS)
        compared = p[AGREE] + p[DEVIATES]
        per_partner[str(submitter)] = {"compared": compared, **p, "agreement_rate": rate(p[AGREE], compared)}
    return {"tolerance_pct": tolerance_pct, "reference_submitter": reference_submitter,
            "reference_vendor": reference_vendor, "partner_rows": len(table),
            **tally(table["verdict"], AGREEMENT_VERDICTS), "partners": per_partner}


def _judged(table: pd.DataFrame, tolerance_pct: float, reference_submitter: str, reference_vendor: str,
            text_columns: tuple[str, ...] = ()) -> TableReport:
    """The agreement table, one row per partner result, as a report: one
    ``deviates-from-reference`` error per row out of tolerance."""
    return TableReport(table, "AgreementRow", summary(table, tolerance_pct, reference_submitter, reference_vendor),
                       flag=("verdict", DEVIATES), finding_of=deviation_finding, text_columns=text_columns)


def _power_capped(rules: Rules, frame: pd.DataFrame) -> pd.Series:
    pattern = rules.power_cap_pattern()
    name = frame["system_name"].fillna("") if "system_name" in frame.columns else ""
    return (_contains(frame["system"].astype("str"), pattern)
            | _contains(pd.Series(name, index=frame.index).astype("str"), pattern))


def _contains(column: pd.Series, pattern: str) -> pd.Series:
    """``column.str.contains(pattern)``, matched once per distinct text (a few hundred systems)."""
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    if (codes < 0).any():   # a missing text: as str.contains has it
        return column.str.contains(pattern)
    hits = pd.Series(uniques, dtype=column.dtype).str.contains(pattern).to_numpy(dtype=bool)
    return pd.Series(hits[codes], index=column.index)


def _dicts(frame: pd.DataFrame, columns: tuple[str, ...]) -> list[dict]:
    """Rows as dicts of plain Python values (faster than to_dict on Arrow strings)."""
    arrays = [frame[c].to_numpy(dtype=object) for c in columns]
    return [dict(zip(columns, values)) for values in zip(*arrays)]


def compare(rules: Rules, results: pd.DataFrame, tolerance_pct: float = DEFAULT_TOLERANCE_PCT,
            reference_submitter: str = DEFAULT_REFERENCE_SUBMITTER,
            reference_vendor: str = DEFAULT_REFERENCE_VENDOR) -> TableReport:
    """The reference is decided once per distinct decision key (a handful per
    round); deviations and verdicts are computed as columns."""
    absent = [c for c in DESCRIPTION if c not in results.columns]   # a v2 table: no description
    if absent:
        results = results.assign(**{c: None for c in absent})
    used = set(REF_FIELDS) | set(PARTNER_COLUMNS) | {"system_name"} | set(systems.SETUP)
    results = results[[c for c in results.columns if c in used]]   # no copy of the columns compare never reads
    refs = results[results["submitter"] == reference_submitter]
    ref_rows = _dicts(refs.assign(capped=_power_capped(rules, refs)), tuple(dict.fromkeys(REF_FIELDS + systems.SETUP)))
    by_key = reference_index(ref_rows)
    partners = results[(results["submitter"] != reference_submitter).to_numpy()].reset_index(drop=True)
    partners = partners.assign(capped=_power_capped(rules, partners))
    if partners.empty:
        return _judged(pd.DataFrame(columns=list(COLUMNS)), tolerance_pct, reference_submitter, reference_vendor)
    codes = partners.groupby(list(DECISION), sort=False, dropna=False).ngroup().to_numpy()
    firsts = pd.Series(range(len(codes))).groupby(codes).first().to_numpy()
    keys = _dicts(partners.iloc[firsts], DECISION)
    decisions = pd.DataFrame([decision(rules, k, by_key.get(tuple(k[m] for m in MATCH), []), reference_vendor,
                                       reference_submitter) for k in keys])
    table = partners[list(PARTNER_COLUMNS)]   # copy-on-write: adding columns leaves partners as it is
    texts = []
    for col in decisions.columns:  # categorical: one copy of each decided text, not one per row
        if isinstance(decisions[col].dtype, pd.StringDtype):   # text written as text: see TableReport.frame
            texts.append(col)
        if col == "reference_line":   # a line, or none: a nullable integer, never a float or a text
            table[col] = pd.array(decisions[col].to_numpy(dtype=object), dtype="Int64")[codes]
        elif col != "reference_value" and (decisions[col].dtype == object or col in texts):
            per_key = pd.Categorical(decisions[col].to_numpy(dtype=object))   # categories from the few keys
            table[col] = pd.Categorical.from_codes(per_key.codes[codes], dtype=per_key.dtype)
        else:
            table[col] = decisions[col].to_numpy()[codes]
    table["reference_submitter"] = reference_submitter
    table["tolerance_pct"] = tolerance_pct
    table["partner_status"] = pd.Categorical(partners["status"])   # factorised by Arrow, not per Python string
    # the deviation and the verdict, as columns: the formulas applied to every compared row at once
    compared = table["reference_value"].notna().to_numpy()
    ref_value = table["reference_value"].to_numpy(dtype="float64")
    dev = deviation_pct(table["value"].to_numpy(dtype="float64"), np.where(compared, ref_value, 1.0))
    table["deviation_pct"] = np.where(compared, rounded_pct(dev), np.nan)
    table["verdict"] = pd.Categorical(np.where(
        compared, np.where(within(dev, tolerance_pct), VERDICT_WITHIN[True], VERDICT_WITHIN[False]),
        table["verdict"].to_numpy()))
    explained = _explain(rules, partners, codes, keys, decisions, ref_rows, reference_vendor)
    for col in EXPLAINED:   # as the decided texts: categoricals of the few distinct values, written as text
        if isinstance(explained[col], tuple):
            values, at = explained[col]
            distinct = pd.Categorical(np.array(values, dtype=object))
            table[col] = pd.Categorical.from_codes(distinct.codes[at], dtype=distinct.dtype)
            texts.append(col)
        else:
            table[col] = explained[col]
    return _judged(table[list(COLUMNS)], tolerance_pct, reference_submitter, reference_vendor, tuple(texts))


EXPLAINED = ("differences", "differs_in", "context_system", "context_source", "context_per_accelerator",
             "context_deviation_pct", "context_note")


def _explain(rules: Rules, partners: pd.DataFrame, codes: np.ndarray, keys: list[dict], decisions: pd.DataFrame,
             ref_rows: list[dict], reference_vendor: str) -> dict[str, tuple[list, np.ndarray] | np.ndarray]:
    """How each compared or no-reference row's system differs from its
    reference's (or, with no reference, from the nearest system the reference
    submitter has, with that system's per-accelerator figure as context).
    The other system is decided once per decision key (``keys``, ``codes``),
    the differences once per distinct pair of system descriptions, the
    context's deviation as a column. Returns, per column, its distinct values
    and each row's index into them (a text), or the column (a number)."""
    by_place = {(result_key(r), r["system"]): r for r in ref_rows}   # as the place and system name them
    index = systems.context_index(ref_rows)
    others: dict[tuple, int] = {}      # the other system's description -> its number
    other_rows: list[dict] = []
    other_of, context = [], []         # per decision key
    decided_refs = plain(decisions[["reference_file", "reference_line", "reference_system", "verdict"]]
                         .to_dict("records"))
    for key, decided in zip(keys, decided_refs):
        src = decided["reference_file"]
        other, note = None, ""
        if src is not None:
            other = by_place.get((result_key(decided, "reference_"), decided["reference_system"]))
        elif decided["verdict"] == NO_REFERENCE:
            other, note = systems.nearest(rules, key, index, reference_vendor)
            note = note if other is None else f"context only, not a verdict: {note}"
        found = {"context_note": note, "context_system": None, "context_source": None,
                 "context_per_accelerator": np.nan}
        if other is not None and src is None:
            found.update(context_system=other["system"], context_source=other["source"],
                         context_per_accelerator=systems.per_accelerator(other))
        context.append(found)
        if other is None:
            other_of.append(-1)
            continue
        described = tuple(other[c] for c in systems.SETUP)
        if described not in others:
            others[described] = len(other_rows)
            other_rows.append(other)
        other_of.append(others[described])
    # each row's own description: the host count once per system id, the rest factorised
    # (by Arrow, not per Python string); then the differences once per pair of descriptions
    ids = pd.factorize(partners["system"])[0]
    first_of_id = pd.Series(range(len(ids))).groupby(ids).first().to_numpy()
    counts = np.array([np.nan if n is None else n for n in (systems.host_count(r) for r in _dicts(
        partners.iloc[first_of_id], ("system", "nodes", "host_processors_per_node")))], dtype="float64")
    described = [c for c in systems.SETUP if c not in ("system", "host_processors_per_node")]
    mine = pd.DataFrame({"count": pd.factorize(counts[ids], use_na_sentinel=True)[0],
                         **{c: pd.factorize(partners[c], use_na_sentinel=True)[0] for c in described}})
    own = mine.groupby(list(mine.columns), sort=False).ngroup().to_numpy()
    firsts = pd.Series(range(len(own))).groupby(own).first().to_numpy()
    own_setups = [systems.setup(r, None if np.isnan(n) else int(n)) for r, n in zip(
        _dicts(partners.iloc[firsts], tuple(described)), counts[ids[firsts]])]
    other_setups = [systems.setup(r) for r in other_rows]
    pairs, distinct = pd.factorize(own * (len(other_rows) + 1) + (np.asarray(other_of, dtype=np.int64)[codes] + 1))
    texts = []
    for pair in distinct:
        other = pair % (len(other_rows) + 1) - 1
        found = systems.differences_of(own_setups[pair // (len(other_rows) + 1)], other_setups[other]) \
            if other >= 0 else ()
        # the text (``framework vLLM 0.14 (reference PyTorch 2.9.1); ...``) and the aspects
        texts.append(("; ".join(map(str, found)), ", ".join(f.aspect for f in found)))
    per_key = pd.DataFrame(context)
    ctx = per_key["context_per_accelerator"].to_numpy(dtype="float64")[codes]
    mine_per = partners["value"].to_numpy(dtype="float64") / partners["total_accelerators"].to_numpy(dtype="float64")
    stated = ~np.isnan(ctx)
    dev = deviation_pct(mine_per, np.where(stated, ctx, 1.0))
    return {"differences": ([t[0] for t in texts], pairs), "differs_in": ([t[1] for t in texts], pairs),
            **{c: (per_key[c].tolist(), codes) for c in ("context_system", "context_source", "context_note")},
            "context_per_accelerator": ctx,
            "context_deviation_pct": np.where(stated, rounded_pct(dev), np.nan)}

