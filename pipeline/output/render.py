"""Writing any report: text, json, junit, github, markdown or csv.

Every function takes a report of the one shape (:class:`pipeline.core.findings.ReportShape`:
``summary``, ``rows``, ``findings``, ``files``) and returns text; nothing here prints or
exits. The gate's report (and submit's, judged as the gate judges) has the
versions, withdrawals and flips in its summary: the command that made it says
so (``gate=True``), and its text, markdown and JUnit are the gate's.
Standard library only (the gate starts fast), except ``csv`` of a typed table.

``json`` is ``report.to_dict()``: the document ``--format json`` prints is the
one ``-o x.json`` writes. Every string goes out through the escaper of its
format (:mod:`pipeline.core.escape`): a line of text is one line, a CSV cell
is never a formula, partner text in markdown stays in its code span.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from pipeline.core import escape
from pipeline.core.files import write_table, write_text
from pipeline.core.findings import Finding
from pipeline.core.model import (AGREE, DEVIATES, EXCLUDED, LABEL_UNVERIFIED, NO_REFERENCE, REJECTED, SET_ASIDE,
                                 UNVERIFIED_FOOTNOTE, Source, plain)
from pipeline.core.vocabulary import Severity, label as word, tally
from pipeline.output.figures import claim_figure, pct, quantity, signed_pct
from pipeline.store.versions import Version

FORMATS = ("text", "json", "junit", "github", "markdown", "csv")
# -o PATH: the format its extension names (.csv and .parquet write the table itself)
BY_EXTENSION = {".json": "json", ".xml": "junit", ".md": "markdown", ".csv": "csv", ".txt": "text"}
TEXT_LIMIT = 200  # text shows this many findings and rows; the other formats hold all
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def findings_lines(report, limit: int | None = TEXT_LIMIT) -> list[str]:
    """At most ``limit`` findings, then how many more there are (only those shown are built)."""
    lines = [escape.text(f"{f.severity}: {f.render()}") for f in report.findings_head(limit)]
    return _more(lines, report.finding_count(), "findings")


def render(report, fmt: str, columns: tuple[str, ...] | None = None, limit: int | None = TEXT_LIMIT,
           gate: bool = False) -> str:
    """REPORT in FMT; GATE: a gated report (:mod:`pipeline.gate.judge`), in the gate's own words."""
    if fmt == "text":
        return gate_text(report) if gate else text(report, columns, limit)
    if fmt in ("junit", "github", "markdown"):
        return {"junit": junit, "github": github, "markdown": markdown}[fmt](report, gate=gate)
    return as_csv(report) if fmt == "csv" else as_json(report)


# ---- text ---------------------------------------------------------------------------------

def _cell_text(value: object) -> str:
    value = plain(value)
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return escape.text(value)


# columns a terminal shows as figures (rounded, with their units), as the HTML report does;
# the raw values stay in the json, csv and parquet outputs
FIGURES = {
    "deviation_pct": lambda r: signed_pct(r.get("deviation_pct")),
    "efficiency_pct": lambda r: pct(r.get("efficiency_pct")),
    **{c: (lambda r, c=c: quantity(r.get(c), r.get("units")))
       for c in ("value", "reference_value", "published_value", "expected")},
    **{c: (lambda r, c=c: claim_figure(r, c)) for c in ("claimed", "computed")},
}


# columns whose values are words of the vocabulary: shown by their labels, as every format shows them
WORDS = ("verdict", "outcome")


