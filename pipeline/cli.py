"""The ``mlrepro`` command line: click only. Parses options, calls the
library, renders its report, maps it to an exit code.

Exit codes: 0 clean; 1 the data failed a check; 2 usage error;
3 configuration or environment problem; 4 internal error (a bug).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
from datetime import datetime
from pathlib import Path

import click

from .errors import ConfigError, UsageError
from .findings import Finding, Report

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_CONFIG, EXIT_BUG = 0, 1, 2, 3, 4
TEXT_LIMIT = 200  # text output shows this many findings and lines; JSON and files hold all

output_format = click.option("--format", "output", type=click.Choice(["text", "json"]),
                             default="text", show_default=True, help="How to print the report.")
exit_zero = click.option("--exit-zero", is_flag=True,
                         help="Record findings in the outputs but exit 0 (for DVC stages).")
params_option = click.option("--params", "params_path", type=click.Path(path_type=Path),
                             default=Path("params.yaml"), show_default=True,
                             help="Parameters file (tolerance, reference; missing: built-in defaults).")
reference_option = click.option("--reference-submitter",
                                help="Default: compare.reference_submitter in params.yaml (AMD).")
report_out_option = click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path),
                                 help="Also write the JSON report to this file.")


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


def _emit(output: str, summary: dict, rows, findings: list[Finding], text_lines) -> None:
    """Print a report. ``rows`` may be a callable, so that a large table is turned
    into JSON records only when JSON is asked for."""
    if output == "json":
        click.echo(json.dumps(_doc(summary, rows() if callable(rows) else rows, findings),
                              indent=2, default=str))
        return
    for f in findings[:TEXT_LIMIT]:
        click.echo(f"{f.severity}: {f.render()}", err=True)
    if len(findings) > TEXT_LIMIT:
        click.echo(f"... and {len(findings) - TEXT_LIMIT} more findings (all of them with --format json)",
                   err=True)
    lines = iter(text_lines())
    for line in itertools.islice(lines, TEXT_LIMIT):
        click.echo(line)
    more = sum(1 for _ in lines)
    if more:
        click.echo(f"... and {more} more lines (the output files hold everything)")
    click.echo("summary: " + ", ".join(f"{k}={v}" for k, v in summary.items()
                                       if not isinstance(v, (dict, list))))


def _doc(summary: dict, rows: list[dict], findings: list[Finding]) -> dict:
    """The JSON report every command prints with --format json."""
    return Report(rows, findings, summary).to_dict()


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
@click.option("--format", "--input-format", "fmt",
              help="Input format of SOURCE (detected when not given).")
@click.option("--root", type=click.Path(path_type=Path), default=Path("submissions"),
              show_default=True, help="Submissions root.")
@click.option("--notes", help="Free text kept in the manifest (e.g. where figures come from).")
@click.option("--withdraw", "withdraw_specs", multiple=True, metavar="SYSTEM:MODEL:SCENARIO:REASON",
              help="A result of the superseded version this version drops or moves (repeatable).")
@click.option("--dry-run", is_flag=True,
              help="Run every gate check on the would-be version (reference comparison included); "
                   "seal nothing.")
@params_option
@click.option("--json", "as_json", is_flag=True,
              help="Print the report as JSON (here --format names the input format).")
def submit(source, submitter, round_, status, submitted_at, fmt, root, notes, withdraw_specs, dry_run,
           params_path, as_json):
    """Seal SOURCE as the next version v<N> of ROOT/ROUND/SUBMITTER."""
    from . import readers, store

    if fmt is not None and fmt not in readers.READERS:
        raise click.BadParameter(f"one of {list(readers.FORMATS)}", param_hint="--format")
    when = None
    if submitted_at:
        try:
            when = datetime.fromisoformat(submitted_at.replace("Z", "+00:00"))
        except ValueError:
            raise click.BadParameter("an ISO-8601 time such as 2026-02-20T10:00:00+00:00",
                                     param_hint="--submitted-at")
    withdraws = []
    for spec in withdraw_specs:
        parts = spec.split(":", 3)
        if len(parts) != 4 or not all(p.strip() for p in parts):
            raise click.BadParameter(f"{spec!r}: SYSTEM:MODEL:SCENARIO:REASON", param_hint="--withdraw")
        withdraws.append(dict(zip(("system", "model", "scenario", "reason"), (p.strip() for p in parts))))
    if dry_run:
        from . import gate_dryrun, gate_formats

        report = gate_dryrun.dry_run(source, submitter, round_, status, root, when, fmt, notes, withdraws,
                                     params_path, root.as_posix().rstrip("/") + "/")
        click.echo(gate_formats.render(report, "json" if as_json else "text"))
        sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)
    result = store.submit(source, submitter, round_, status, root, when, fmt, notes, withdraws)
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
            "submitted_at", "supersedes", "withdraws"]).astype({"supersedes": "Int64"}), versions_out)
    summary = report.summary()
    _emit(output, summary, lambda: _records(label_frame(report.table)), report.findings,
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
@reference_option
@params_option
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
    if not (math.isfinite(tol) and tol >= 0):  # NaN would make every row deviate
        raise click.BadParameter("must be a finite number >= 0", param_hint="--tolerance-pct")
    ref = reference_submitter or p["reference_submitter"]
    report = compare_mod.compare(table.read(results), tol, ref, p.get("reference_vendor", "AMD"))
    frame = report.frame()
    write_table(frame, out)
    summary = report.summary()
    if summary_out:
        write_json(summary, summary_out)
    deviating = frame[frame["verdict"] == "deviates"]
    shown = deviating if output == "json" else deviating.head(TEXT_LIMIT)
    findings = [finding("deviates-from-reference", r["source"].rsplit(":", 1)[0],
                        f"line {r['source'].rsplit(':', 1)[-1]}, column value",
                        f"within ±{tol}% of {r['reference_value']} ({r['reference_system']})",
                        f"{r['value']} ({r['deviation_pct']:+.2f}%)",
                        f"{r['submitter']} {r['model']} {r['scenario']} deviates from the reference")
                for r in compare_mod.CompareReport(shown).rows]

    def lines():
        yield f"{'verdict':<13}{'dev %':>9}  {'submitter':<16}{'system':<28}{'model':<18}{'scenario':<12}{'value':>12}{'reference':>12}  label"
        for r in compare_mod.CompareReport(frame.head(TEXT_LIMIT - 3)).rows:
            dev = "" if r["deviation_pct"] is None else f"{r['deviation_pct']:+.2f}"
            refv = "" if r["reference_value"] is None else f"{r['reference_value']:.6g}"
            yield (f"{r['verdict']:<13}{dev:>9}  {r['submitter'][:15]:<16}{str(r['system'])[:27]:<28}"
                   f"{r['model'][:17]:<18}{r['scenario']:<12}{r['value']:>12.6g}{refv:>12}  {r['label']}"
                   + (f"  ({r['reason']})" if r["reason"] else ""))
        if len(frame) > TEXT_LIMIT - 3:
            yield f"... {len(frame) - TEXT_LIMIT + 3} more rows in {out}"
        if (frame["label"] == "unverified").any():
            yield "unverified: Result not verified by MLCommons Association."
    _emit(output, summary, lambda: _records(frame), findings, lines)
    if output == "text" and len(deviating) > len(findings):
        click.echo(f"... and {len(deviating) - len(findings)} more deviating rows "
                   f"(all of them in {out} and with --format json)", err=True)
    if len(deviating) and not exit_zero:
        sys.exit(EXIT_FINDINGS)


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
    rows = lambda: _records(report.verified) + _records(report.post_deadline)  # noqa: E731
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
        frame = table_mod.read_frame(path)
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
    """Join the per-submission ingest outputs found under FOLDER."""
    from . import merge as merge_mod

    _write_merged(merge_mod.merge(folder), out, rejected_out, findings_out, versions_out, output, exit_zero)


def _write_merged(report, out, rejected_out, findings_out, versions_out, output, exit_zero) -> None:
    from .outputs import label_frame, write_json, write_table

    write_table(report.table, out)
    write_table(report.rejected, rejected_out)
    write_json(report.findings, findings_out)
    write_table(report.versions, versions_out)
    _emit(output, report.summary(), lambda: _records(label_frame(report.table)), report.schema_findings,
          lambda: [f"wrote {out}, {rejected_out}, {findings_out}, {versions_out}"])
    _exit(report.schema_findings, exit_zero)


@cli.command("ingest-all")
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="Canonical table: .csv or .parquet.")
@click.option("--rejected-out", type=click.Path(path_type=Path), required=True)
@click.option("--findings-out", type=click.Path(path_type=Path), required=True)
@click.option("--versions-out", type=click.Path(path_type=Path), required=True)
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of per-submitter outputs, reused while a submitter's files, "
                   "the code and schemas/ are unchanged (DVC pipeline: .cache/ingest).")
@output_format
@exit_zero
def ingest_all(root, out, rejected_out, findings_out, versions_out, cache, output, exit_zero):
    """Read every <round>/<submitter> folder of a submissions root, one submitter
    at a time, into one canonical table (the DVC pipeline's ingest stage)."""
    from . import merge as merge_mod

    _write_merged(merge_mod.ingest_root(root, cache), out, rejected_out, findings_out, versions_out,
                  output, exit_zero)


# ---- gate and report (issue 5) -------------------------------------------------------

@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--base", help="Git ref whose merge base with HEAD is the base (default: "
                             "origin/$GITHUB_BASE_REF when set, else origin/HEAD, else main, else master).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "junit", "github", "markdown"]),
              default="text", show_default=True, help="How to print the report on stdout.")
@click.option("--output", "outputs", multiple=True, metavar="[FORMAT=]PATH",
              help="Also write the report as FORMAT to PATH, from the same run (repeatable: "
                   "--output junit=gate.xml --output markdown=summary.md). A bare PATH takes "
                   "--format and replaces stdout.")
@click.option("--allow-policy-change", is_flag=True,
              help="A pull request that changes only policy passes; list every shipped result "
                   "whose verdict or status the new policy flips.")
@click.option("--root", type=click.Path(path_type=Path), default=Path("submissions"),
              show_default=True, help="Submissions root.")
@params_option
def gate(paths, base, fmt, outputs, allow_policy_change, root, params_path):
    """Gate submission versions: PATHS (version folders), or every version added
    or changed since the git base, with the base's policy (params.yaml, schemas/).
    Exit 0 when all hold, 1 when anything fails."""
    from . import gate as gate_mod, gate_formats
    from .outputs import atomic_path

    targets = []
    for spec in outputs:
        name, sep, path = spec.partition("=")
        if sep and name in gate_formats.FORMATS:
            targets.append((name, Path(path)))
        elif sep and name.isidentifier() and name.islower():
            raise click.BadParameter(f"{name!r}: one of {list(gate_formats.FORMATS)}", param_hint="--output")
        else:
            targets.append((fmt, Path(spec)))
    report = gate_mod.run(list(paths), root, base, params_path, allow_policy_change=allow_policy_change)
    for name, path in targets:
        with atomic_path(path) as tmp:
            tmp.write_text(gate_formats.render(report, name) + "\n", encoding="utf-8")
    if len(outputs) == 1 and "=" not in outputs[0]:      # the old form: --output FILE
        click.echo(gate_formats.text(report).splitlines()[-1], err=True)
    else:
        click.echo(gate_formats.render(report, fmt))
    sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)


