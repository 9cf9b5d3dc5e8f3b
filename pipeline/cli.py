"""The ``mlrepro`` command line: click only. Parses options, calls the
library, renders its report (:mod:`pipeline.output.render`), maps it to an exit code.

One dialect for every command: inputs are positional (other inputs are
options); ``--format`` is the output format; ``-o/--output`` names the one
thing a command writes (``-`` is standard output where that is one file;
nothing is ever written to a file named ``-``); ``-q``/``-v``; filters take
only values the input can hold. The user's commands are listed first, the
DVC pipeline's stages apart.

Exit codes, here and nowhere else: 0 clean; 1 the data failed a check;
2 usage error; 3 configuration or environment problem; 4 internal error (a bug).
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import click

from pipeline.core.errors import ConfigError, DataError, UsageError
from pipeline.core.findings import Report, filtered
from pipeline.core.model import AUTO, STATUSES, VERIFIED
from pipeline.core.vocabulary import AgreementVerdict, ClaimVerdict, CrosscheckVerdict, ScalingVerdict, Severity
from pipeline.core import params
from pipeline.core.params import DEFAULT_FILE as DEFAULT_PARAMS
from pipeline.core.rules import Rules, round_order

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_CONFIG, EXIT_BUG = 0, 1, 2, 3, 4
EXIT_CODES = """\b
Exit codes:
  0  clean: every check held
  1  the data failed a check (the findings say where and why)
  2  usage error (an option, a path or a filter value)
  3  configuration or environment problem (schemas/, params, a file not writable)
  4  internal error: a bug, please report it"""
DEFAULT_VERSIONS = Path("data/versions.csv")
INPUT_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
INPUT_FOLDER = click.Path(exists=True, file_okay=False, path_type=Path)
FILE = click.Path(dir_okay=False, path_type=Path)
FOLDER = click.Path(file_okay=False, path_type=Path)
OUTPUT_FORMATS = ("text", "json", "junit", "github", "markdown", "csv")
STATUS_CHOICE = click.Choice([s.code for s in STATUSES])
SUBMIT_STATUS_CHOICE = click.Choice([AUTO, *(s.code for s in STATUSES)])

# `mlrepro --help`: what users run, in the order of their journeys; then the DVC pipeline's stages
USER_COMMANDS = ("submit", "validate", "gate", "compare", "claims", "record", "scaling", "crosscheck", "report",
                 "audit", "ingest")
STAGES = (  # (command, the stage it is)
    ("ingest-all", "the ingest stage: every submission into the canonical table"),
    ("compare", "with --verified-dir and --post-deadline-dir: the compare stage"),
    ("superseded", "the superseded stage: superseded versions judged, apart"),
    ("audit", "the audit stage: Great Expectations over the two sets"),
    ("report-all", "the report stage: metrics, claims, scaling, the HTML report"),
    ("partition", "the compare stage's split alone (verified, post-deadline)"),
    ("metrics", "the report stage's counts alone (dvc metrics show)"),
)


# ---- options shared by every command ----------------------------------------------------------

def options(*decorators):
    """One decorator of several options, listed in --help in this order."""
    def wrap(f):
        for decorate in reversed(decorators):
            f = decorate(f)
        return f
    return wrap


quiet_option = click.option("-q", "--quiet", is_flag=True, help="Print nothing; only the exit code speaks.")


def printed_options(fmt_help: str = "Output format of what is printed."):
    """--format, -q, -v: how much of the report is printed, and how."""
    return options(click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="text",
                                show_default=True, help=fmt_help), quiet_option,
                   click.option("-v", "--verbose", is_flag=True, help="Print every row and finding (no cap of 200)."))


def output_options(what: str = "the report"):
    """--format, -q, -v, and -o/--output (WHAT the command writes)."""
    return options(printed_options(), click.option(
        "-o", "--output", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path), metavar="FILE",
        help=f"Write {what} to FILE ('-': standard output, in --format). The extension names the format: .csv "
             "or .parquet (the rows), .json (with summary and findings), .xml (JUnit), .md, else text."))


exit_zero = click.option("--exit-zero", is_flag=True,
                         help="Record findings in the outputs but exit 0 (for DVC stages).")
params_option = click.option("--params", "params_path", type=FILE,
                             help=f"Parameters file (default {DEFAULT_PARAMS}, which may be absent: "
                                  "built-in defaults).")
tolerance_option = click.option("--tolerance-pct", type=float,
                                help="Agreement tolerance (default: compare.tolerance_pct in the parameters).")
reference_option = click.option("--reference-submitter",
                                help="Whose results are the reference (default: "
                                     "compare.reference_submitter in the parameters).")


def output_file(name: str, help: str):
    return click.option(name, type=FILE, required=True, help=help)


def filter_options(verdicts, *keys: str):
    """--verdict (a code of VERDICTS), and --submitter, --round of KEYS: keep the rows that match."""
    helps = {"submitter": "Only rows of this submitter (repeatable; one the input holds).",
             "round": "Only rows of this round (repeatable; one the input or schemas/rounds.yaml holds)."}

    return options(click.option("--verdict", "only_verdict", multiple=True,
                                type=click.Choice([v.code for v in verdicts], case_sensitive=False),
                                help="Only rows with this verdict (repeatable)."),
                   *(click.option(f"--{key}", f"only_{key}", multiple=True, help=helps[key]) for key in keys))


def registry_round(ctx, param, value):
    """A --round that schemas/rounds.yaml does not hold is a usage error (exit 2)."""
    if value is not None:
        try:
            refuse_unknown("round", [value], set(_rules(ctx).rounds()), "in schemas/rounds.yaml")
        except UsageError as exc:
            raise click.UsageError(str(exc), ctx) from None
    return value


def input_format_option(f):
    from pipeline.readers import FORMATS

    return click.option("--input-format", "input_fmt", type=click.Choice(list(FORMATS)),
                        help="Format of the input (detected when not given).")(f)


def _guard(inputs: dict, outputs: dict) -> None:
    """Refuse, before anything is written, an output that is an input or another output
    (a UsageError: _Command.invoke gives it the command's usage line)."""
    from pipeline.core.files import check_paths
    check_paths(inputs, outputs)


def _finish(report, fmt: str, output, quiet: bool, verbose: bool,
            columns: tuple[str, ...] = (), exit_zero_flag: bool = False, notes: list[str] = (),
            sealed: bool = False, gate: bool = False) -> None:
    """Write or print the report, then exit 1 when it holds an error finding (not when SEALED:
    its errors are what the gate will say). GATE: rendered in the gate's words. ``output``:
    None, a path (``-`` is stdout), or (format or None, path) pairs (the gate's ``-o [FORMAT=]PATH``)."""
    from pipeline.output import render
    from pipeline.output.render import write_report
    ctx = click.get_current_context()
    explicit = ctx.get_parameter_source("fmt") == click.core.ParameterSource.COMMANDLINE
    targets = output if isinstance(output, list) else [] if output is None else [(None, output)]
    files = [(name, path) for name, path in targets if str(path) != "-"]
    to_stdout = [name for name, path in targets if str(path) == "-" and name]
    for name, path in files:
        write_report(report, path, name or (fmt if explicit and path.suffix not in render.BY_EXTENSION
                                            and path.suffix != ".parquet" else None), gate)
    limit = None if verbose else render.TEXT_LIMIT
    if quiet:
        pass
    elif to_stdout:
        click.echo(render.render(report, to_stdout[-1], columns, limit, gate))
    elif fmt == "text" or not explicit:   # text: findings on stderr, the report on stdout
        for line in render.findings_lines(report, limit):
            click.echo(line, err=True)
        for note in notes:
            click.echo(note)
        if files:
            for _, path in files:
                click.echo(f"wrote {path}")
            click.echo(render.verdict_line(report, gate))
        else:
            click.echo(render.gate_text(report, with_findings=False) if gate
                       else render.text(report, columns, limit, with_findings=False))
        if exit_zero_flag:   # a stage: say that the findings above are the data's, not the tool's
            from pipeline.output.outcome import stage_line
            click.echo(stage_line(report, ctx.info_name))
    else:
        click.echo(render.render(report, fmt, columns, limit, gate))
    if not exit_zero_flag and not sealed and not report.ok:
        raise SystemExit(EXIT_FINDINGS)


# options that only the DVC pipeline's stages use: listed apart in a command's help
STAGE_OPTIONS = ("verified_dir", "post_deadline_dir", "summary_out", "exit_zero")


class _Command(click.Command):
    """A command whose help lists the pipeline stage's options apart and ends with the
    exit codes, and that takes ``-`` for a path only where it means standard output."""

    def __init__(self, *args, **kwargs):
        kwargs["epilog"] = kwargs.get("epilog") or EXIT_CODES
        super().__init__(*args, **kwargs)

    def format_options(self, ctx, formatter) -> None:
        rows = [(p.name in STAGE_OPTIONS, p.get_help_record(ctx)) for p in self.get_params(ctx)
                if not isinstance(p, click.Argument)]
        for title, stage in (("Options", False), ("Pipeline stage options (dvc.yaml)", True)):
            records = [record for is_stage, record in rows if record is not None and is_stage == stage]
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)

    def invoke(self, ctx):
        def dashes(value) -> bool:
            if isinstance(value, (list, tuple)):
                return any(dashes(v) for v in value)
            return value is not None and str(value) == "-"

        for param in self.params:
            kind = param.type.types[0] if isinstance(param.type, click.Tuple) else param.type
            if isinstance(kind, click.Path) and not kind.allow_dash and dashes(ctx.params.get(param.name)):
                what = "a folder" if not kind.file_okay else "a file"
                why = (f"(standard output) is not accepted here: {ctx.info_name} writes {what} here; name it"
                       if "-o" in param.opts else f"is not accepted here: name {what}")
                raise click.BadParameter(f"'-' {why}", ctx=ctx, param=param)
        try:
            return super().invoke(ctx)
        except UsageError as exc:   # the command's own usage line, not the group's
            raise click.UsageError(str(exc), ctx) from None


