"""The human report: one self-contained HTML file, readable offline and printable.

Inline CSS and hand-written inline SVG only: no script, stylesheet, font or
image is fetched from anywhere. Every text is escaped. Per round, verified
and post-deadline (unverified) results sit in separate sections; every
unverified figure carries the MLCommons wording.

This is the only module that draws plots. It also returns the deviation
table that `dvc plots` renders (see ``plots:`` in dvc.yaml).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import pandas as pd

from . import table as table_mod
from .outputs import COMPARISON_DISCLAIMER, UNVERIFIED_FOOTNOTE, UNVERIFIED_LABEL

TITLE = "mlrepro report: MLPerf Inference partner results against the reference"
DEVIATION_COLUMNS = ("round", "partner", "model", "scenario", "system", "case", "status", "label",
                     "deviation_pct", "tolerance", "verdict")
NO_ROUND = "(no round)"


@dataclass
class Inputs:
    results: Path
    agreement: Path
    rejected: Path
    versions: Path
    scaling: Path | None = None
    claims: Path | None = None
    data_docs: Path | None = None


@dataclass
class Document:
    html: str
    deviation: pd.DataFrame
    notes: list[str] = field(default_factory=list)


# ---- reading ---------------------------------------------------------------------------

def _read_csv(path: Path) -> pd.DataFrame:
    return table_mod.read_frame(path, dtype=str, keep_default_na=False, na_values=[""])


def _read_doc(path: Path | None, option: str, notes: list[str]) -> tuple[list[dict] | None, str]:
    """Rows of a ``{"summary", "findings", "rows"}`` document, or None and why not."""
    if path is None:
        return None, f"No {option} input was given (option --{option})."
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        notes.append(f"--{option} {path}: no such file")
        return None, f"The {option} input {path.as_posix()} is missing."
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        notes.append(f"--{option} {path}: {exc}")
        return None, f"The {option} input {path.as_posix()} could not be read ({exc})."
    rows = doc.get("rows") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        notes.append(f"--{option} {path}: no rows list")
        return None, f"The {option} input {path.as_posix()} holds no rows list."
    return [r for r in rows if isinstance(r, dict)], ""


def _round_of(row: dict) -> str:
    for value in (row.get("round"), (row.get("subject") or {}).get("round")
                  if isinstance(row.get("subject"), dict) else None):
        if value:
            return str(value)
    source = str(row.get("source") or "")
    head = source.split("/", 1)[0]
    return head if head.startswith("v") and head[1:2].isdigit() else NO_ROUND


def _unverified(row: dict) -> bool:
    label, status = row.get("label"), row.get("status")
    if label is not None:
        return str(label) == UNVERIFIED_LABEL
    if row.get("verified") is not None:
        return not bool(row.get("verified"))
    return status is not None and str(status) != "verified"


# ---- formatting ------------------------------------------------------------------------

def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def fmt(value) -> str:
    """Plain text for a cell: numbers without separators, nested values compact."""
    if _missing(value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, dict) and "value" in value and ("system" in value or "submitter" in value):
        who = " ".join(fmt(value.get(k)) for k in ("submitter", "system") if not _missing(value.get(k)))
        extra = ", ".join(fmt(value.get(k)) for k in ("round", "status", "source") if value.get(k))
        return f"{who}: {fmt(value['value'])} {fmt(value.get('units'))}".rstrip() + (f" ({extra})" if extra else "")
    if isinstance(value, dict):
        return ", ".join(f"{k}={fmt(v)}" for k, v in value.items() if not _missing(v))
    if isinstance(value, list):
        return "; ".join(fmt(v) for v in value)
    return str(value)


def _num(value) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def wrap(text: str) -> str:
    """Escaped text that may break after '_' and '/' (long system ids and paths)."""
    return escape(text).replace("_", "_<wbr>").replace("/", "/<wbr>")


def unverified_mark(text: str) -> str:
    """A figure followed by the MLCommons label and the footnote marker."""
    return (f'{wrap(text)} <span class="unv">{UNVERIFIED_LABEL}<sup><a href="#fn-unverified">1</a>'
            "</sup></span>")


def table(header: list[str], rows: list[list[str]], cls: str = "", raw: bool = False) -> str:
    """An HTML table; cells are escaped unless ``raw`` (already-escaped HTML)."""
    if not rows:
        return '<p class="empty">None.</p>'
    cell = (lambda c: c) if raw else wrap
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{escape(cls)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


# ---- plots -----------------------------------------------------------------------------

def _ticks(span: float) -> list[float]:
    step = next(s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000) if span / s <= 6)
    n = int(span // step)
    return [i * step for i in range(-n, n + 1)]


def deviation_svg(points: list[dict], tolerance: float, title: str) -> str:
    """Each partner result's deviation (dot) against the ±tolerance band."""
    if not points:
        return ""
    left, width, row_h, top = 300, 420, 22, 34
    height = top + row_h * len(points) + 40
    span = max(2 * tolerance, max(abs(p["deviation_pct"]) for p in points) * 1.1, 1.0)
    x = lambda v: left + (v + span) / (2 * span) * width  # noqa: E731
    out = [f'<svg class="plot" viewBox="0 0 {left + width + 80} {height}" width="{left + width + 80}" '
           f'height="{height}" role="img" aria-label="{escape(title)}">',
           f"<title>{escape(title)}</title>",
           f'<text x="{left}" y="16" class="ptitle">{escape(title)}</text>',
           f'<rect x="{x(-tolerance):.1f}" y="{top - 8}" width="{x(tolerance) - x(-tolerance):.1f}" '
           f'height="{row_h * len(points) + 8}" class="band"><title>±{tolerance:g}% tolerance</title></rect>']
    for t in _ticks(span):
        out.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top - 8}" y2="{height - 34}" '
                   f'class="{"zero" if t == 0 else "grid"}"/>'
                   f'<text x="{x(t):.1f}" y="{height - 20}" class="tick">{f"{t:+g}" if t else "0"}%</text>')
    for i, p in enumerate(points):
        y = top + i * row_h + row_h / 2
        bad = p["verdict"] == "deviates"
        label = p["case"] if len(p["case"]) <= 46 else p["case"][:45] + "…"
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" class="ylab">{escape(label)}</text>'
                   f'<line x1="{x(0):.1f}" x2="{x(p["deviation_pct"]):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                   f'class="stem {"bad" if bad else "ok"}"/>'
                   f'<circle cx="{x(p["deviation_pct"]):.1f}" cy="{y:.1f}" r="5" class="{"bad" if bad else "ok"}">'
                   f'<title>{escape(p["case"])}: {p["deviation_pct"]:+.2f}% ({escape(p["verdict"])})</title></circle>'
                   f'<text x="{left + width + 6}" y="{y + 4:.1f}" class="val">{p["deviation_pct"]:+.2f}%</text>')
    out.append(f'<text x="{left}" y="{height - 4}" class="tick">deviation from the reference (%); '
               f'shaded: ±{tolerance:g}% tolerance; red: outside</text></svg>')
    return "".join(out)