@cli.command()
@click.option("--results", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="Canonical table (data/results.parquet).")
@click.option("--agreement", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="Agreement table of `mlrepro compare` (data/agreement.csv).")
@click.option("--rejected", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="Rejected and excluded inputs (data/rejected.csv).")
@click.option("--versions", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="Submission versions, used or superseded (data/versions.csv).")
@click.option("--scaling", type=click.Path(dir_okay=False, path_type=Path),
              help="JSON of `mlrepro scaling RESULTS --format json` (section notes when absent).")
@click.option("--claims", type=click.Path(dir_okay=False, path_type=Path),
              help="JSON of `mlrepro claims CLAIMS.yaml RESULTS --format json`.")
@click.option("--validation", type=click.Path(dir_okay=False, path_type=Path),
              help="JSON of `mlrepro audit` (audit/validation.json), rendered in the report.")
@click.option("--data-docs", type=click.Path(path_type=Path),
              help="GX Data Docs index, linked relatively (optional: the report renders --validation).")
@click.option("--plot-data", type=click.Path(dir_okay=False, path_type=Path),
              help="CSV for `dvc plots` (default: deviation.csv beside the report).")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The HTML report (one self-contained file).")
def report(results, agreement, rejected, versions, scaling, claims, validation, data_docs, plot_data, out):
    """Write the human report: one offline HTML file with tables and inline SVG plots."""
    from . import report as report_mod
    from .outputs import atomic_path, write_table

    doc = report_mod.build(report_mod.Inputs(results, agreement, rejected, versions, scaling,
                                             claims, data_docs, validation), out)
    with atomic_path(out) as tmp:
        tmp.write_text(doc.html, encoding="utf-8")
    plot_data = plot_data or out.parent / "deviation.csv"
    write_table(doc.deviation, plot_data)
    for note in doc.notes:
        click.echo(f"warning: {note}", err=True)
    click.echo(f"wrote {out} and {plot_data}")


