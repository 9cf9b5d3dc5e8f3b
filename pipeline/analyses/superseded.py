"""The verdicts of superseded versions, kept apart from the current ones: no
move of a partner may take one of its results out of the auditor's view.
Each superseded version (``data/versions.csv``: ``used`` false) is read as
ingest reads a version named explicitly, and its rows judged by compare
against today's references. Each row says which version superseded it and
its fate there (:class:`~pipeline.core.vocabulary.SupersededFate`): withdrawn
(the manifest's reason), replaced (the same system, model, scenario and
division), or left out. The current verdicts never change here.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.core.findings import Finding, TableReport
from pipeline.core.model import DEVIATES, RESULT_KEY
from pipeline.core.rules import Rules
from pipeline.core.vocabulary import SupersededFate, tally
from pipeline.store.manifests import load_manifest, withdrawal_for
from pipeline.store.versions import version_at

KEY = ("system", "model", "scenario", "division")
WITHDRAWN, REPLACED, LEFT_OUT = tuple(SupersededFate)
COLUMNS = ("round", "submitter", "version", "superseded_by", "fate", "withdrawal_reason", "system", "accelerator",
           "model", "scenario", "division", "value", "units", "reference_value", "deviation_pct", "verdict", "reason",
           "status", "label", "source", "file", "line")


def _judged(table: pd.DataFrame, findings: list[Finding]) -> TableReport:
    withdrawn = table[table["fate"] == WITHDRAWN]
    return TableReport(table, "SupersededRow", {
        "superseded_versions": int(table[["round", "submitter", "version"]].drop_duplicates().shape[0]),
        "superseded_results": len(table), "withdrawn": len(withdrawn),
        "withdrawn_deviating": tally(withdrawn["verdict"], (DEVIATES,))[DEVIATES]}, findings)


def judge_superseded(rules: Rules, root: Path, results: pd.DataFrame, versions: pd.DataFrame, tolerance_pct: float,
                     reference_submitter: str, reference_vendor: str) -> TableReport:
    """Every superseded version under ROOT (``versions``: the ingest stage's
    versions table) judged against the references in RESULTS (the current
    canonical table)."""
    from pipeline.analyses.compare import compare
    from pipeline.ingest.submissions import ingest

    rows, fates, findings = [], [], []
    versions = versions.fillna("")
    is_used = versions["used"].map(lambda value: str(value).strip().lower() == "true")
    used = versions[is_used]
    for v in versions[~is_used & (versions["status"] != "")].to_dict("records"):
        newer = used[(used["round"] == v["round"]) & (used["submitter"] == v["submitter"])
                     & (used["status"] == v["status"])]
        if newer.empty:
            continue
        successor = newer.iloc[0]
        read = ingest(rules, [root / v["path"]], root=root)
        findings.extend(read.findings)
        if read.table.empty:
            continue
        after = version_at(root / successor["path"], root)
        load_manifest(rules, after)
        entries = after.manifest.withdraws if after.manifest is not None else []
        current = results[(results["round"] == v["round"]) & (results["submitter"] == v["submitter"])]
        kept = {tuple(str(x) for x in r) for r in current[list(KEY)].itertuples(index=False)}
        for r in read.table.to_dict("records"):
            entry = withdrawal_for(rules, entries, r)
            fate = WITHDRAWN if entry else REPLACED if tuple(str(r[k]) for k in KEY) in kept else LEFT_OUT
            fates.append({"file": r["file"], "line": r["line"], "version": int(v["version"]),
                          "superseded_by": int(successor["version"]), "fate": fate,
                          "withdrawal_reason": entry["reason"] if entry else ""})
        rows.append(read.table)
    if not rows:
        return _judged(pd.DataFrame(columns=list(COLUMNS)), findings)
    old = pd.concat(rows, ignore_index=True)
    references = results[results["submitter"] == reference_submitter]
    judged = compare(rules, pd.concat([references, old[old["submitter"] != reference_submitter]], ignore_index=True),
                     tolerance_pct, reference_submitter, reference_vendor).frame()
    fates = pd.DataFrame(fates).astype({"line": "Int64"})
    table = judged.merge(fates, on=list(RESULT_KEY), how="inner")   # the result key, never the text of source
    table = table.sort_values(["round", "submitter", "version", *RESULT_KEY], kind="stable").reset_index(drop=True)
    return _judged(table[list(COLUMNS)], findings)