class _Group(click.Group):
    """Maps the library's exceptions to exit codes (CliRunner tests and the console
    script alike); lists the user's commands first and the pipeline's stages apart."""

    command_class = _Command

    def format_commands(self, ctx, formatter) -> None:
        limit = formatter.width   # short helps are one line each
        for title, names in (("Commands", USER_COMMANDS),
                             ("Other commands", [n for n in sorted(self.commands)
                                                 if n not in USER_COMMANDS and n not in dict(STAGES)])):
            rows = [(name, self.commands[name].get_short_help_str(limit)) for name in names if name in self.commands]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
        with formatter.section("Pipeline stages (dvc.yaml; `make run` runs them)"):
            formatter.write_dl(list(STAGES))

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            raise click.UsageError(str(exc), ctx) from None
        except DataError as exc:   # an unreadable or empty table is data failing a check
            raise _Fail(f"error: {exc.finding.render()}", EXIT_FINDINGS) from None
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


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES)
@click.version_option(package_name="mlrepro")
@click.option("--schemas", "schemas", type=FOLDER, envvar="MLREPRO_SCHEMAS",
              help="The rules folder (default: $MLREPRO_SCHEMAS, else the project's schemas/).")
@click.pass_context
def cli(ctx, schemas) -> None:
    """Validate MLPerf Inference partner results against the vendor's reference,
    keep verified and post-deadline results apart, and gate submissions in CI."""
    ctx.meta["schemas"] = schemas or None