@cli.command()
@click.option("--results", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--agreement", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--rejected", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="metrics.json: accepted, rejected and excluded rows.")
@click.option("--details-out", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of the agreement counts per status, round and partner "
                   "(default: OUT without .json, e.g. metrics/).")
def metrics(results, agreement, rejected, out, details_out):
    """Write the pipeline's metrics (counts per set, agreement per status, round and partner)
    for `dvc metrics show`."""
    from . import metrics as metrics_mod

    data = metrics_mod.compute(results, agreement, rejected)
    details_out = details_out or out.with_suffix("")
    metrics_mod.write(data, out, details_out)
    click.echo(json.dumps(data.totals, indent=2))
    for name, counts in data.files.items():
        if name.count("/") < 2:
            click.echo(f"{(details_out / name).as_posix()}: "
                       + ", ".join(f"{k}={v}" for k, v in counts.items()))


# ---- scaling, claims, audit (issue 4) ---------------------------------------------------

def _write_doc(path: Path, summary: dict, rows: list[dict], findings: list[Finding]) -> None:
    """The same JSON document as --format json, written atomically."""
    from .outputs import write_json

    write_json(_doc(summary, rows, findings), path)


def _reference_submitter(option: str | None, params_path: Path) -> str:
    from . import params

    return option or params.load(params_path)["compare"]["reference_submitter"]