def efficiency_svg(rows: list[dict], title: str) -> str:
    """Scaling efficiency per cluster, with the 100 % (linear) line."""
    bars = [(fmt(r.get("system") or r.get("id") or ""), _num(r.get("efficiency_pct"))) for r in rows]
    bars = [(name, v) for name, v in bars if v is not None]
    if not bars:
        return ""
    left, width, row_h, top = 300, 400, 22, 34
    height = top + row_h * len(bars) + 34
    top_value = max(110.0, max(v for _, v in bars) * 1.05)
    x = lambda v: left + v / top_value * width  # noqa: E731
    out = [f'<svg class="plot" viewBox="0 0 {left + width + 80} {height}" width="{left + width + 80}" '
           f'height="{height}" role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>',
           f'<text x="{left}" y="16" class="ptitle">{escape(title)}</text>']
    for i, (name, v) in enumerate(bars):
        y = top + i * row_h
        label = name if len(name) <= 46 else name[:45] + "…"
        out.append(f'<text x="{left - 8}" y="{y + 15}" class="ylab">{escape(label)}</text>'
                   f'<rect x="{left}" y="{y + 4}" width="{x(v) - left:.1f}" height="{row_h - 8}" class="bar">'
                   f'<title>{escape(name)}: {v:.2f}%</title></rect>'
                   f'<text x="{x(v) + 4:.1f}" y="{y + 15}" class="val">{v:.1f}%</text>')
    out.append(f'<line x1="{x(100):.1f}" x2="{x(100):.1f}" y1="{top - 6}" y2="{height - 28}" class="zero"/>'
               f'<text x="{x(100):.1f}" y="{height - 14}" class="tick">100% (linear)</text></svg>')
    return "".join(out)