def _rules(ctx: click.Context | None = None):
    """The rules of this invocation, loaded here once and passed down."""
    meta = (ctx or click.get_current_context()).meta
    return meta.setdefault("rules", Rules.load(meta.get("schemas")))


def check_filters(rules, wanted: dict[str, object], table) -> None:
    """Refuse (a usage error) a filter value the input cannot hold, so that a misspelled
    filter never passes quietly by matching nothing (a round may be one of schemas/rounds.yaml)."""
    for key, values in wanted.items():
        if not values or key not in getattr(table, "columns", ()):
            continue
        known = {str(v) for v in table[key].dropna().unique()}
        if key == "round":
            known |= set(rules.rounds())
        refuse_unknown(key, values, known, "in the input")


def refuse_unknown(key: str, values, known: set[str], where: str) -> None:
    """Refuse (UsageError) the first of ``values`` not in ``known``, listing the known
    ones (rounds newest first: the one a typo most likely meant; one differing in case named first)."""
    for value in map(str, values):
        if value in known:
            continue
        same = [k for k in sorted(known) if k.casefold() == value.casefold()]
        hint = f"did you mean {same[0]}? " if same else ""
        order = sorted(known, key=round_order, reverse=True) if key == "round" else sorted(known, key=str.casefold)
        listed = ", ".join(order) or "none"
        raise UsageError(f"--{key} {value}: no {key} of that name {where}; {hint}known: {listed}")


@cli.command(short_help="Seal a result file as your next version (--dry-run first).")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--submitter", required=True, help="Submitting organisation, e.g. Dell.")
@click.option("--round", "round_", required=True, callback=registry_round,
              help="MLPerf round, e.g. v6.0 (one of schemas/rounds.yaml).")
@click.option("--status", type=SUBMIT_STATUS_CHOICE, default=AUTO, show_default=True,
              help="auto: verified when sealed by the round's deadline (schemas/rounds.yaml), post-deadline "
                   "after it. verified after the deadline is refused (nothing written) unless --force.")
@click.option("--force", is_flag=True,
              help="Seal --status verified even after the round's deadline (it counts as post-deadline, "
                   "and the gate fails it).")
@click.option("--submitted-at", help="ISO-8601 time with zone (default: now, UTC, read when sealing).")
@input_format_option
@click.option("--root", type=FOLDER, default=Path("submissions"), show_default=True, help="Submissions root.")
@click.option("--notes", help="Free text kept in the manifest (e.g. where figures come from).")
@click.option("--withdraw", "withdraw_specs", multiple=True, metavar="SYSTEM:MODEL:SCENARIO:REASON",
              help="A result of the superseded version this version drops or moves (repeatable).")
@click.option("--dry-run", is_flag=True,
              help="Run every gate check on the would-be version (reference comparison included); "
                   "seal nothing.")
@params_option
@output_options("the report: the version sealed, or why not")
def submit(source, submitter, round_, status, force, submitted_at, input_fmt, root, notes, withdraw_specs,
           dry_run, params_path, fmt, output, quiet, verbose):
    """Seal SOURCE (a results file or a submission tree) as the next version
    ROOT/ROUND/SUBMITTER/v<N>, with its manifest; --dry-run runs every gate
    check on that version and seals nothing. Commit the new folder and open a
    pull request: the gate judges it (docs/partner.md)."""
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
    if params_path is not None and not params_path.exists():
        raise click.BadParameter(f"{params_path}: no such file", param_hint="--params")
    _guard({"SOURCE": source, "--params": params_path}, {"--output": output})
    from pipeline.gate import dryrun

    report = dryrun.submit(_rules(), source, submitter, round_, status, root, when, input_fmt, notes, withdraws,
                           params_path or DEFAULT_PARAMS, force, dry_run)
    created = report.summary.get("created")
    if dry_run:
        _finish(report, fmt, output, quiet, verbose, gate=True)
        return
    if created is None:   # nothing sealed, nothing judged: why not
        _finish(Report([], report.findings, {"created": None, "path": None, "status": None}), fmt, output, quiet,
                verbose, notes=["refused: nothing written"])
        return
    notes_ = [f"created {report.summary['path']} ({report.summary['status']})"]
    if not report.ok:   # sealed, and a pull request of it would fail: said now, not first by the CI
        notes_.append(f"warning: the gate will fail {created}: {len(report.errors)} error(s) above; "
                      "fix them and submit the next version")
    _finish(report, fmt, output, quiet, verbose, notes=notes_, sealed=True, gate=True)


_ingest_options = options(
    click.option("--root", type=FOLDER, default=None, help="Submissions root (default: found from the paths)."),
    click.option("--round", "round_", callback=registry_round,
                 help="Round of a raw file that does not state it (one of schemas/rounds.yaml)."),
    input_format_option)


RESULT_COLUMNS = ("status", "round", "submitter", "accelerator", "system", "model", "scenario", "value",
                  "source")   # the value carries its units


@cli.command(short_help="Read submissions or raw files into the canonical results table.")
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--status", type=STATUS_CHOICE,
              help="Status of raw files (manifests carry their own; a table in published/ is verified unless told).")
