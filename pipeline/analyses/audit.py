"""Audit: Great Expectations suites over the verified and the post-deadline
sets. The only module of the project that imports great_expectations.

The suites are files (``schemas/expectations/*.json``, GX 1.x format) loaded
into an ephemeral context; each says which set it runs on
(``meta.mlrepro.runs_on``: ``verified``, ``post-deadline``, or ``both``, the
two stacked with a ``set`` column). GX logs and drops an expectation it
cannot build, so the expectations are counted after loading: a count that
differs from the file is a ConfigError, never a silently smaller suite.
Each frame gets one derived column, ``model_scenario_units``, checked
against the suite parameter ``units_keys`` (every pair the round rules
allow). A failed expectation is a finding (``expectation-failed``) naming
the file, the CSV lines and the column.

GX runs offline (analytics and progress bars off, no network). The audit
stage (:mod:`pipeline.stages.audit`) makes GX's Data Docs offline and stable;
nothing here writes a file but GX's own site builder.

The result is byte-identical for the same inputs: GX's random ids become
uuid5s of the inputs and the place in the result; its clock readings become
:data:`RUN_TIME` in validation.json and, in the Data Docs, the data's time
(:func:`validated_at`), never the run's.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from pipeline.core.rules import Rules, conform
from pipeline.core.errors import ConfigError
from pipeline.core.escape import csv_restore_frame
from pipeline.core.findings import Finding, Report, located
from pipeline.core.imports import deferred
from pipeline.core.model import POST_DEADLINE, VERIFIED, Source, typed_rows

SUITE_SCHEMA = "expectations.schema.json"   # every suite's shape (name, expectations, meta.mlrepro.runs_on)
SITE = "mlrepro"
# GX stamps runs with the clock; the audit pins every stamp of validation.json to this instant.
RUN_TIME = datetime(2000, 1, 1, tzinfo=timezone.utc)
VERSION_KEY = ("round", "submitter", "submission_version")   # a row's submission version (versions.csv)
ID_KEYS = ("id", "validation_id", "checkpoint_id", "expectation_suite_id")
TIME_KEYS = ("run_time", "validation_time", "ge_load_time")
# imported by GX for expectations our suites do not use (KL divergence, KS tests: scipy.stats,
# altair) and for markdown in Data Docs (mistune): loaded on first use only
# (pipeline.core.imports.deferred), so that the audit stage does not pay for them (without it,
# `make run` from scratch misses its goal: benchmarks/incremental.py). jsonschema is not among
# them: the rules' files are checked with it (pipeline.core.rules), so it is loaded already.
GX_DEFERRED = ("scipy.stats", "altair", "mistune")


@dataclass
class SuiteFile:
    path: Path
    name: str
    runs_on: str
    expectations: list[dict]
    meta: dict
    notes: object = None


def read_suite_files(rules: Rules, folder: Path | None = None) -> list[SuiteFile]:
    """Every ``*.json`` suite of the folder, checked for shape (not yet by GX)."""
    folder = Path(folder) if folder else rules.folder / "expectations"
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        raise ConfigError(f"no expectation suites (*.json) in {folder}")
    out = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read suite {path}: {exc}") from exc
        conform(path, text, data, SUITE_SCHEMA, rules.validator(SUITE_SCHEMA))
        meta = data["meta"]
        out.append(SuiteFile(path, data["name"], meta["mlrepro"]["runs_on"], data["expectations"], meta,
                             data.get("notes")))
    return out


def units_keys(rules: Rules) -> list[str]:
    """Every model|scenario|units the round rules allow."""
    return sorted(f"{m.name}|{scenario}|{unit}" for m in rules.models().values()
                  for scenario, units in m.units.items() for unit in units)


def read_set(path: Path) -> pd.DataFrame:
    """A results set as GX sees it: text columns, value as a number (a value
    that is not one becomes null and fails the suites), plus the derived key."""
    path = Path(path)
    try:
        if path.suffix == ".parquet":
            frame = pd.read_parquet(path).astype("object")
            frame = frame.where(frame.notna(), None)
        else:
            frame = csv_restore_frame(pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""]))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read results set {path}: {exc}") from exc
    frame = frame.reset_index(drop=True)
    if "value" in frame.columns:
        frame["value"] = pd.to_numeric(frame["value"], errors="coerce").astype("float64")
    if {"model", "scenario", "units"} <= set(frame.columns):
        frame["model_scenario_units"] = (frame["model"].astype("str") + "|" + frame["scenario"].astype("str")
                                         + "|" + frame["units"].astype("str"))
    return frame


@contextmanager
def _quiet_gx(messages: list[str]):
    """Route GX's log records into ``messages`` (no tracebacks on stderr)."""

    class Collect(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING:
                messages.append(f"{record.levelname}: {record.getMessage()}")

    logger = logging.getLogger("great_expectations")
    handler, saved = Collect(), (logger.propagate, logger.level)
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.removeHandler(handler)
        logger.propagate, logger.level = saved[0], saved[1]


def _context(docs_dir: Path | None):
    """An ephemeral GX context, offline; great_expectations imported with GX_DEFERRED deferred."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    with deferred(*GX_DEFERRED):
        import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig, InMemoryStoreBackendDefaults, ProgressBarsConfig)

    sites = {}
    if docs_dir is not None:
        sites[SITE] = {"class_name": "SiteBuilder", "show_how_to_buttons": False,
                       "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                                         "base_directory": str(Path(docs_dir).resolve())},
                       "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"}}
    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        analytics_enabled=False, data_docs_sites=sites,
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False))
    return gx.get_context(mode="ephemeral", project_config=config)


def load_suite(context, suite_file: SuiteFile, log: list[str]):
    """Build the GX suite from its file and add it to the context; the
    expectation count must survive both steps."""
    import great_expectations as gx

    before = len(log)
    try:
        suite = gx.ExpectationSuite(name=suite_file.name, expectations=suite_file.expectations,
                                    meta=suite_file.meta, notes=suite_file.notes)
        suite = context.suites.add(suite)
    except Exception as exc:  # GX raises pydantic, TypeError, its own errors for a bad entry
        raise ConfigError(f"{suite_file.path}: GX cannot load the suite: {type(exc).__name__}: "
                          f"{str(exc).splitlines()[0]}") from None
    if len(suite.expectations) != len(suite_file.expectations):
        in_file = [e.get("type") for e in suite_file.expectations if isinstance(e, dict)]
        loaded = [e.expectation_type for e in suite.expectations]
        dropped = [t for t in in_file if t not in loaded or in_file.count(t) > loaded.count(t)]
        raise ConfigError(f"{suite_file.path}: {len(suite_file.expectations)} expectations in the file, "
                          f"{len(suite.expectations)} after loading into GX (dropped: "
                          f"{sorted(set(map(str, dropped)))}; GX said: {' | '.join(log[before:]) or 'nothing'})")
    return suite


def validated_at(frames: list[pd.DataFrame], versions: Path) -> datetime:
    """The time of the validated data, in UTC: the newest ``submitted_at`` of the
    submission versions (``versions``: the ingest stage's table) that rows of
    ``frames`` come from, matched on round, submitter and version."""
    try:
        table = csv_restore_frame(pd.read_csv(versions, dtype=str, keep_default_na=False))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the versions table {versions}: {exc}") from exc
    missing = sorted({"round", "submitter", "version", "submitted_at"} - set(table.columns))
    if missing:
        raise ConfigError(f"{versions}: no column {', '.join(missing)} (the versions table of `mlrepro ingest "
                          "--versions-out`, data/versions.csv)")
    held = {(str(r), str(s), _version(v)) for frame in frames if set(VERSION_KEY) <= set(frame.columns)
            for r, s, v in zip(*(frame[c] for c in VERSION_KEY))}
    times = []
    for line, (r, s, v, when) in enumerate(zip(table["round"], table["submitter"], table["version"],
                                               table["submitted_at"]), start=2):
        if (r, s, _version(v)) in held:
            try:
                stamp = datetime.fromisoformat(when.replace("Z", "+00:00"))
            except ValueError:
                raise ConfigError(f"{versions}: line {line}, column submitted_at: expected an ISO 8601 time, "
                                  f"found {when!r}") from None
            times.append(stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc))
    if not times:
        raise ConfigError(f"{versions}: no version there holds a row of the two sets (matched on round, "
                          "submitter and submission_version)")
    return max(times).astimezone(timezone.utc)


def _version(value) -> str:
    """A version number as text (``2``, whether read as 2, 2.0 or "2")."""
    try:
        return str(int(float(value)))
    except (TypeError, ValueError):
        return str(value)


def audit(rules: Rules, verified: Path, post_deadline: Path, docs_dir: Path | None = None,
          suites_folder: Path | None = None, data_time: datetime = RUN_TIME) -> Report:
    """Run every suite on its set; failed expectations become findings; one
    row per suite; GX's results and log beside them. GX builds its Data Docs
    into ``docs_dir``, stamped DATA_TIME (the audit stage makes the site offline
    and stable: :mod:`pipeline.stages.audit`)."""
    suite_files = read_suite_files(rules, suites_folder)
    sets = {VERIFIED: (Path(verified), read_set(verified)),
            POST_DEADLINE: (Path(post_deadline), read_set(post_deadline))}
    # what each suite runs on: the frame, and (file, CSV line) of each of its rows
    targets = {name: (frame, [(path, i + 2) for i in range(len(frame))]) for name, (path, frame) in sets.items()}
    targets["both"] = (pd.concat([f.assign(set=name) for name, (_, f) in sets.items()], ignore_index=True),
                       targets[VERIFIED][1] + targets[POST_DEADLINE][1])
    suites, results, found, log = [], {}, [], []
    seed = hashlib.sha256(b"".join(Path(p).read_bytes() + b"\0" for p in [verified, post_deadline]
                                   + [s.path for s in suite_files])).hexdigest()
    with _quiet_gx(log):
        context = _context(docs_dir)
        source = context.data_sources.add_pandas("mlrepro")
        for suite_file in suite_files:
            frame, places = targets[suite_file.runs_on]
            suite = load_suite(context, suite_file, log)
            doc = pin(_validate(rules, context, source, suite, frame, data_time, with_docs=docs_dir is not None),
                      f"{seed}:{suite_file.name}")
            failed = [_finding(r, places, suite_file) for r in doc["results"] if not r["success"]]
            results[suite_file.name] = doc
            found.extend(failed)
            suites.append({
                "suite": suite_file.name, "file": _display(suite_file.path), "runs_on": suite_file.runs_on,
                "rows": len(frame), "expectations_in_file": len(suite_file.expectations),
                "expectations_loaded": len(suite.expectations), "success": bool(doc["success"]),
                "failed": len(failed), "statistics": doc["statistics"]})
    summary = {"suites": len(suites), "failed_suites": sum(not s["success"] for s in suites),
               "expectations": sum(s["expectations_loaded"] for s in suites),
               "failed_expectations": sum(s["failed"] for s in suites), "success": all(s["success"] for s in suites)}
    return Report(typed_rows("SuiteRow", suites), found, summary, {"gx_log": log, "results": results})


def pin(doc, seed: str, where: str = ""):
    """``doc`` with GX's random ids replaced by ids derived from ``seed`` and
    the key's place in the document, and every clock stamp by RUN_TIME."""
    if isinstance(doc, list):
        return [pin(v, seed, f"{where}/{i}") for i, v in enumerate(doc)]
    if not isinstance(doc, dict):
        return doc
    out = {}
    for key, value in doc.items():
        place = f"{where}/{key}"
        if key in ID_KEYS and isinstance(value, str):
            out[key] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"mlrepro-audit:{seed}:{place}"))
        elif key in TIME_KEYS and isinstance(value, str):
            out[key] = (RUN_TIME.strftime("%Y%m%dT%H%M%S.%fZ") if key == "ge_load_time"
                        else RUN_TIME.isoformat())
        else:
            out[key] = pin(value, seed, place)
    return out