# ---- tables of the inputs --------------------------------------------------------------

FIGURES = {"value", "claimed", "computed", "expected", "efficiency_pct", "deviation_pct",
           "computed_vs_best", "reference_value", "range_min", "range_max"}
SEPARATE = {"footnote", "disclaimer"}
HIDDEN = {"round", "status"}          # the section says both


def _cell(key: str, value, unverified: bool) -> str:
    """One escaped cell, with nicer handling of the keys the analyses share."""
    if key == "holds":
        return {True: '<span class="ok">✓ holds</span>', False: '<span class="bad">✗ does not hold</span>'}.get(
            value if isinstance(value, bool) else None, "—")
    if key == "label":
        return unverified_mark("") if str(value) == UNVERIFIED_LABEL else escape(fmt(value))
    text = fmt(value)
    if key in ("efficiency_pct", "deviation_pct") and _num(value) is not None:
        text = f"{_num(value):+.2f}%" if key == "deviation_pct" else f"{_num(value):.2f}%"
    if len(text) > 240:
        return f'<span title="{escape(text)}">{wrap(text[:239])}…</span>'
    return unverified_mark(text) if unverified and key in FIGURES and text else wrap(text)


def rows_table(rows: list[dict], first: tuple[str, ...] = ()) -> str:
    """A table of whatever keys the rows hold: the ``first`` keys (when present)
    as columns, every other key with a value in a last "details" column."""
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys and k not in SEPARATE]
    keys = [k for k in keys if any(not _missing(r.get(k)) and r.get(k) not in ([], {}, "") for r in rows)]
    columns = [k for k in first if k in keys] or keys[:8]
    rest = [k for k in keys if k not in columns and k not in HIDDEN]
    body = []
    for r in rows:
        unverified = _unverified(r)
        details = "<br>".join(f"<b>{escape(k)}</b>: {_cell(k, r[k], unverified)}" for k in rest
                              if not _missing(r.get(k)) and r.get(k) not in ([], {}, ""))
        body.append([_cell(k, r.get(k), unverified) for k in columns] + ([details] if rest else []))
    return table(columns + (["details"] if rest else []), body, "rows", raw=True)


def deviation_frame(agreement: pd.DataFrame) -> pd.DataFrame:
    """One row per compared partner result: the data of the deviation plots."""
    frame = agreement[agreement["deviation_pct"].notna()].copy()
    frame["deviation_pct"] = frame["deviation_pct"].astype(float)
    frame["tolerance"] = frame["tolerance_pct"].astype(float)
    frame["partner"] = frame["submitter"]
    base = frame["round"] + " · " + frame["submitter"] + " · " + frame["model"] + " · " + frame["scenario"]
    dup = base.duplicated(keep=False)
    frame["case"] = base.where(~dup, base + " · " + frame["system"])
    frame = frame.sort_values(["round", "partner", "model", "scenario", "system"], kind="stable")
    return frame[list(DEVIATION_COLUMNS)].reset_index(drop=True)