@click.option("--rejected-out", type=FILE, help="CSV of rejected and set-aside rows.")
@click.option("--findings-out", type=FILE, help="JSON of all findings.")
@click.option("--versions-out", type=FILE, help="CSV of versions, used or superseded.")
@_ingest_options
@output_options("the canonical results table")
@exit_zero
def ingest(sources, status, rejected_out, findings_out, versions_out, input_fmt, round_, root,
           fmt, output, quiet, verbose, exit_zero):
    """Read submissions (root, round, submitter or version folders) or raw files
    into the canonical results table: -o results.parquet (or .csv) writes it."""
    _guard({"SOURCE": list(sources)}, {"--output": output, "--rejected-out": rejected_out,
                                       "--findings-out": findings_out, "--versions-out": versions_out})
    from pipeline.ingest import submissions as ingest_mod
    report = ingest_mod.ingest(_rules(), list(sources), input_fmt, round_, status, root)
    from pipeline.core.files import write_json, write_table
    if rejected_out:
        write_table(report.dispositions_frame(), rejected_out)
    if findings_out:
        write_json([f.to_dict() for f in report.findings], findings_out)
    if versions_out:
        from pipeline.ingest.root import versions_frame

        write_table(versions_frame(report.versions), versions_out)
    _finish(report.report(), fmt, output, quiet, verbose, RESULT_COLUMNS, exit_zero)


@cli.command(short_help="Check submissions or raw files; change nothing.")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--status", type=STATUS_CHOICE, default=VERIFIED.code, show_default=True,
              help="Status assumed for raw files.")
@_ingest_options
@output_options("the report")
def validate(paths, status, input_fmt, round_, root, fmt, output, quiet, verbose):
    """Check submissions or raw files (manifests, hashes, formats, rows) without writing."""
    from pipeline.gate.validate import validate as check

    _guard({"PATH": list(paths)}, {"--output": output})
    _finish(check(_rules(), list(paths), input_fmt, round_, status, root), fmt, output, quiet, verbose, RESULT_COLUMNS)


def _on_table(results: Path, analyse, wanted: dict | None = None, **combine):
    """ANALYSE's report of the checked table RESULTS, the table's own findings first, filtered
    by WANTED (a filter value the table cannot hold refused first)."""
    from pipeline.ingest import table

    frame, found = table.load(_rules(), results)
    check_filters(_rules(), wanted or {}, frame)
    return filtered(analyse(frame).combine(before=found, **combine), wanted or {})


AGREEMENT_COLUMNS = ("verdict", "deviation_pct", "round", "submitter", "accelerator", "system", "model",
                     "scenario", "value", "reference_value", "label", "source")


@cli.command(short_help="Each partner result against the reference (± tolerance).")
@click.argument("results", type=INPUT_FILE)
@tolerance_option
@reference_option
@params_option
@click.option("--summary-out", type=FILE, help="JSON summary (per-partner rates).")
@click.option("--verified-dir", type=FOLDER,
              help="With --post-deadline-dir: also write the verified set of RESULTS and of the "
                   "agreement table here (results.csv, agreement.csv).")
@click.option("--post-deadline-dir", type=FOLDER,
              help="With --verified-dir: also write the post-deadline (unverified) set of RESULTS and of "
                   "the agreement table here (results.csv, agreement.csv).")
@click.option("--root", type=FOLDER, default=Path("submissions"),
              show_default=True, help="Submissions root the table's sources are relative to (findings "
                                      "name a submission's files under it, as given).")
@filter_options(AgreementVerdict, "submitter", "round")
@output_options("the agreement table (a verdict per partner result)")
@exit_zero
def compare(results, tolerance_pct, reference_submitter, params_path, summary_out, verified_dir, post_deadline_dir,
            root, only_verdict, only_submitter, only_round, fmt, output, quiet, verbose, exit_zero):
    """Compare each partner result with the reference submitter's (the ±tolerance
    agreement); -o agreement.csv writes the agreement table. With --verified-dir and
    --post-deadline-dir, split RESULTS and the agreement table into the two sets too
    (the DVC pipeline's compare stage)."""
    from pipeline.analyses import compare as compare_mod
    from pipeline.core.files import write_json
    from pipeline.ingest import table
    from pipeline.stages import compare as stage

    if (verified_dir is None) != (post_deadline_dir is None):
        raise click.UsageError("--verified-dir and --post-deadline-dir go together")
    p = params.compare(params_path, tolerance_pct, reference_submitter)
    sets = {} if verified_dir is None else {
        f"{option} {name}.csv": folder / f"{name}.csv"
        for option, folder in (("--verified-dir", verified_dir), ("--post-deadline-dir", post_deadline_dir))
        for name in ("results", "agreement")}
    _guard({"RESULTS": results, "--params": params_path},
           {"--output": output, "--summary-out": summary_out, **sets})
    frame, found = table.load(_rules(), results)
    check_filters(_rules(), {"submitter": only_submitter, "round": only_round}, frame)
    if sets:
        agreement_display = output.as_posix() if output is not None and str(output) != "-" else "<agreement>"
        agreement, report, wrote = stage.run(_rules(), frame, p, verified_dir, post_deadline_dir, results.as_posix(),
                                             agreement_display)
        notes = [wrote]
    else:
        notes, agreement = [], compare_mod.compare(_rules(), frame, p.tolerance_pct, p.reference_submitter,
                                                   p.reference_vendor)
        report = agreement
    # the table's findings first; findings name the table's files under the submissions root, as given
    report = report.combine(before=found, prefix=root.as_posix())
    if summary_out:
        write_json(agreement.summary, summary_out)
    report = filtered(report, {"verdict": only_verdict, "submitter": only_submitter, "round": only_round})
    _finish(report, fmt, output, quiet, verbose, AGREEMENT_COLUMNS, exit_zero, notes)


