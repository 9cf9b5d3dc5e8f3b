"""The floor of the scale benchmark: what `mlrepro ingest`, `compare` and
`partition` do to a submissions root, written as one polars query, with no
checks. It is what the pipeline's time is held against (benchmarks/scale.py:
GOAL_RATIO times this script at most, measured in the same run).

    python benchmarks/polars_floor.py SUBMISSIONS_ROOT OUT_DIR

Reads every sealed version's files with the status its manifest
declares (no version is superseded in the synthetic root), maps each
accelerator name to its family (``AMD Instinct MI325X 256GB HBM3e`` ->
``MI325X``), joins each partner row with the reference submitter's best
result for the same round, accelerator, accelerators per node, nodes, model
and scenario (verified references for verified rows; verified first, else
any, for post-deadline rows), computes the deviation in per cent of the
reference and the verdict (within 4 %, inclusive), splits the table by
status, and writes the table, the agreement and the two sets as Parquet.
Prints the counts as JSON (tests compare them with the pipeline's).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import yaml

# the pipeline's match key plus what makes a candidate eligible (pipeline/reference.py:
# same division; the synthetic rows' units follow from model and scenario, and their
# accelerator counts from the system, with no power-capped system)
MATCH = ["round", "accelerator", "accelerators_per_node", "nodes", "model", "scenario", "division"]
REFERENCE = "AMD"
TOLERANCE_PCT = 4.0
EPSILON = 1e-9


def load(root: Path) -> pl.LazyFrame:
    frames = []
    for manifest in sorted(root.glob("*/*/v*/manifest.yaml")):
        sealed = yaml.safe_load(manifest.read_text(encoding="utf-8"))
        frames += [pl.scan_csv(manifest.parent / f["path"], infer_schema=False)
                   .with_columns(pl.lit(sealed["status"]).alias("status")) for f in sealed["files"]]
    return pl.concat(frames).with_columns(
        pl.col("value").cast(pl.Float64),
        pl.col("accelerators_per_node").cast(pl.Int64), pl.col("nodes").cast(pl.Int64),
        pl.col("accelerator").str.extract(r"(MI\d{3}X)").alias("accelerator"))


def best(refs: pl.LazyFrame, suffix: str) -> pl.LazyFrame:
    """The reference's best result per match key (highest rate, lowest latency)."""
    latency = pl.col("units").str.starts_with("Latency")
    score = pl.when(latency).then(-pl.col("value")).otherwise(pl.col("value"))
    return (refs.with_columns(score.alias("score")).sort(["score", "system"], descending=[True, False])
            .group_by(MATCH, maintain_order=True).first()
            .select(*MATCH, pl.col("value").alias(f"ref_{suffix}"), pl.col("system").alias(f"ref_system_{suffix}")))


def main(argv: list[str]) -> int:
    root, out = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    table = load(root).collect()
    table.write_parquet(out / "table.parquet")
    lazy = table.lazy()
    refs = lazy.filter(pl.col("submitter") == REFERENCE)
    partners = (lazy.filter(pl.col("submitter") != REFERENCE)
                .join(best(refs.filter(pl.col("status") == "verified"), "verified"), on=MATCH, how="left")
                .join(best(refs, "any"), on=MATCH, how="left"))
    reference = (pl.when(pl.col("status") == "verified").then(pl.col("ref_verified"))
                 .otherwise(pl.coalesce("ref_verified", "ref_any")))
    deviation = (pl.col("value") - pl.col("reference_value")) / pl.col("reference_value") * 100.0
    agreement = (partners.with_columns(reference.alias("reference_value"))
                 .with_columns(deviation.alias("deviation_pct"))
                 .with_columns(pl.when(pl.col("reference_value").is_null()).then(pl.lit("no-reference"))
                               .when(pl.col("deviation_pct").abs() <= TOLERANCE_PCT + EPSILON)
                               .then(pl.lit("agree")).otherwise(pl.lit("deviates")).alias("verdict"))
                 .collect())
    agreement.write_parquet(out / "agreement.parquet")
    verified = table.filter(pl.col("status") == "verified")
    post = table.filter(pl.col("status") == "post-deadline")
    verified.write_parquet(out / "verified.parquet")
    post.write_parquet(out / "post_deadline.parquet")
    verdicts = dict(agreement.group_by("verdict").len().iter_rows())
    print(json.dumps({"rows": table.height, "verified": verified.height, "post_deadline": post.height,
                      "partner_rows": agreement.height,
                      **{v: int(verdicts.get(v, 0)) for v in ("agree", "deviates", "no-reference")}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