@cli.command()
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@report_out_option
@reference_option
@params_option
@output_format
def scaling(results, out, reference_submitter, params_path, output):
    """Scaling efficiency of every multi-node result against single-node references."""
    from . import scaling as scaling_mod, table

    report = scaling_mod.scaling(table.read(results), _reference_submitter(reference_submitter, params_path))
    rows = [{k: _clean(v) for k, v in r.items()} for r in report.rows]
    if out:
        _write_doc(out, report.summary(), rows, [])

    def lines():
        yield (f"{'verdict':<15}{'eff %':>8}  {'submitter':<22}{'system':<34}{'model':<17}{'scenario':<12}"
               f"{'accel':>6}{'value':>12}{'expected':>13}  label")
        for r in report.rows:
            eff = "" if r["efficiency_pct"] is None else f"{r['efficiency_pct']:.2f}"
            exp = "" if r["expected"] is None else f"{r['expected']:.6g}"
            yield (f"{r['verdict']:<15}{eff:>8}  {r['submitter'][:21]:<22}{str(r['system'])[:33]:<34}"
                   f"{r['model'][:16]:<17}{r['scenario']:<12}{r['total_accelerators']:>6}{r['value']:>12.6g}"
                   f"{exp:>13}  {r['label']}")
            yield f"    {r['reference_rule'] or r['reason']}"
        if any(r["label"] == "unverified" for r in report.rows):
            yield "unverified: Result not verified by MLCommons Association."
    _emit(output, report.summary(), rows, [], lines)