@cli.command(short_help="Split a table into the verified and post-deadline sets.")
@click.argument("results", type=INPUT_FILE)
@output_file("--verified-out", "The verified set (CSV or Parquet).")
@output_file("--post-deadline-out", "The post-deadline (unverified) set.")
@output_options("the report")
@exit_zero
def partition(results, verified_out, post_deadline_out, fmt, output, quiet, verbose, exit_zero):
    """Split a table by status into the verified and the post-deadline (unverified) sets."""
    from pipeline.analyses import partition as partition_mod
    from pipeline.core.model import UNVERIFIED_FOOTNOTE
    from pipeline.core.files import write_table
    _guard({"RESULTS": results}, {"--verified-out": verified_out, "--post-deadline-out": post_deadline_out,
                                  "--output": output})
    sets = partition_mod.partition(partition_mod.read_with_status(results), results.as_posix())
    write_table(sets.verified, verified_out)
    write_table(sets.post_deadline, post_deadline_out)
    _finish(sets.report(), fmt, output, quiet, verbose, notes=[
        f"wrote {verified_out} ({len(sets.verified)} verified)",
        f"wrote {post_deadline_out} ({len(sets.post_deadline)} unverified: {UNVERIFIED_FOOTNOTE})"],
        exit_zero_flag=exit_zero)


@cli.command("ingest-all", short_help="The ingest stage: every submission into the canonical table.")
@click.argument("root", type=INPUT_FOLDER)
@output_file("--rejected-out", "CSV of rejected and set-aside rows.")
@output_file("--findings-out", "JSON of every recorded finding.")
@output_file("--versions-out", "CSV of versions, used or superseded.")
@click.option("--cache", type=FOLDER,
              help="Folder of per-submitter outputs, reused while a submitter's files, "
                   "the code and schemas/ are unchanged (DVC pipeline: .cache/ingest).")
@output_options("the canonical results table")
@exit_zero
def ingest_all(root, rejected_out, findings_out, versions_out, cache, fmt, output, quiet, verbose, exit_zero):
    """Read every <round>/<submitter> folder of a submissions ROOT, one submitter
    at a time, into one canonical table (the DVC pipeline's ingest stage);
    -o results.parquet writes the table."""
    from pipeline.stages import ingest as stage

    _guard({"ROOT": root, "--cache": cache}, {"--output": output, "--rejected-out": rejected_out,
                                              "--findings-out": findings_out, "--versions-out": versions_out})
    report = stage.run(_rules(), root, cache, rejected_out, findings_out, versions_out)
    _finish(report, fmt, output, quiet, verbose, exit_zero_flag=exit_zero)


@cli.command(short_help="The superseded stage: the verdicts of superseded versions, kept apart.")
@click.argument("root", type=INPUT_FOLDER)
@click.option("--results", type=INPUT_FILE, required=True,
              help="The canonical table (data/results.parquet): the references judged against.")
@click.option("--versions", type=INPUT_FILE, required=True,
              help="The versions table of the ingest stage (data/versions.csv).")
@tolerance_option
@reference_option
@params_option
@output_options("the superseded results with their verdicts (CSV)")
@exit_zero
def superseded(root, results, versions, tolerance_pct, reference_submitter, params_path, fmt, output, quiet,
               verbose, exit_zero):
    """Read each superseded version of a submissions ROOT (versions.csv: used false)
    and judge its results against today's references, apart from the current
    verdicts: which version superseded each, and whether it withdrew it (with the
    manifest's reason), replaced it or left it out; -o superseded.csv writes them."""
    from pipeline.stages import superseded as stage

    _guard({"ROOT": root, "--results": results, "--versions": versions, "--params": params_path},
           {"--output": output})
    p = params.compare(params_path, tolerance_pct, reference_submitter)
    report = stage.run(_rules(), root, results, versions, p)
    _finish(report, fmt, output, quiet, verbose, exit_zero_flag=exit_zero)


# ---- gate and report ----------------------------------------------------------------------

@cli.command(short_help="Judge a pull request's new versions with the base's policy.")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--base", help="Git ref of the base branch: the change since its merge base with HEAD is "
                             "judged merged into its tip, with the tip's policy (default: "
                             "origin/$GITHUB_BASE_REF when set, else origin/HEAD, else main, else master).")
@click.option("--root", type=click.Path(path_type=Path), default=Path("submissions"),
              show_default=True, help="Submissions root.")
@click.option("--params", "params_path", type=FILE,
              help=f"Parameters file inside the repository, read as it is at the git base (default "
                   f"{DEFAULT_PARAMS}; absent there: built-in defaults).")
@click.option("--allow-maintenance", "--allow-policy-change", "allow_maintenance", is_flag=True,
              help="The maintainers' label is on the change: a maintenance change (any path that is "
                   "not a new partner version: policy, the tool, a reference version, ...) passes unless "
                   "it also holds a submission, and every shipped result whose verdict or status it "
                   "flips is listed.")
@click.option("--worktree", is_flag=True,
              help="Judge the working tree (uncommitted and untracked files included, the pipeline's "
                   "outputs left out) instead of the HEAD commit.")
