"""The ``mlrepro`` command line: click only. Parses options, calls the
library, renders its report, maps it to an exit code.

Exit codes: 0 clean; 1 the data failed a check; 2 usage error;
3 configuration or environment problem; 4 internal error (a bug).
"""

from __future__ import annotations

import json
import math
import os
import sys
from datetime import datetime
from pathlib import Path

import click

from .errors import ConfigError, UsageError
from .findings import Finding

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_CONFIG, EXIT_BUG = 0, 1, 2, 3, 4

output_format = click.option("--format", "output", type=click.Choice(["text", "json"]),
                             default="text", show_default=True, help="How to print the report.")
exit_zero = click.option("--exit-zero", is_flag=True,
                         help="Record findings in the outputs but exit 0 (for DVC stages).")


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or (hasattr(value, "__class__") and value.__class__.__name__ == "NAType"):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


def _records(frame) -> list[dict]:
    return [{k: _clean(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _emit(output: str, summary: dict, rows: list[dict], findings: list[Finding], text_lines) -> None:
    if output == "json":
        doc = {"summary": {**summary, "findings": len(findings),
                           "errors": sum(f.severity == "error" for f in findings)},
               "findings": [f.to_dict() for f in findings], "rows": rows}
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    for f in findings:
        click.echo(f"{f.severity}: {f.render()}", err=True)
    for line in text_lines():
        click.echo(line)
    click.echo("summary: " + ", ".join(f"{k}={v}" for k, v in summary.items()
                                       if not isinstance(v, (dict, list))))


def _exit(findings: list[Finding], exit_zero_flag: bool = False) -> None:
    if not exit_zero_flag and any(f.severity == "error" for f in findings):
        sys.exit(EXIT_FINDINGS)


class _Group(click.Group):
    """Maps the library's exceptions to exit codes, so that CliRunner tests and
    the console script behave the same."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            raise click.UsageError(str(exc), ctx) from None
        except ConfigError as exc:
            raise _Fail(f"configuration error: {exc}", EXIT_CONFIG) from None
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort, SystemExit):
            raise
        except OSError as exc:
            raise _Fail(f"environment error: {exc}", EXIT_CONFIG) from None
        except Exception as exc:  # a crash is a bug, never a verdict
            if os.environ.get("MLREPRO_DEBUG"):
                raise
            raise _Fail(f"internal error (a bug, please report): {type(exc).__name__}: {exc}",
                        EXIT_BUG) from None


class _Fail(click.ClickException):
    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.exit_code = code

    def format_message(self) -> str:
        return self.message

    def show(self, file=None) -> None:
        click.echo(self.message, err=True)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mlrepro")
def cli() -> None:
    """Validate MLPerf Inference partner results against the vendor's reference,
    keep verified and post-deadline results apart, and gate submissions in CI."""


@cli.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--submitter", required=True, help="Submitting organisation, e.g. Dell.")
@click.option("--round", "round_", required=True, help="MLPerf round, e.g. v6.0.")
@click.option("--status", required=True, type=click.Choice(["verified", "post-deadline"]),
              help="What the submitter declares; checked against the deadline when read.")
@click.option("--submitted-at", help="ISO-8601 time with zone (default: now, UTC).")
@click.option("--input-format", "fmt", help="Input format (detected when not given).")
@click.option("--root", type=click.Path(path_type=Path), default=Path("submissions"),
              show_default=True, help="Submissions root.")
@click.option("--notes", help="Free text kept in the manifest (e.g. where figures come from).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (--format names the input).")
def submit(source, submitter, round_, status, submitted_at, fmt, root, notes, as_json):
    """Seal SOURCE as the next version v<N> of ROOT/ROUND/SUBMITTER."""
    from . import readers, store

    if fmt is not None and fmt not in readers.READERS:
        raise click.BadParameter(f"one of {list(readers.FORMATS)}", param_hint="--input-format")
    when = None
    if submitted_at:
        try:
            when = datetime.fromisoformat(submitted_at.replace("Z", "+00:00"))
        except ValueError:
            raise click.BadParameter("an ISO-8601 time such as 2026-02-20T10:00:00+00:00",
                                     param_hint="--submitted-at")
    result = store.submit(source, submitter, round_, status, root, when, fmt, notes)
    summary = {"created": result.version.display if result.version else None,
               "path": str(result.version.path) if result.version else None}
    _emit("json" if as_json else "text", summary, [], result.findings,
          lambda: [f"created {result.version.path}"] if result.version else ["nothing written"])
    _exit(result.findings)


def _ingest_options(f):
    f = click.option("--input-format", "fmt", help="Format of raw files (detected when not given).")(f)
    f = click.option("--round", "round_", help="Round of a raw file that does not state it.")(f)
    f = click.option("--root", type=click.Path(path_type=Path), default=None,
                     help="Submissions root (default: found from the paths).")(f)
    return f


@cli.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="Canonical table: .csv or .parquet.")
@click.option("--status", type=click.Choice(["verified", "post-deadline"]),
              help="Status of raw files (manifests carry their own).")
@click.option("--rejected-out", type=click.Path(path_type=Path), help="CSV of rejected and excluded rows.")
@click.option("--findings-out", type=click.Path(path_type=Path), help="JSON of all findings.")
@click.option("--versions-out", type=click.Path(path_type=Path), help="CSV of versions, used or superseded.")
@_ingest_options
@output_format
@exit_zero
def ingest(sources, out, status, rejected_out, findings_out, versions_out, fmt, round_, root,
           output, exit_zero):
    """Read submissions (root, round, submitter or version folders) or raw files
    into the canonical results table."""
    import pandas as pd

    from . import ingest as ingest_mod
    from .outputs import label_frame, write_json, write_table

    report = ingest_mod.ingest(list(sources), fmt, round_, status, root)
    write_table(report.table, out)
    if rejected_out:
        write_table(report.dispositions_frame(), rejected_out)
    if findings_out:
        write_json([f.to_dict() for f in report.findings], findings_out)
    if versions_out:
        write_table(pd.DataFrame(report.versions, columns=[
            "round", "submitter", "version", "path", "used", "status_declared", "status",
            "submitted_at", "supersedes"]).astype({"supersedes": "Int64"}), versions_out)
    summary = report.summary()
    _emit(output, summary, _records(label_frame(report.table)), report.findings,
          lambda: [f"{d.outcome}: {d.source}: {d.reason}" for d in report.dispositions]
          + [f"wrote {out}"])
    _exit(report.findings, exit_zero)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--status", type=click.Choice(["verified", "post-deadline"]), default="verified",
              show_default=True, help="Status assumed for raw files.")
@_ingest_options
@output_format
def validate(paths, status, fmt, round_, root, output):
    """Check submissions or raw files (manifests, hashes, formats, rows) without writing."""
    from . import ingest as ingest_mod

    report = ingest_mod.ingest(list(paths), fmt, round_, status, root)
    _emit(output, report.summary(), [d.to_dict() for d in report.dispositions], report.findings,
          lambda: ["ok" if report.ok else f"{len([f for f in report.findings if f.severity == 'error'])} error(s)"])
    _exit(report.findings)


@cli.command()
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="Agreement table: .csv or .parquet.")
@click.option("--tolerance-pct", type=float, help="Default: compare.tolerance_pct in params.yaml (4.0).")
@click.option("--reference-submitter", help="Default: compare.reference_submitter in params.yaml (AMD).")
@click.option("--params", "params_path", type=click.Path(path_type=Path), default=Path("params.yaml"),
              show_default=True, help="Parameters file (missing: built-in defaults).")
@click.option("--summary-out", type=click.Path(path_type=Path), help="JSON summary (per-partner rates).")
@output_format
@exit_zero
def compare(results, out, tolerance_pct, reference_submitter, params_path, summary_out, output, exit_zero):
    """Compare each partner result with the reference submitter's (the ±tolerance agreement)."""
    from . import compare as compare_mod, params, table
    from .findings import finding
    from .outputs import write_json, write_table

    p = params.load(params_path)["compare"]
    tol = p["tolerance_pct"] if tolerance_pct is None else tolerance_pct
    if tol < 0:
        raise click.BadParameter("must be >= 0", param_hint="--tolerance-pct")
    ref = reference_submitter or p["reference_submitter"]
    report = compare_mod.compare(table.read(results), tol, ref)
    frame = report.frame()
    write_table(frame, out)
    summary = report.summary()
    if summary_out:
        write_json(summary, summary_out)
    findings = [finding("deviates-from-reference", r["source"].rsplit(":", 1)[0],
                        f"line {r['source'].rsplit(':', 1)[-1]}, column value",
                        f"within ±{tol}% of {r['reference_value']} ({r['reference_system']})",
                        f"{r['value']} ({r['deviation_pct']:+.2f}%)",
                        f"{r['submitter']} {r['model']} {r['scenario']} deviates from the reference")
                for r in report.rows if r["verdict"] == "deviates"]

    def lines():
        yield f"{'verdict':<13}{'dev %':>9}  {'submitter':<16}{'system':<28}{'model':<18}{'scenario':<12}{'value':>12}{'reference':>12}  label"
        for r in report.rows:
            dev = "" if r["deviation_pct"] is None else f"{r['deviation_pct']:+.2f}"
            refv = "" if r["reference_value"] is None else f"{r['reference_value']:.6g}"
            yield (f"{r['verdict']:<13}{dev:>9}  {r['submitter'][:15]:<16}{str(r['system'])[:27]:<28}"
                   f"{r['model'][:17]:<18}{r['scenario']:<12}{r['value']:>12.6g}{refv:>12}  {r['label']}"
                   + (f"  ({r['reason']})" if r["reason"] else ""))
        if any(r["label"] == "unverified" for r in report.rows):
            yield "unverified: Result not verified by MLCommons Association."
    _emit(output, summary, _records(frame), findings, lines)
    _exit(findings, exit_zero)


@cli.command()
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--verified-out", type=click.Path(path_type=Path), required=True)
@click.option("--post-deadline-out", type=click.Path(path_type=Path), required=True)
@output_format
@exit_zero
def partition(results, verified_out, post_deadline_out, output, exit_zero):
    """Split a table by status into the verified and the post-deadline (unverified) sets."""
    from . import partition as partition_mod, table
    from .outputs import write_table

    frame = _read_any(results, table)
    report = partition_mod.partition(frame, results.as_posix())
    write_table(report.verified, verified_out)
    write_table(report.post_deadline, post_deadline_out)
    rows = _records(report.verified) + _records(report.post_deadline)
    _emit(output, report.summary(), rows, report.findings,
          lambda: [f"wrote {verified_out} ({len(report.verified)} verified)",
                   f"wrote {post_deadline_out} ({len(report.post_deadline)} unverified: "
                   "Result not verified by MLCommons Association.)"])
    _exit(report.findings, exit_zero)


def _read_any(path: Path, table_mod):
    """A canonical table, or any table with a status column (e.g. agreement)."""
    import pandas as pd

    try:
        return table_mod.read(path)
    except ConfigError:
        frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
        if "status" not in frame.columns:
            raise ConfigError(f"{path}: no status column to partition on")
        return frame


@cli.command()
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="Joined canonical table: .csv or .parquet.")
@click.option("--rejected-out", type=click.Path(path_type=Path), required=True)
@click.option("--findings-out", type=click.Path(path_type=Path), required=True)
@click.option("--versions-out", type=click.Path(path_type=Path), required=True)
@output_format
@exit_zero
def merge(folder, out, rejected_out, findings_out, versions_out, output, exit_zero):
    """Join the per-submission ingest outputs found under FOLDER (DVC pipeline)."""
    from . import merge as merge_mod
    from .outputs import label_frame, write_json, write_table

    report = merge_mod.merge(folder)
    write_table(report.table, out)
    write_table(report.rejected, rejected_out)
    write_json(report.findings, findings_out)
    write_table(report.versions, versions_out)
    summary = {"accepted": len(report.table), "rejected": int((report.rejected["outcome"] == "rejected").sum()),
               "excluded": int((report.rejected["outcome"] == "excluded").sum()),
               "recorded_findings": len(report.findings)}
    _emit(output, summary, _records(label_frame(report.table)), report.schema_findings,
          lambda: [f"wrote {out}, {rejected_out}, {findings_out}, {versions_out}"])
    _exit(report.schema_findings, exit_zero)


@cli.command()
@click.option("--results", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--agreement", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--rejected", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True)
def metrics(results, agreement, rejected, out):
    """Write the pipeline's metrics (counts per set, agreement per partner) for `dvc metrics`."""
    from . import metrics as metrics_mod
    from .outputs import write_json

    data = metrics_mod.compute(results, agreement, rejected)
    write_json(data, out)
    click.echo(json.dumps(data, indent=2))


def main() -> None:
    cli(prog_name="mlrepro")