def _agreement_table(rows: pd.DataFrame, unverified: bool) -> str:
    body = []
    for r in rows.to_dict("records"):
        value = f"{fmt(_num(r['value']))} {fmt(r['units'])}"
        dev = "" if _num(r.get("deviation_pct")) is None else f"{_num(r['deviation_pct']):+.2f}%"
        ref = "" if _num(r.get("reference_value")) is None else \
            f"{fmt(_num(r['reference_value']))} ({fmt(r.get('reference_system'))})"
        mark = unverified_mark if unverified else wrap
        body.append([wrap(fmt(r["submitter"])), wrap(fmt(r["system"])), escape(fmt(r["model"])),
                     escape(fmt(r["scenario"])), mark(value), wrap(ref), mark(dev) if dev else "",
                     f'<span class="v-{escape(fmt(r["verdict"]))}">{escape(fmt(r["verdict"]))}</span>',
                     wrap(fmt(r.get("reason")))])
    return table(["partner", "system", "model", "scenario", "value", "reference", "deviation", "verdict",
                  "reason"], body, "agreement", raw=True)


def _versions_table(versions: pd.DataFrame) -> str:
    body = []
    for r in versions.to_dict("records"):
        used = str(r.get("used")).lower() == "true"
        by = "" if used else ", ".join(
            f"v{o['version']}" for o in versions.to_dict("records")
            if o["submitter"] == r["submitter"] and o.get("status") == r.get("status")
            and str(o.get("used")).lower() == "true")
        sup = "" if _missing(r.get("supersedes")) else f"v{fmt(r['supersedes']).split('.')[0]}"
        body.append([fmt(r["submitter"]), f"v{fmt(r['version'])}", fmt(r.get("path")),
                     fmt(r.get("status_declared")), fmt(r.get("status")), fmt(r.get("submitted_at")),
                     "used" if used else ("superseded" if by else "not used"), sup, by])
    return table(["submitter", "version", "path", "declared", "status", "submitted at", "used",
                  "supersedes", "superseded by"], body, "versions")


# ---- sections --------------------------------------------------------------------------

@dataclass
class Data:
    results: pd.DataFrame
    agreement: pd.DataFrame
    rejected: pd.DataFrame
    versions: pd.DataFrame
    deviation: pd.DataFrame
    scaling: list[dict] | None
    scaling_why: str
    claims: list[dict] | None
    claims_why: str


def _round_key(name: str) -> tuple:
    try:
        return (0, *(int(p) for p in name.lstrip("v").split(".")))
    except ValueError:
        return (-1,)


def _status_part(data: Data, round_: str, unverified: bool) -> str:
    """The verified or the post-deadline half of a round."""
    kind = "unverified" if unverified else "verified"
    agree = data.agreement[(data.agreement["round"] == round_)
                           & ((data.agreement["status"] != "verified") == unverified)]
    dev = data.deviation[(data.deviation["round"] == round_)
                         & ((data.deviation["status"] != "verified") == unverified)]
    tol = float(dev["tolerance"].iloc[0]) if len(dev) else _tolerance(data.agreement)
    points = [{**p, "case": p["case"].split(" · ", 1)[1]} for p in dev.to_dict("records")]
    accepted = data.results[(data.results["round"] == round_)
                            & ((data.results["status"] != "verified") == unverified)]
    title = "Post-deadline results: unverified" if unverified else "Verified results"
    out = [f'<section class="{kind}"><h3>{title}</h3>',
           f"<p>{len(accepted)} accepted result(s); {len(agree)} partner result(s) compared or listed "
           f"against the reference.</p>"]
    if unverified:
        out.append(f'<p class="disclaimer">{escape(COMPARISON_DISCLAIMER)}</p>')
    out += ["<h4>Agreement with the reference</h4>",
            deviation_svg(points, tol, f"{round_} {kind}: deviation from the reference, ±{tol:g}% band"),
            _agreement_table(agree, unverified),
            "<h4>Scaling efficiency per cluster</h4>",
            _doc_part(data.scaling, data.scaling_why, round_, unverified, "scaling",
                      ("submitter", "system", "model", "scenario", "nodes", "total_accelerators",
                       "value", "expected", "efficiency_pct", "verdict", "label")),
            "<h4>Claims ledger</h4>",
            _doc_part(data.claims, data.claims_why, round_, unverified, "claims",
                      ("id", "text", "kind", "claimed", "computed", "holds", "verdict", "label"))]
    return "".join(out) + "</section>"