@click.option("-o", "--output", "outputs", multiple=True, metavar="[FORMAT=]PATH",
              help="Write the report to PATH (format from its extension, or FORMAT=PATH: "
                   "json, junit, github, markdown, csv, text; '-' is stdout). Repeatable: one run "
                   "writes every format (-o junit=gate.xml -o markdown=summary.md).")
@printed_options("Output format of the report.")
def gate(paths, base, root, params_path, allow_maintenance, worktree, outputs, fmt, quiet, verbose):
    """Gate the change from the git base to the HEAD commit, as git stores both:
    a submission (new version folders of one partner) or, with the maintainers'
    label, a maintenance change; or the version folders PATHS. Judged with the
    base's policy (params.yaml, schemas/, published/). Exit 0 when all hold, 1
    when anything fails."""
    from pipeline.gate import judge as gate_mod

    targets = []
    for spec in outputs:
        name, sep, path = spec.partition("=")
        if sep and name in OUTPUT_FORMATS:
            targets.append((name, Path(path)))
        elif sep and name.isidentifier() and name.islower():
            raise click.BadParameter(f"{name!r}: one of {list(OUTPUT_FORMATS)}", param_hint="--output")
        else:
            targets.append((None, Path(spec)))
    _guard({"PATH": list(paths), "--params": params_path or DEFAULT_PARAMS},
           {"--output": [p for _, p in targets]})
    report = gate_mod.run(_rules(), list(paths), root, base, params_path or DEFAULT_PARAMS,
                          allow_maintenance=allow_maintenance, worktree=worktree)
    _finish(report, fmt, targets, quiet, verbose, gate=True)


report_inputs = options(
    click.argument("results", type=INPUT_FILE),
    click.option("--agreement", type=INPUT_FILE, required=True,
                 help="Agreement table of `mlrepro compare` (data/agreement.csv)."),
    click.option("--rejected", type=INPUT_FILE, required=True, help="Rejected and set-aside inputs (data/rejected.csv)."),
    click.option("--versions", type=INPUT_FILE, required=True,
                 help="Submission versions, used or superseded (data/versions.csv)."),
    click.option("--superseded", type=INPUT_FILE,
                 help="The superseded versions' results with their verdicts (data/superseded.csv of "
                      "`mlrepro superseded`): the report shows them and each withdrawal."))


def report_outputs(stdout: bool):
    """The HTML report (-o; '-' is standard output when STDOUT) and the data of its deviation plot."""
    return options(click.option("--plot-data", type=FILE,
                                help="CSV for `dvc plots` (default: deviation.csv beside the report)."),
                   click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=stdout, path_type=Path),
                                required=True, metavar="FILE",
                                help="Write the HTML report (one self-contained file) to FILE"
                                     + ("; '-' is standard output (the plot data then only with --plot-data)."
                                        if stdout else ".")))


@cli.command(short_help="Write the offline HTML report of a compared table.")
@report_inputs
@click.option("--scaling", type=FILE,
              help="JSON of `mlrepro scaling RESULTS -o scaling.json` (section notes when absent).")
@click.option("--claims", type=FILE, help="JSON of `mlrepro claims CLAIMS.yaml RESULTS -o claims.json`.")
@click.option("--validation", type=FILE,
              help="JSON of `mlrepro audit` (audit/validation.json), rendered in the report.")
@click.option("--data-docs", type=click.Path(path_type=Path),
              help="GX Data Docs index, linked relatively (optional: the report renders --validation).")
@report_outputs(stdout=True)
@params_option
@quiet_option
def report(results, agreement, rejected, versions, superseded, scaling, claims, validation, data_docs, plot_data,
           output, params_path, quiet):
    """Write the human report RESULTS -> one offline HTML file with tables and HTML/CSS plots."""
    from pipeline.output import report as report_mod
    from pipeline.core.files import write_table, write_text
    to_stdout = str(output) == "-"
    if plot_data is None and not to_stdout:
        plot_data = output.parent / "deviation.csv"
    _guard({"RESULTS": results, "--agreement": agreement, "--rejected": rejected, "--versions": versions,
            "--superseded": superseded, "--scaling": scaling, "--claims": claims, "--validation": validation, "--params": params_path},
           {"--output": output, "--plot-data": plot_data})
    p = params.compare(params_path)   # partners: results on p.reference_vendor's accelerators
    doc = report_mod.build(_rules(), report_mod.Inputs(results, agreement, rejected, versions, scaling, claims,
                                                       data_docs, validation, p.reference_vendor, superseded),
                           output, p.tolerance_pct)
    if to_stdout:
        click.echo(doc.html, nl=False)
    else:
        write_text(doc.html, output)
    if plot_data is not None:
        write_table(doc.deviation, plot_data)
    if not quiet:
        for note in doc.notes:
            click.echo(f"warning: {note}", err=True)
        wrote = [str(p) for p in (None if to_stdout else output, plot_data) if p is not None]
        if wrote:
            click.echo(f"wrote {' and '.join(wrote)}", err=to_stdout)


@cli.command(short_help="Write the pipeline's counts (dvc metrics show).")
@click.argument("results", type=INPUT_FILE)
@click.option("--agreement", type=INPUT_FILE, required=True, help="Agreement table of `mlrepro compare`.")
@click.option("--rejected", type=INPUT_FILE, required=True, help="Rejected and set-aside inputs.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              metavar="FILE", help="Write metrics.json (accepted, rejected and set-aside rows) to FILE; "
                                   "'-' (or no -o) is standard output.")
@click.option("--details-out", type=FOLDER,
              help="Folder of the agreement counts per status, round and partner (default: OUTPUT "
                   "without .json, e.g. metrics/; none when OUTPUT is stdout).")