@cli.command()
@click.argument("ledger", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@report_out_option
@reference_option
@params_option
@output_format
@exit_zero
def claims(ledger, results, out, reference_submitter, params_path, output, exit_zero):
    """Recompute the claims of a ledger (YAML) from a results table."""
    from . import claims as claims_mod, table

    ref = _reference_submitter(reference_submitter, params_path)
    book = claims_mod.read_ledger(ledger)
    report = claims_mod.check_claims(book, table.read(results), ref)
    rows = [{k: _clean(v) for k, v in r.items()} for r in report.rows]
    if out:
        _write_doc(out, report.summary(), rows, report.findings)

    def lines():
        yield f"{'verdict':<15}{'claimed':>10}{'computed':>12}  {'id':<40}{'kind':<16}label"
        for r in report.rows:
            unit = "x" if r["measure"] == "ratio" else "%"
            claimed = "" if r["claimed"] is None else f"{r['claimed']:g}{unit}"
            computed = "" if r["computed"] is None else f"{r['computed']:.4g}{unit}"
            yield (f"{r['verdict']:<15}{claimed:>10}{computed:>12}  {r['id'][:39]:<40}{str(r['kind']):<16}"
                   f"{r['label']}")
            if r["comparator"] and r["comparator"].get("system"):
                yield (f"    against {r['comparator']['submitter']} {r['comparator']['system']} "
                       f"({r['comparator']['value']:.6g})")
            if r["computed_vs_best"] is not None and r["best_comparator"] != r["comparator"]:
                yield (f"    against the strongest ({r['best_comparator']['system']}): "
                       f"{r['computed_vs_best']:.4g}{unit}; range {r['range_min']:.4g}..{r['range_max']:.4g}")
            for note in r["notes"]:
                yield f"    {note}"
            if r["label"] == "unverified":
                yield f"    unverified: {r['footnote']}" + (f" {r['disclaimer']}" if r["disclaimer"] else "")
    _emit(output, report.summary(), rows, report.findings, lines)
    _exit(report.findings, exit_zero)


@cli.command()
@click.option("--verified", "verified_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              required=True, help="The verified set (results/verified/results.csv).")
@click.option("--post-deadline", "post_deadline_path", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The post-deadline set (results/post_deadline/results.csv).")
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for validation.json and data_docs/.")
@click.option("--suites", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Folder of GX suites (default: schemas/expectations).")
@click.option("--no-data-docs", is_flag=True, help="Skip building the GX Data Docs site.")
@output_format
@exit_zero
def audit(verified_path, post_deadline_path, out, suites, no_data_docs, output, exit_zero):
    """Run the Great Expectations suites over the verified and post-deadline sets."""
    from contextlib import nullcontext

    from . import audit as audit_mod
    from .outputs import atomic_dir, write_json

    docs = None if no_data_docs else out / "data_docs"
    if docs is not None and docs.exists():
        if any(docs.iterdir()) and not (docs / "index.html").exists():
            raise UsageError(f"{docs} exists and is not a GX Data Docs site; not overwriting it")
    # the site is built beside the old one and swapped in whole (a killed run leaves the old one)
    with atomic_dir(docs) if docs is not None else nullcontext() as building:
        report = audit_mod.audit(verified_path, post_deadline_path, building, suites)
    write_json(report.to_dict(), out / "validation.json")
    _emit(output, report.summary(), report.suites, report.findings,
          lambda: [f"{'ok' if s['success'] else 'FAILED':<8}{s['suite']:<26}{s['runs_on']:<15}"
                   f"{s['expectations_loaded']:>3} expectations, {s['failed']} failed, {s['rows']} rows"
                   for s in report.suites]
          + [f"wrote {out / 'validation.json'}" + ("" if docs is None else f" and {docs}/index.html")])
    _exit(report.findings, exit_zero)


# --- crosscheck (issue 11): verified results against MLCommons' published tables ---
@cli.command()
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--published", "published_paths", multiple=True, required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A published MLCommons table (summary_results.json or the checker's summary.csv); "
                   "repeat for several rounds.")
@click.option("--tolerance-pct", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="A value within this many percent of the published one matches.")
@report_out_option
@output_format
@exit_zero
def crosscheck(results, published_paths, tolerance_pct, out, output, exit_zero):
    """Look up every verified result in the published table of its round."""
    from . import crosscheck as crosscheck_mod, table

    published, read_findings = crosscheck_mod.load_published(published_paths)
    report = crosscheck_mod.check(table.read(results), published, tolerance_pct)
    errors = [f for f in read_findings if f.severity == "error"]
    findings = report.findings + errors   # the published table's own warnings are not this check's
    rows = [{k: _clean(v) for k, v in r.items()} for r in report.rows]
    if out:
        _write_doc(out, report.summary, rows, findings)

    def lines():
        yield f"{'verdict':<15}{'deviation %':>12}  {'submitter':<22}{'system':<34}{'model':<17}{'scenario':<13}value"
        for r in rows:
            dev = "" if r["deviation_pct"] is None else f"{r['deviation_pct']:+.4f}"
            pub = "" if r["published_value"] is None else f" (published {r['published_value']:.10g})"
            yield (f"{r['verdict']:<15}{dev:>12}  {r['submitter'][:21]:<22}{str(r['system'])[:33]:<34}"
                   f"{r['model'][:16]:<17}{r['scenario']:<13}{r['value']:.10g}{pub}")
    _emit(output, report.summary, rows, findings, lines)
    _exit(findings, exit_zero)


def main() -> None:
    cli(prog_name="mlrepro")