def _validate(rules: Rules, context, source, suite, frame: pd.DataFrame, run_time: datetime, with_docs: bool) -> dict:
    """One checkpoint run of ``suite`` on ``frame``: the GX result as JSON."""
    import great_expectations as gx
    from great_expectations.checkpoint import UpdateDataDocsAction
    from great_expectations.core.run_identifier import RunIdentifier

    batch = source.add_dataframe_asset(suite.name).add_batch_definition_whole_dataframe("all")
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=suite.name, data=batch, suite=suite))
    actions = [UpdateDataDocsAction(name="data_docs", site_names=[SITE])] if with_docs else []
    checkpoint = context.checkpoints.add(gx.Checkpoint(
        name=suite.name, validation_definitions=[definition], actions=actions,
        result_format={"result_format": "COMPLETE"}))
    run = checkpoint.run(batch_parameters={"dataframe": frame},
                         expectation_parameters={"units_keys": units_keys(rules)},
                         run_id=RunIdentifier(run_name="mlrepro-audit", run_time=run_time))
    (result,) = run.run_results.values()
    return result.to_json_dict()


def _display(path: Path) -> str:
    """A path relative to the working folder when it lies under it (stable outputs)."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _finding(result: dict, places: list[tuple[Path, int]], suite_file: SuiteFile) -> Finding:
    """A failed expectation as a finding: file(s), CSV lines and column, the
    expectation with its arguments, and what GX found."""
    config = result["expectation_config"]
    kwargs = {k: v for k, v in config["kwargs"].items() if k not in ("batch_id", "result_format")}
    detail = result.get("result") or {}
    column = (f"{kwargs['column_A']} and {kwargs['column_B']}" if "column_A" in kwargs
              else kwargs.get("column") or ", ".join(kwargs.get("column_list") or []))
    where, lines = _where(detail.get("unexpected_index_list") or [], places, suite_file.runs_on)
    where = where.at(column=column or None)
    info = result.get("exception_info") or {}
    errors = ([info.get("exception_message")] if "raised_exception" in info
              else [v.get("exception_message") for v in info.values() if isinstance(v, dict)])
    errors = [e for e in errors if e]
    found = (f"could not be evaluated: {errors[0]}" if errors else
             repr(detail.get("partial_unexpected_list") or detail.get("details") or detail.get("observed_value")))
    shown = {k: (f"<{len(v)} allowed values>" if isinstance(v, list) and len(v) > 8 else v)
             for k, v in kwargs.items() if k not in ("column", "column_list")}
    check = (config.get("meta") or {}).get("check") or config["type"]
    return located("expectation-failed", where, f"{config['type']} {shown}" if shown else config["type"],
                   found, f"{suite_file.name}: {check}" + (f" (at {lines})" if lines else ""))


def _where(indexes: list, places: list[tuple[Path, int]], runs_on: str) -> tuple[Source, str]:
    """The first unexpected row's file and line, and every unexpected row as
    ``file:line`` (the whole set when GX names none)."""
    hits = [places[i] for i in indexes if isinstance(i, int) and 0 <= i < len(places)]
    if not hits:
        files = sorted({p.as_posix() for p, _ in places})
        return Source(" + ".join(files) or runs_on), ""
    shown = ", ".join(f"{p.name}:{line}" for p, line in hits[:20]) + (" ..." if len(hits) > 20 else "")
    return Source(hits[0][0].as_posix(), hits[0][1]), shown