@quiet_option
def metrics(results, agreement, rejected, output, details_out, quiet):
    """Write the pipeline's metrics of RESULTS (counts per set, agreement per status, round and
    partner) for `dvc metrics show`."""
    import json

    from pipeline.analyses import metrics as metrics_mod
    from pipeline.stages.report import write_metrics

    to_file = output is not None and str(output) != "-"
    if details_out is None and to_file:
        details_out = output.with_suffix("")
    _guard({"RESULTS": results, "--agreement": agreement, "--rejected": rejected}, {"--output": output})
    data = metrics_mod.compute(results, agreement, rejected)
    write_metrics(data, output if to_file else None, details_out)
    if quiet:
        return
    if not to_file:
        click.echo(json.dumps(data.totals, indent=2))
        return
    click.echo(f"wrote {output}")
    for name, counts in data.files.items():
        if name.count("/") < 2:
            click.echo(f"{(details_out / name).as_posix()}: "
                       + ", ".join(f"{k}={v}" for k, v in counts.items()))


# ---- scaling, claims, audit ---------------------------------------------------------------

SCALING_COLUMNS = ("verdict", "efficiency_pct", "round", "submitter", "system", "model", "scenario",
                   "total_accelerators", "value", "expected", "label", "source")
CLAIM_COLUMNS = ("verdict", "claimed", "computed", "id", "kind", "label")


@cli.command(short_help="Scaling efficiency of every multi-node result.")
@click.argument("results", type=INPUT_FILE)
@reference_option
@params_option
@filter_options(ScalingVerdict, "submitter", "round")
@output_options("the scaling table (an efficiency per multi-node result)")
def scaling(results, reference_submitter, params_path, only_verdict, only_submitter, only_round,
            fmt, output, quiet, verbose):
    """Scaling efficiency of every multi-node result against single-node references."""
    from pipeline.analyses import scaling as scaling_mod

    ref = params.compare(params_path, reference_submitter=reference_submitter).reference_submitter
    _guard({"RESULTS": results, "--params": params_path}, {"--output": output})
    report = _on_table(results, lambda frame: scaling_mod.scaling(_rules(), frame, ref),
                       {"verdict": only_verdict, "submitter": only_submitter, "round": only_round})
    _finish(report, fmt, output, quiet, verbose, SCALING_COLUMNS)


RECORD_COLUMNS = ("submitter", "accelerator", "round", "compared", "agree", "deviates", "no_reference",
                  "worst_deviation_pct")


@cli.command(short_help="Each partner's agreement across rounds and generations.")
@click.argument("results", type=INPUT_FILE)
@tolerance_option
@reference_option
@params_option
@output_options("the record (a row per partner, accelerator generation and round)")
def record(results, tolerance_pct, reference_submitter, params_path, fmt, output, quiet, verbose):
    """Each partner's record: per accelerator generation and round, its verified results
    compared with the reference, how many within the tolerance, and the worst deviation
    (a row per partner and generation over every round too)."""
    from pipeline.analyses import record as record_mod
    p = params.compare(params_path, tolerance_pct, reference_submitter)
    _guard({"RESULTS": results, "--params": params_path}, {"--output": output})
    report = _on_table(results, lambda frame: record_mod.partner_record(
        _rules(), frame, p.tolerance_pct, p.reference_submitter, p.reference_vendor))
    _finish(report, fmt, output, quiet, verbose, RECORD_COLUMNS)


@cli.command(short_help="Recompute the claims of a ledger (claims.yaml).")
@click.argument("ledger", type=INPUT_FILE)
@click.argument("results", type=INPUT_FILE)
@reference_option
@params_option
@filter_options(ClaimVerdict)
@output_options("the claims table (a verdict per claim)")
@exit_zero
def claims(ledger, results, reference_submitter, params_path, only_verdict, fmt, output, quiet, verbose,
           exit_zero):
    """Recompute the claims of a ledger (claims.yaml) from a results table."""
    from pipeline.analyses import claims as claims_mod, ledger as ledger_mod
    p = params.compare(params_path, reference_submitter=reference_submitter)
    _guard({"LEDGER": ledger, "RESULTS": results, "--params": params_path}, {"--output": output})
    book = ledger_mod.read_ledger(_rules(), ledger)
    report = _on_table(results, lambda frame: claims_mod.check_claims(
        _rules(), book, frame, p.reference_submitter, p.reference_vendor), {"verdict": only_verdict})
    _finish(report, fmt, output, quiet, verbose, CLAIM_COLUMNS, exit_zero)


@cli.command(short_help="Great Expectations over the verified and post-deadline sets.")
@click.argument("verified_path", metavar="VERIFIED", type=INPUT_FILE)
@click.argument("post_deadline_path", metavar="POST_DEADLINE", type=INPUT_FILE)
@click.option("-o", "--output", "out_dir", type=FOLDER, required=True,
              metavar="DIR", help="Write validation.json (the report, JSON) and data_docs/ into the folder DIR.")
@click.option("--suites", type=INPUT_FOLDER, help="Folder of GX suites (default: schemas/expectations).")
@click.option("--no-data-docs", is_flag=True, help="Skip building the GX Data Docs site.")
@click.option("--versions", type=FILE,
              help=f"Submission versions (default {DEFAULT_VERSIONS}, the ingest stage's): the Data Docs show "
                   "the newest submitted_at of the versions the sets hold as the data's time.")