def table_lines(rows: list[dict], columns: tuple[str, ...]) -> list[str]:
    """An aligned table; a column is as wide as its widest cell (identifiers are
    never cut); figures are rounded, carry their units and align right; a
    verdict or an outcome is its label."""
    cells = [[escape.text(FIGURES[c](r)) if c in FIGURES else word(r[c]) if c in WORDS and r.get(c) is not None
              else _cell_text(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]

    def line(values) -> str:
        return "  ".join(v.rjust(w) if c in FIGURES else v.ljust(w)
                         for c, v, w in zip(columns, values, widths)).rstrip()

    return [line(columns)] + [line(row) for row in cells]


def summary_line(report) -> str:
    parts = [f"{k}={_cell_text(v)}" for k, v in report.summary.items()
             if v is not None and not isinstance(v, (dict, list))]
    parts += [f"findings={report.finding_count()}", f"errors={report.error_count()}"]
    return "summary: " + ", ".join(parts)


def text(report, columns: tuple[str, ...] | None = None, limit: int | None = TEXT_LIMIT,
         with_findings: bool = True) -> str:
    """Findings (``severity: file: place: [code] message``), the rows as a table
    (``columns``; none: no table), the MLCommons footnote when a row is
    unverified, and a summary line. At most ``limit`` findings and rows."""
    lines = findings_lines(report, limit) if with_findings else []
    if columns:
        rows = report.rows_head(limit)   # columns as wide as the widest cell shown
        if rows:
            lines += _more(table_lines(rows, columns), report.row_count() + 1, "rows")
    if report.any_unverified():
        lines.append(f"{LABEL_UNVERIFIED}: {UNVERIFIED_FOOTNOTE}")
    lines.append(escape.text(summary_line(report)))
    return "\n".join(lines)


def _more(shown: list[str], total: int, what: str) -> list[str]:
    """``shown`` (the first lines of ``total``), then how many more there are."""
    if total <= len(shown):
        return shown
    return shown + [f"... and {total - len(shown)} more {what} (all of them with "
                    f"--format json or -o FILE)"]


def gate_verdict(report) -> str:
    s = report.summary
    if not s.get("versions") and report.ok:
        return "gate: passed (nothing to gate)"
    return (f"gate: {'passed' if report.ok else 'FAILED'}: {len(s.get('versions', []))} version(s), "
            f"{s.get('results', 0)} result(s), {s.get('agree', 0)} agree, {s.get('deviates', 0)} deviate, "
            f"{len(report.errors)} error(s)")


def _base_line(summary: dict) -> str:
    """What the gate judged against: the git base, or (submit --dry-run) the version submit would seal."""
    if summary.get("created"):
        return f"sealed {summary['created']} ({summary.get('status')}), judged as the gate judges it"
    if summary.get("dry_run"):
        status = summary.get("status")
        return "dry run, nothing sealed: " + (f"submit would seal it {status}" if status else "submit would refuse it")
    return f"base: {summary.get('base') or '-'} ({summary.get('versioning')})"


def gate_text(report, with_findings: bool = True) -> str:
    s = report.summary
    lines = [_base_line(s) + (f"; head: {s['head']}" if s.get("head") else ""),
             f"policy: {s.get('policy')}; clock: {s.get('clock')}"]
    lines += [f"gated: {v}" for v in s.get("versions", [])]
    lines += _gate_extra_lines(report)
    lines += [f"{f.severity}: {f.render()}" for f in report.findings] if with_findings else []
    for r in report.rows:
        dev = signed_pct(r.get("deviation_pct"))
        lines.append(f"{word(r.get('verdict') or r['outcome'])}: {_row_where(r)}{' ' + dev if dev else ''}"
                     + (f" [{r['label']}]" if r.get("label") == LABEL_UNVERIFIED else ""))
        if r.get("verdict") == DEVIATES and r.get("differences"):
            lines.append(f"  your system differs from the reference's: {r['differences']}")
    if report.any_unverified():
        lines.append(f"{LABEL_UNVERIFIED}: {UNVERIFIED_FOOTNOTE}")
    lines.append(gate_verdict(report))
    return "\n".join(map(escape.text, lines))


def _gate_extra_lines(report, limit: int | None = TEXT_LIMIT) -> list[str]:
    """Withdrawals, the partner results not compared (with why; at most
    ``limit``, then how many more) and, with the maintainers' label, the
    verdicts the change flips."""
    withdrawals = report.summary.get("withdrawals") or []
    lines = [f"withdrawal: {w['version']} {w['text']}" for w in withdrawals]
    lines += [f"  withdrawn: {x['system']} {x['model']} {x['scenario']} ({x['division']}), "
              f"{word(x['verdict'])}: {x['reason']}" for w in withdrawals for x in w["withdrawn"]]
    skipped = report.summary.get("not_compared") or []
    lines += [f"not compared: {Source(x['file'], x['line'])}: {word(x['outcome'])}: {x['reason']}"
              for x in skipped[:limit]]
    if limit is not None and len(skipped) > limit:   # 50,000 rejected rows must not make a 10 MB summary
        lines.append(f"not compared: {len(skipped) - limit} more (the JSON report holds all)")
    if report.summary.get("flips_checked"):
        flips = report.summary.get("flips") or []
        lines.append(f"the change flips {len(flips)} shipped result(s)")
        lines += [f"flip: {x['text']}" for x in flips]
    return lines


def verdict_line(report, gate: bool = False) -> str:
    """The last line of the text report: what a command prints when it writes a file."""
    return gate_verdict(report) if gate else summary_line(report)


# ---- json and csv -------------------------------------------------------------------------

def as_json(report) -> str:
    return json.dumps(report.to_dict(), indent=2)


def as_csv(report) -> str:
    """The rows as CSV (nested values as JSON)."""
    rows = plain(report.rows)
    columns = list(dict.fromkeys(k for r in rows for k in r))
    cells = [[escape.csv_cell(c) for c in columns]]
    cells += [[escape.csv_cell(json.dumps(r[c], sort_keys=True) if isinstance(r.get(c), (dict, list))
                               else r.get(c)) for c in columns] for r in rows]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n", quoting=escape.csv_quoting(c for row in cells for c in row)) \
        .writerows(cells)
    return out.getvalue().rstrip("\n")


# ---- locations of rows --------------------------------------------------------------------

def _row_where(r: dict) -> Source:
    """A row's place, from its ``file`` and ``line`` (a row without a file: none)."""
    return Source(str(r.get("file") or ""), r.get("line"))


# ---- junit ----------------------------------------------------------------------------------

def junit(report, gate: bool = False) -> str:
    """One test case per row (a result, a claim, a suite) and per file with
    findings that no row holds (GATE: and per file checked); error findings are failures."""
    name = "mlrepro gate" if gate else "mlrepro"
    suite = ET.Element("testsuite", name=name)
    row_findings, file_findings = _by_line(report.findings)
    for r in report.rows:
        where = _row_where(r)
        case = ET.SubElement(suite, "testcase", classname=str(r.get("version") or _version_of(where.file)),
                             name=_result_name(r, where), file=where.file,
                             line="" if where.line is None else str(where.line))
        for f in row_findings.pop((where.file, where.line), []):
            _failure(case, f)
        if r.get("outcome") in (SET_ASIDE, REJECTED) and case.find("failure") is None \
                or r.get("verdict") in (NO_REFERENCE, EXCLUDED):
            said = word(r.get("verdict") or r.get("outcome"))
            ET.SubElement(case, "skipped", message=f"{said}: {r['reason']}" if r.get("reason") else said)
    for (file, _line), found in row_findings.items():       # lines without a row
        file_findings.setdefault(file, []).extend(found)
    for file in sorted(set(report.files) | set(file_findings)):
        case = ET.SubElement(suite, "testcase", classname=_version_of(file), name=f"file {file}",
                             file=file)
        for f in file_findings.get(file, []):
            _failure(case, f)
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    suite.set("errors", "0")
    root = ET.Element("testsuites", name=name)
    root.append(suite)
    ET.indent(root)
    return _NOT_XML.sub("?", ET.tostring(root, encoding="unicode", xml_declaration=True))


def _by_line(findings: list[Finding]):
    rows: dict[tuple, list[Finding]] = {}
    files: dict[str, list[Finding]] = {}
    for f in findings:
        if f.severity != Severity.ERROR:
            continue
        if f.line is not None and f.code not in ("version-immutable", "manifest-invalid", "manifest-mismatch"):
            rows.setdefault((f.file, f.line), []).append(f)
        else:
            files.setdefault(f.file, []).append(f)
    return rows, files


def _result_name(r: dict, where: Source) -> str:
    what = " ".join(str(r[k]) for k in ("id", "suite", "model", "scenario", "system") if r.get(k))
    return f"{where}" + (f" {what}" if what else "") if where.file else what or "row"


def _version_of(path: str) -> str:
    parts = path.split("/")
    for i in range(len(parts) - 2):   # the version folder, under whatever the path starts with
        version, _ = Version.parse("/".join(parts[i:]))
        if version is not None:
            return version.display
    return "mlrepro"


def _failure(case: ET.Element, f: Finding) -> None:
    node = ET.SubElement(case, "failure", message=f"[{f.code}] {f.message}", type=f.code)
    node.text = f.render()


# ---- github -----------------------------------------------------------------------------------

def github(report, gate: bool = False) -> str:
    """Workflow commands, so that each finding lands on its file and line in a pull request."""
    lines = [_command(f.severity, f.file, f.line, f.code, f"{f.message} (expected {f.expected}; found {f.found}) "
                      f"[{f.place}]") for f in report.findings]
    lines += [_command("notice", x["file"], x["line"], "not-compared", f"{word(x['outcome'])}: {x['reason']}")
              for x in report.summary.get("not_compared") or ()]   # the gate: partner results it did not compare
    lines.append(verdict_line(report, gate))
    return "\n".join(lines)


def _command(kind: object, file: str, line: int | None, title: str, message: str) -> str:
    at = "" if line is None else f",line={line}"
    return f"::{kind} file={escape.gh_property(file)}{at},title={escape.gh_property(title)}::{escape.gh_data(message)}"


# ---- markdown ---------------------------------------------------------------------------------
# Every string a partner could have written (a name, a path, a place, a message
# quoting its file) goes into a code span (escape.md_cell), where no link,
# image, mention or heading is live; the project's own words and figures go
# in as they are.

def _cell(value: object) -> str:
    """A cell of the project's own words and figures (a number, a verdict)."""
    return _cell_text(value).replace("\\", "\\\\").replace("|", "\\|")


def _text_cell(value: object) -> str:
    """A cell of any table: a number as it is, text in a code span."""
    value = plain(value)
    if value is None or isinstance(value, (bool, int, float)):
        return _cell(value)
    return escape.md_cell(_cell_text(value))


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A table of cells already rendered (by _cell or escape.md_cell)."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def markdown(report, limit: int = 100, gate: bool = False) -> str:
    """A summary for a pull-request comment or $GITHUB_STEP_SUMMARY."""
    out = [f"## {'✅' if report.ok else '❌'} mlrepro{' gate' if gate else ''}: {'passed' if report.ok else 'failed'}",
           ""]
    results = report.rows
    if gate:
        out += _gate_head(report, limit)
        if results:
            out += ["### Results", ""] + _table(
                ["file:line", "model", "scenario", "value", "reference", "deviation", "verdict", "label"],
                [[escape.md_cell(str(_row_where(r))), escape.md_cell(r["model"]), escape.md_cell(r["scenario"]),
                  _cell(quantity(r["value"], r.get("units"))), _cell(quantity(r["reference_value"], r.get("units"))),
                  _cell(signed_pct(r["deviation_pct"])), _cell(word(r.get("verdict") or r["outcome"])),
                  _cell("unverified†" if r.get("label") == LABEL_UNVERIFIED else r.get("label") or "")]
                 for r in results[:limit]]) + [""]
        differing = [r for r in results[:limit] if r.get("verdict") == DEVIATES and r.get("differences")]
        if differing:
            out += ["### How a deviating result's system differs from the reference's", ""]
            out += [f"- {escape.md_code(str(_row_where(r)))} {escape.md_code(r['model'])} {escape.md_code(r['scenario'])} "
                    f"({signed_pct(r['deviation_pct'])}): {escape.md_code(r['differences'])}" for r in differing] + [""]
    else:
        scalars = {k: v for k, v in report.summary.items() if v is not None and not isinstance(v, (dict, list))}
        if scalars:
            out += _table([_text_cell(k) for k in scalars], [[_text_cell(v) for v in scalars.values()]]) + [""]
        if results:
            columns = list(dict.fromkeys(k for r in results[:limit] for k in r))
            out += ["### Rows", ""] + _table([_text_cell(c) for c in columns],
                                             [[_cell(word(r[c])) if c in WORDS and r.get(c) is not None
                                               else _text_cell(r.get(c)) for c in columns]
                                              for r in results[:limit]]) + [""]
    if report.findings:
        out += ["### Findings", ""] + _table(
            ["severity", "code", "file", "place", "expected", "found", "message"],
            [[_cell(f.severity), escape.md_cell(f.code)] + [escape.md_cell(v) for v in
                                                            (f.file, f.place, f.expected, f.found, f.message)]
             for f in report.findings[:limit]]) + [""]
    if len(report.findings) > limit or len(results) > limit:
        out += [f"_Only the first {limit} of each are shown; the JSON report holds all._", ""]
    if report.any_unverified():
        out += [f"† {LABEL_UNVERIFIED}: {UNVERIFIED_FOOTNOTE}", ""]
    return "\n".join(out)


def _gate_head(report, limit: int | None = 100) -> list[str]:
    s = report.summary
    judged = (_base_line(s).capitalize() if s.get("dry_run") or s.get("created")
              else f"Base {escape.md_code(s.get('base') or '-')} ({s.get('versioning')})")
    out = [f"{judged}; reference {escape.md_code(s.get('reference_submitter'))}, "
           f"tolerance ±{s.get('tolerance_pct')}%.", ""]
    extra = _gate_extra_lines(report, limit)
    if extra:
        out += [*escape.md_fence(extra), ""]
    if s.get("versions"):
        out += _table(["version", "results", "agree", "deviate", "no reference", "rejected", "errors"],
                      [[escape.md_cell(c) if i == 0 else _cell(c) for i, c in enumerate(_version_counts(report, v))]
                       for v in s["versions"]]) + [""]
    return out


def _version_counts(report, display: str) -> list[object]:
    rows = [r for r in report.rows if r["version"] == display]
    got = tally([r.get("verdict") or r["outcome"] for r in rows], (AGREE, DEVIATES, NO_REFERENCE, REJECTED))
    errors = sum(1 for f in report.errors if f"/{display}/" in f"/{f.file}")
    return [display, len(rows), *got.values(), errors]


def write_report(report, path: str | Path, fmt: str | None = None, gate: bool = False) -> None:
    """A report to a file, in the format its extension names (BY_EXTENSION; .parquet and .csv: the table)."""
    path = Path(path)
    if path.suffix == ".parquet" or (path.suffix == ".csv" and fmt in (None, "csv")):
        write_table(report.frame(), path)
        return
    write_text(render(report, fmt or BY_EXTENSION.get(path.suffix, "text"), limit=None, gate=gate), path)
