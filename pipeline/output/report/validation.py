"""The Great Expectations results (``audit/validation.json``, written by
``mlrepro audit``) rendered in the report, so that nobody needs the GX Data
Docs (whose styles come from CDNs: offline they show unstyled) to read them:
the values of ``validation.html.j2``."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.output.report.html import Row
from pipeline.output.report.load import Data


def _suites(doc: dict) -> list:
    """The suites (``suites`` in a document written before the one report shape)."""
    found = doc.get("rows") if "rows" in doc else doc.get("suites")
    return [s for s in found if isinstance(s, dict)] if isinstance(found, list) else []


def summary(doc: dict) -> dict:
    """suites, expectations, failed (numbers), from the summary or the suites."""
    suites = _suites(doc)
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


def _expectations(doc: dict) -> list[Row]:
    """Every expectation's result, the failed ones first (stable); print: the failed ones."""
    results = doc.get("results") if isinstance(doc.get("results"), dict) else {}
    rows = []
    for suite in sorted(results):
        run = results[suite] if isinstance(results[suite], dict) else {}
        for r in (x for x in run.get("results") or [] if isinstance(x, dict)):
            config = r.get("expectation_config") if isinstance(r.get("expectation_config"), dict) else {}
            meta = config.get("meta") if isinstance(config.get("meta"), dict) else {}
            ok = bool(r.get("success"))
            rows.append(Row({"suite": suite, "check": meta.get("check") or "", "type": config.get("type") or "",
                             "columns": _kwargs(config), "ok": ok, "outcome": _outcome(r)},
                            "" if ok else "bad", not ok))
    return sorted(rows, key=lambda row: row.item["ok"])


def view(data: Data, docs: Path | None, out: Path) -> dict:
    """The validation's tables; the Data Docs linked relatively from ``out``."""
    found = None if docs is None else {
        "rel": os.path.relpath(docs.resolve(), out.resolve().parent).replace(os.sep, "/"),
        "missing": "" if docs.exists() else " (not found when this report was written)"}
    if found and found["missing"]:
        data.notes.append(f"--data-docs {docs}: not found")
    doc = data.validation
    if doc is None:
        return {"missing": data.why.get("validation", ""), "docs": found}
    return {"missing": None, "docs": found, "summary": summary(doc),
            "suites": [Row(x, "" if x.get("success") else "bad") for x in _suites(doc)],
            "findings": [Row(f, "bad") for f in doc.get("findings") or [] if isinstance(f, dict)],
            "expectations": _expectations(doc)}