@printed_options("Output format of the report printed.")
@exit_zero
def audit(verified_path, post_deadline_path, out_dir, suites, no_data_docs, versions, fmt, quiet, verbose,
          exit_zero):
    """Run the Great Expectations suites over the VERIFIED and POST_DEADLINE sets."""
    from pipeline.stages import audit as stage

    validation = out_dir / stage.VALIDATION
    _guard({"VERIFIED": verified_path, "POST_DEADLINE": post_deadline_path},
           {"validation.json": validation})
    docs = None if no_data_docs else out_dir / "data_docs"
    versions = versions or (DEFAULT_VERSIONS if docs is not None and DEFAULT_VERSIONS.is_file() else None)
    if docs is not None and (versions is None or not versions.is_file()):
        raise click.UsageError(f"the Data Docs show the time of the validated data, from the versions table: "
                               f"{versions or DEFAULT_VERSIONS} is not a file; give --versions (the ingest "
                               "stage's data/versions.csv) or --no-data-docs", click.get_current_context())
    if docs is not None and docs.exists():
        if any(docs.iterdir()) and not (docs / "index.html").exists():
            raise UsageError(f"{docs} exists and is not a GX Data Docs site; not overwriting it")
    report = stage.run(_rules(), verified_path, post_deadline_path, out_dir, suites, docs, versions)
    _finish(report, fmt, None, quiet, verbose, ("suite", "runs_on", "success", "expectations_loaded",
                                                  "failed", "rows"), exit_zero,
            notes=[f"wrote {validation}" + ("" if docs is None else f" and {docs}/index.html")])


# ---- crosscheck: verified results against MLCommons' published tables ---------------------

CROSSCHECK_COLUMNS = ("verdict", "deviation_pct", "round", "submitter", "system", "model", "scenario",
                      "value", "published_value", "source")


@cli.command(short_help="Verified results against MLCommons' published tables.")
@click.argument("results", type=INPUT_FILE)
@click.option("--published", "published_paths", multiple=True, required=True,
              type=INPUT_FILE,
              help="A published MLCommons table (summary_results.json or the checker's summary.csv); "
                   "repeat for several rounds.")
@click.option("--tolerance-pct", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="A value within this many percent of the published one matches.")
@filter_options(CrosscheckVerdict, "submitter", "round")
@output_options("the crosscheck table (a verdict per verified result)")
@exit_zero
def crosscheck(results, published_paths, tolerance_pct, only_verdict, only_submitter, only_round, fmt, output,
               quiet, verbose, exit_zero):
    """Look up every verified result of RESULTS in the published table of its round."""
    from pipeline.analyses import crosscheck as crosscheck_mod

    _guard({"RESULTS": results, "--published": list(published_paths)}, {"--output": output})
    published, read_findings = crosscheck_mod.load_published(_rules(), published_paths)
    # the published table's own warnings are not this check's; its errors are
    report = _on_table(results, lambda frame: crosscheck_mod.check(frame, published, tolerance_pct),
                       {"verdict": only_verdict, "submitter": only_submitter, "round": only_round},
                       after=[f for f in read_findings if f.severity == Severity.ERROR])
    _finish(report, fmt, output, quiet, verbose, CROSSCHECK_COLUMNS, exit_zero)


# ---- the report stage: everything reported from the compared table -------------------------

@cli.command("report-all", short_help="The report stage: every report of a compared table.")
@report_inputs
@click.option("--validation", type=FILE,
              help="JSON of `mlrepro audit` (audit/validation.json), rendered in the report.")
@click.option("--ledger", type=INPUT_FILE, required=True, help="The claims ledger (claims.yaml).")
@output_file("--claims-out", "The claims recomputed (audit/claims.json).")
@output_file("--scaling-out", "The scaling efficiencies (audit/scaling.json).")
@click.option("--record-out", type=FILE,
              help="The partners' record across rounds (audit/record.json), as `mlrepro record` gives it.")
@click.option("--crosscheck", "crosschecks", nargs=2, multiple=True, metavar="PUBLISHED OUT",
              type=FILE,
              help="A published MLCommons table and where its crosscheck goes (repeatable).")
@output_file("--metrics-out", "metrics.json (dvc metrics show).")
@click.option("--details-out", type=FOLDER,
              help="Folder of the agreement counts per status, round and partner (default: "
                   "--metrics-out without .json, e.g. metrics/).")
@report_outputs(stdout=False)
@params_option
@printed_options("Output format of the report printed (one row per step).")
@exit_zero
def report_all(results, agreement, rejected, versions, superseded, validation, ledger, claims_out, scaling_out,
               record_out, crosschecks, metrics_out, details_out, plot_data, output, params_path, fmt, quiet, verbose,
               exit_zero):
    """Everything reported from a compared table (the DVC pipeline's report stage):
    metrics, claims, scaling, the crosscheck against each published table, then the
    HTML report of them and the data of `dvc plots`."""
    from pipeline.stages import report as stage

    p = params.compare(params_path)
    paths = stage.Paths(results, agreement, rejected, versions, ledger, validation, claims_out, scaling_out,
                        metrics_out, details_out or metrics_out.with_suffix(""), output,
                        plot_data or output.parent / "deviation.csv", [tuple(pair) for pair in crosschecks],
                        superseded, record_out)
    _guard({**paths.inputs(), "--params": params_path}, paths.outputs())
    report, notes = stage.report_all(_rules(), paths, p.reference_submitter, p.reference_vendor, p.tolerance_pct)
    if not quiet:
        for note in notes:   # an input the HTML report could not use
            click.echo(f"warning: {note}", err=True)
    _finish(report, fmt, None, quiet, verbose, ("step", "wrote", "summary"), exit_zero)


def main() -> None:
    cli(prog_name="mlrepro")
