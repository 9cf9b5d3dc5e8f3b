"""The Great Expectations results (``audit/validation.json``, written by
``mlrepro audit``) rendered in the report, so that nobody needs the GX Data
Docs (whose styles come from CDNs: offline they show unstyled) to read them."""

from __future__ import annotations

import os
from html import escape
from pathlib import Path

from pipeline.output.report.html import Cell, Table, verdict, wrap
from pipeline.output.report.load import Data


def _suites(doc: dict) -> list:
    """The suites: the rows of the report's one shape (``suites`` in a document
    written before it)."""
    found = doc.get("rows") if "rows" in doc else doc.get("suites")
    return found if isinstance(found, list) else []


def summary(doc: dict) -> dict:
    """suites, expectations, failed (numbers), from the summary or the suites."""
    suites = [s for s in _suites(doc) if isinstance(s, dict)]
    head = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
    expectations = head.get("expectations", sum(int(s.get("expectations_loaded") or 0) for s in suites))
    failed = head.get("failed_expectations", sum(int(s.get("failed") or 0) for s in suites))
    return {"suites": int(head.get("suites", len(suites))), "expectations": int(expectations),
            "failed": int(failed)}


def _kwargs(config: dict) -> str:
    """The columns an expectation looks at."""
    kwargs = config.get("kwargs") if isinstance(config.get("kwargs"), dict) else {}
    if "column_A" in kwargs:
        return f"{kwargs['column_A']}, {kwargs.get('column_B')}"
    if kwargs.get("column"):
        return str(kwargs["column"])
    if isinstance(kwargs.get("column_list"), list):
        return ", ".join(map(str, kwargs["column_list"]))
    if isinstance(kwargs.get("column_set"), list):
        return f"{len(kwargs['column_set'])} columns"
    return ""


def _outcome(result: dict) -> str:
    detail = result.get("result") if isinstance(result.get("result"), dict) else {}
    if result.get("success"):
        count = detail.get("element_count")
        return f"all {count}\u00a0rows" if count is not None else ""
    if detail.get("unexpected_count") is not None:
        shown = ", ".join(map(str, (detail.get("partial_unexpected_list") or [])[:5]))
        return (f"{detail['unexpected_count']} of {detail.get('element_count')} rows unexpected"
                + (f": {shown}" if shown else ""))
    return str(detail.get("observed_value") or "") [:200]


def _expectations(doc: dict) -> Table:
    table = Table("expectations", ["suite", "check", "expectation", "columns", "result", "rows"],
                  where_all=" and in validation.json")   # print: the failed ones
    results = doc.get("results") if isinstance(doc.get("results"), dict) else {}
    rows = []
    for suite in sorted(results):
        run = results[suite] if isinstance(results[suite], dict) else {}
        for r in run.get("results") or []:
            if not isinstance(r, dict):
                continue
            config = r.get("expectation_config") if isinstance(r.get("expectation_config"), dict) else {}
            meta = config.get("meta") if isinstance(config.get("meta"), dict) else {}
            ok = bool(r.get("success"))
            rows.append((ok, [Cell(escape(suite), suite, "nw"), wrap(meta.get("check") or ""),
                              wrap(config.get("type") or ""), wrap(_kwargs(config)),
                              Cell(verdict("met" if ok else "failed"), int(ok)), wrap(_outcome(r))]))
    for ok, cells in sorted(rows, key=lambda row: row[0]):          # the failed ones first (stable)
        table.add(cells, "" if ok else "bad", printed=not ok)
    return table


def section(data: Data, docs: Path | None, out: Path) -> str:
    doc = data.validation
    parts = ['<section id="validation"><h2>Validation of the two sets (Great Expectations)</h2>']
    if doc is None:
        parts.append(f'<p class="missing">{escape(data.why.get("validation", ""))}</p>')
    else:
        s = summary(doc)
        parts.append(f"<p>{s['expectations'] - s['failed']} of {s['expectations']} expectations met in "
                     f"{s['suites']} suite(s); {s['failed']} failed.</p>")
        suites = Table("suites", ["suite", "file", "runs on", "rows", "expectations", "failed", "result"],
                       numeric={3, 4, 5})
        for x in _suites(doc):
            if isinstance(x, dict):
                suites.add([wrap(x.get("suite")), wrap(x.get("file")), escape(str(x.get("runs_on") or "")),
                            str(x.get("rows", "")), str(x.get("expectations_loaded", "")), str(x.get("failed", "")),
                            verdict("met" if x.get("success") else "failed")], "" if x.get("success") else "bad")
        parts.append(suites.html())
        findings = Table("validation-findings", ["file", "place", "expected", "found", "message"])
        for f in doc.get("findings") or []:
            if isinstance(f, dict):
                findings.add([wrap(f.get(k)) for k in ("file", "place", "expected", "found", "message")], "bad")
        parts += ["<h3>Failed expectations</h3>", findings.html("None: every expectation is met."),
                  "<h3>Every expectation</h3>",
                  _expectations(doc).html("validation.json holds no per-expectation results.")]
    parts.append(_data_docs(docs, out, data))
    return "".join(parts) + "</section>"


def _data_docs(path: Path | None, out: Path, data: Data) -> str:
    if path is None:
        return ('<p class="small">The GX Data Docs are optional (<code>mlrepro audit</code> without '
                "<code>--no-data-docs</code>); this section holds the same results.</p>")
    rel = os.path.relpath(path.resolve(), out.resolve().parent).replace(os.sep, "/")
    missing = "" if path.exists() else " (not found when this report was written)"
    if missing:
        data.notes.append(f"--data-docs {path}: not found")
    return (f'<p class="small">The same results as GX Data Docs: <a href="{escape(rel)}">{escape(rel)}</a>'
            f"{escape(missing)} (they open offline, unstyled: their styles come from CDNs).</p>")