def _tolerance(agreement: pd.DataFrame) -> float:
    values = [v for v in (_num(t) for t in agreement.get("tolerance_pct", [])) if v is not None]
    return values[0] if values else 4.0


def _doc_part(rows: list[dict] | None, why: str, round_: str, unverified: bool, what: str,
              first: tuple[str, ...]) -> str:
    if rows is None:
        return f'<p class="missing">{escape(why)}</p>'
    mine = [r for r in rows if _round_of(r) == round_ and _unverified(r) == unverified]
    if not mine:
        return '<p class="empty">None.</p>'
    plot = efficiency_svg(mine, f"{round_} scaling efficiency per cluster") if what == "scaling" else ""
    return plot + rows_table(mine, first)


def _round_title(round_: str) -> str:
    return "Results without a round" if round_ == NO_ROUND else f"Round {escape(round_)}"


def _round_section(data: Data, round_: str) -> str:
    rejected = data.rejected[data.rejected["source"].map(lambda s: _round_of({"source": s})) == round_]
    versions = data.versions[data.versions["round"] == round_]
    anchor = escape(round_.replace(" ", "-"))
    return "".join([
        f'<section class="round" id="round-{anchor}"><h2>{_round_title(round_)}</h2>',
        _status_part(data, round_, unverified=False),
        _status_part(data, round_, unverified=True),
        '<section class="inputs"><h3>Rejected inputs</h3>',
        table(["source", "outcome", "codes", "reason"],
              [[fmt(r.get(k)) for k in ("source", "outcome", "codes", "reason")]
               for r in rejected.to_dict("records")], "rejected"),
        '</section><section class="inputs"><h3>Submission versions</h3>',
        _versions_table(versions), "</section></section>"])


def _overview(data: Data, inputs: Inputs, out: Path, rounds: list[str], notes: list[str]) -> str:
    counts = [[r, int(((data.results["round"] == r) & (data.results["status"] == "verified")).sum()),
               int(((data.results["round"] == r) & (data.results["status"] != "verified")).sum()),
               int(((data.agreement["round"] == r) & (data.agreement["verdict"] == "agree")).sum()),
               int(((data.agreement["round"] == r) & (data.agreement["verdict"] == "deviates")).sum()),
               int((data.rejected["source"].map(lambda s: _round_of({"source": s})) == r).sum())]
              for r in rounds]
    files = [[name, p.as_posix(), _digest(p)] for name, p in (
        ("results", inputs.results), ("agreement", inputs.agreement), ("rejected", inputs.rejected),
        ("versions", inputs.versions), ("scaling", inputs.scaling), ("claims", inputs.claims)) if p]
    nav = "".join(f'<li><a href="#round-{escape(r.replace(" ", "-"))}">{_round_title(r)}</a></li>'
                  for r in rounds)
    return "".join([
        '<section id="overview"><h2>Overview</h2>',
        f"<p>Reference: {escape(_reference(data.agreement))}; tolerance ±{_tolerance(data.agreement):g}% "
        "(inclusive). Verified and post-deadline (unverified) results are kept in separate sections.</p>",
        table(["round", "verified results", "post-deadline results", "agree", "deviate", "rejected inputs"],
              [[str(c) for c in row] for row in counts], "overview"),
        f"<nav><ul>{nav}</ul></nav>", _data_docs(inputs.data_docs, out, notes),
        "<h3>Inputs</h3>", table(["input", "path", "sha256 (first 12)"], files, "files"), "</section>"])


def _reference(agreement: pd.DataFrame) -> str:
    refs = sorted(set(agreement.get("reference_submitter", pd.Series(dtype=str)).dropna()))
    return ", ".join(refs) or "the reference submitter"


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    except OSError:
        return "missing"


def _data_docs(path: Path | None, out: Path, notes: list[str]) -> str:
    if path is None:
        return '<p class="missing">No GX Data Docs given (option --data-docs).</p>'
    rel = os.path.relpath(path.resolve(), out.resolve().parent).replace(os.sep, "/")
    missing = "" if path.exists() else " (not found when this report was written)"
    if missing:
        notes.append(f"--data-docs {path}: not found")
    return (f'<p>Expectation results: <a href="{escape(rel)}">GX Data Docs</a>'
            f"{escape(missing)}.</p>")


