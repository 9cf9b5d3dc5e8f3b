"""Metrics for ``dvc metrics show``: counts per set and agreement per partner."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def _read(path: Path) -> pd.DataFrame:
    from .table import read_frame

    return read_frame(path)


def compute(results: Path, agreement: Path, rejected: Path) -> dict:
    res, agr, rej = _read(results), _read(agreement), _read(rejected)
    per_partner = {}
    for submitter, group in agr.groupby("submitter", sort=True):
        compared = group[group["verdict"].isin(["agree", "deviates"])]
        per_partner[str(submitter)] = {
            "compared": int(len(compared)),
            "agree": int((compared["verdict"] == "agree").sum()),
            "agreement_rate": round(float((compared["verdict"] == "agree").mean()), 6)
            if len(compared) else None,
        }
    compared = agr[agr["verdict"].isin(["agree", "deviates"])]
    return {
        "results": {
            "accepted": int(len(res)),
            "verified": int((res["status"] == "verified").sum()),
            "post_deadline": int((res["status"] == "post-deadline").sum()),
            "rejected": int((rej["outcome"] == "rejected").sum()) if len(rej) else 0,
            "excluded": int((rej["outcome"] == "excluded").sum()) if len(rej) else 0,
        },
        "agreement": {
            "compared": int(len(compared)),
            "agree": int((compared["verdict"] == "agree").sum()),
            "deviates": int((compared["verdict"] == "deviates").sum()),
            "no_reference": int((agr["verdict"] == "no-reference").sum()),
            "excluded": int((agr["verdict"] == "excluded").sum()),
            "agreement_rate": round(float((compared["verdict"] == "agree").mean()), 6)
            if len(compared) else None,
            "partners": per_partner,
        },
    }
