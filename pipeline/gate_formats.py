"""How a gate report is written: text, json, junit, github, markdown.

Every renderer takes a :class:`pipeline.gate.GateReport` and returns text;
nothing here prints or exits. Standard library only.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from .findings import Finding
from .gate import GateReport, line_of

FORMATS = ("text", "json", "junit", "github", "markdown")
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
UNVERIFIED_FOOTNOTE = "Result not verified by MLCommons Association."


def render(report: GateReport, fmt: str) -> str:
    return {"text": text, "json": as_json, "junit": junit, "github": github,
            "markdown": markdown}[fmt](report)


def _verdict(report: GateReport) -> str:
    s = report.summary
    if not report.versions and report.ok:
        return "gate: passed (nothing to gate)"
    return (f"gate: {'passed' if report.ok else 'FAILED'}: {len(report.versions)} version(s), "
            f"{s.get('results', 0)} result(s), {s.get('agree', 0)} agree, {s.get('deviates', 0)} deviate, "
            f"{len(report.errors)} error(s)")


# ---- text and json -------------------------------------------------------------------

def text(report: GateReport) -> str:
    s = report.summary
    lines = [f"base: {s.get('base') or '-'} ({s.get('versioning')})",
             f"policy: {s.get('policy')}; clock: {s.get('clock')}"]
    lines += [f"gated: {v.display}" for v in report.versions]
    lines += _extra_lines(report)
    lines += [f"{f.severity}: {f.render()}" for f in report.findings]
    for r in report.rows:
        dev = "" if r.get("deviation_pct") is None else f" {r['deviation_pct']:+.2f}%"
        lines.append(f"{r.get('verdict') or r['outcome']}: {r['file']}:{r['line']}{dev}"
                     + (f" [{r['label']}]" if r.get("label") == "unverified" else ""))
    if any(r.get("label") == "unverified" for r in report.rows):
        lines.append(f"unverified: {UNVERIFIED_FOOTNOTE}")
    lines.append(_verdict(report))
    return "\n".join(lines)


def as_json(report: GateReport) -> str:
    return json.dumps(report.to_dict(), indent=2, default=str)


def _extra_lines(report: GateReport) -> list[str]:
    """Withdrawals and, with --allow-policy-change, the verdicts the new policy flips."""
    lines = [f"withdrawal: {w['version']} {w['text']}" for w in report.withdrawals]
    lines += [f"  withdrawn: {x['system']} {x['model']} {x['scenario']} ({x['division']}), "
              f"{x['verdict']}: {x['reason']}" for w in report.withdrawals for x in w["withdrawn"]]
    if report.summary.get("allow_policy_change") and report.summary.get("policy_changes"):
        lines.append(f"the head policy flips {len(report.flips)} shipped result(s)")
        lines += [f"flip: {x['text']}" for x in report.flips]
    return lines


# ---- junit -----------------------------------------------------------------------------

def junit(report: GateReport) -> str:
    """One test case per result line and per file check; findings are failures."""
    suite = ET.Element("testsuite", name="mlrepro gate")
    row_findings, file_findings = _by_line(report.findings)
    for r in report.rows:
        case = ET.SubElement(suite, "testcase", classname=r["version"],
                             name=_result_name(r), file=r["file"], line=str(r["line"] or ""))
        for f in row_findings.pop((r["file"], r["line"]), []):
            _failure(case, f)
        if r["outcome"] == "excluded" or r.get("verdict") == "no-reference":
            ET.SubElement(case, "skipped", message=r.get("reason") or "")
    for (file, line), found in row_findings.items():       # lines without a result row
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
    root = ET.Element("testsuites", name="mlrepro gate")
    root.append(suite)
    ET.indent(root)
    return _NOT_XML.sub("?", ET.tostring(root, encoding="unicode", xml_declaration=True))


def _by_line(findings: list[Finding]):
    rows: dict[tuple, list[Finding]] = {}
    files: dict[str, list[Finding]] = {}
    for f in findings:
        if f.severity != "error":
            continue
        line = line_of(f)
        if line is not None and f.code not in ("version-immutable", "manifest-invalid", "manifest-mismatch"):
            rows.setdefault((f.file, line), []).append(f)
        else:
            files.setdefault(f.file, []).append(f)
    return rows, files


def _result_name(r: dict) -> str:
    what = " ".join(str(r[k]) for k in ("model", "scenario", "system") if r.get(k))
    return f"{r['file']}:{r['line']}" + (f" {what}" if what else "")


def _version_of(path: str) -> str:
    parts = path.split("/")
    for i, part in enumerate(parts):
        if part.startswith("v") and part[1:].isdigit() and i >= 2:
            return "/".join(parts[i - 2:i + 1])
    return "gate"


def _failure(case: ET.Element, f: Finding) -> None:
    node = ET.SubElement(case, "failure", message=f"[{f.code}] {f.message}", type=f.code)
    node.text = f.render()


# ---- github ----------------------------------------------------------------------------

def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(report: GateReport) -> str:
    """Workflow commands, so that each finding lands on its file and line in the PR."""
    lines = []
    for f in report.findings:
        props = [f"file={_escape_property(f.file)}"]
        line = line_of(f)
        if line is not None:
            props.append(f"line={line}")
        props.append(f"title={_escape_property(f.code)}")
        message = f"{f.message} (expected {f.expected}; found {f.found}) [{f.place}]"
        lines.append(f"::{f.severity} {','.join(props)}::{_escape_data(message)}")
    lines.append(_verdict(report))
    return "\n".join(lines)


# ---- markdown --------------------------------------------------------------------------

def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return out


def markdown(report: GateReport, limit: int = 100) -> str:
    """A summary for a PR comment or $GITHUB_STEP_SUMMARY."""
    s = report.summary
    icon = "✅" if report.ok else "❌"
    out = [f"## {icon} mlrepro gate: {'passed' if report.ok else 'failed'}", "",
           f"Base `{s.get('base') or '-'}` ({s.get('versioning')}); reference "
           f"{s.get('reference_submitter')}, tolerance ±{s.get('tolerance_pct')}%.", ""]
    extra = _extra_lines(report)
    if extra:
        out += ["```", *extra, "```", ""]
    if report.versions:
        out += _table(["version", "results", "agree", "deviate", "no reference", "rejected", "errors"],
                      [_version_counts(report, v.display) for v in report.versions]) + [""]
    results = report.rows
    if results:
        out += ["### Results", ""] + _table(
            ["file:line", "model", "scenario", "value", "reference", "deviation", "verdict", "label"],
            [[f"{r['file']}:{r['line']}", r["model"], r["scenario"], r["value"], r["reference_value"],
              "" if r["deviation_pct"] is None else f"{r['deviation_pct']:+.2f}%",
              r.get("verdict") or r["outcome"], _label(r)] for r in results[:limit]]) + [""]
    if report.findings:
        out += ["### Findings", ""] + _table(
            ["severity", "code", "file", "place", "expected", "found", "message"],
            [[f.severity, f"`{f.code}`", f.file, f.place, f.expected, f.found, f.message]
             for f in report.findings[:limit]]) + [""]
    if len(report.findings) > limit or len(results) > limit:
        out += [f"_Only the first {limit} of each are shown; run `mlrepro gate --format text`._", ""]
    if any(r.get("label") == "unverified" for r in report.rows):
        out += [f"† unverified: {UNVERIFIED_FOOTNOTE}", ""]
    return "\n".join(out)


def _label(r: dict) -> str:
    return "unverified†" if r.get("label") == "unverified" else (r.get("label") or "")


def _version_counts(report: GateReport, display: str) -> list[object]:
    rows = [r for r in report.rows if r["version"] == display]
    verdicts = [r.get("verdict") or r["outcome"] for r in rows]
    errors = sum(1 for f in report.errors if f"/{display}/" in f"/{f.file}")
    return [display, len(rows), verdicts.count("agree"), verdicts.count("deviates"),
            verdicts.count("no-reference"), verdicts.count("rejected"), errors]