# ---- the page --------------------------------------------------------------------------

CSS = """
:root { --ok: #1a7f37; --bad: #cf222e; --unv: #9a6700; --line: #d0d7de; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto;
       max-width: 1200px; padding: 0 1rem; color: #1f2328; line-height: 1.4; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 2px solid #1f2328; padding-bottom: .2rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .85rem; width: 100%; }
th, td { border: 1px solid var(--line); padding: .25rem .45rem; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
td { max-width: 24rem; } table.rows td:last-child { font-size: .8rem; min-width: 14rem; }
table.rows { font-size: .8rem; }
thead th { background: #f6f8fa; }
section.verified { border-left: 6px solid var(--ok); padding-left: 1rem; margin: 1rem 0; }
section.unverified { border-left: 6px solid var(--unv); background: #fff8e6; padding: .2rem 1rem;
                     margin: 1rem 0; }
.unv { color: var(--unv); font-weight: 600; font-size: .8em; }
.ok, .v-agree { color: var(--ok); } .bad, .v-deviates { color: var(--bad); font-weight: 600; }
.missing, .empty { color: #59636e; font-style: italic; }
.disclaimer { font-size: .85rem; color: #59636e; }
svg.plot { max-width: 100%; height: auto; display: block; margin: .5rem 0; }
svg .band { fill: #dafbe1; } svg .grid { stroke: #eaeef2; } svg .zero { stroke: #57606a; }
svg circle.ok { fill: var(--ok); } svg circle.bad { fill: var(--bad); }
svg .stem.ok { stroke: var(--ok); } svg .stem.bad { stroke: var(--bad); } svg .bar { fill: #54aeff; }
svg text { font-size: 11px; fill: #1f2328; } svg .ylab { text-anchor: end; }
svg .tick { text-anchor: middle; fill: #59636e; } svg .ptitle { font-weight: 600; }
footer { border-top: 1px solid var(--line); margin-top: 2rem; font-size: .85rem; }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  nav { display: none; }
  section.round { break-before: page; }
  table, svg, tr { break-inside: avoid; }
  thead { display: table-header-group; }
  section.unverified, section.verified, svg, .band { -webkit-print-color-adjust: exact;
                                                     print-color-adjust: exact; }
  a { color: inherit; text-decoration: none; }
}
"""


def _page(body: list[str]) -> str:
    return "".join([
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(TITLE)}</title><style>{CSS}</style></head><body>",
        f"<header><h1>{escape(TITLE)}</h1></header><main>", *body, "</main>",
        f'<footer><p id="fn-unverified"><sup>1</sup> {UNVERIFIED_LABEL}: {escape(UNVERIFIED_FOOTNOTE)}</p>',
        f"<p>{escape(COMPARISON_DISCLAIMER)}</p></footer></body></html>\n"])


def build(inputs: Inputs, out: Path) -> Document:
    """The report for the pipeline's outputs (and, when given, scaling and claims)."""

    notes: list[str] = []
    agreement = _read_csv(inputs.agreement)
    scaling, scaling_why = _read_doc(inputs.scaling, "scaling", notes)
    claims, claims_why = _read_doc(inputs.claims, "claims", notes)
    data = Data(table_mod.read(inputs.results), agreement, _read_csv(inputs.rejected),
                _read_csv(inputs.versions), deviation_frame(agreement), scaling, scaling_why,
                claims, claims_why)
    rounds = set(data.results["round"]) | set(agreement["round"]) | set(data.versions["round"])
    rounds |= {_round_of({"source": s}) for s in data.rejected["source"]}
    rounds |= {_round_of(r) for r in (scaling or []) + (claims or [])}
    ordered = sorted((r for r in rounds if isinstance(r, str) and r), key=_round_key, reverse=True)
    body = [_overview(data, inputs, out, ordered, notes)] + [_round_section(data, r) for r in ordered]
    return Document(_page(body), data.deviation, notes)
