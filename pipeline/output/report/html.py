"""HTML primitives of the report: escaped text, the unverified mark, sortable
and filterable tables, the page around them (figures: :mod:`.figures`).

Every text goes through :func:`escape`. The page carries its CSS and a few
lines of script (sorting and filtering tables) inline: nothing is loaded from
anywhere, and without the script every table is still there, unsorted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from pipeline.core.model import COMPARISON_DISCLAIMER, UNVERIFIED_FOOTNOTE, LABEL_UNVERIFIED as UNVERIFIED_LABEL
from pipeline.core.vocabulary import label as word
from pipeline.output.figures import readable

TITLE = "mlrepro report: MLPerf Inference partner results against the reference"


# ---- text --------------------------------------------------------------------------------

def text(value) -> str:
    """Plain text of a cell value (no floats printed raw)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return readable(value)
    return str(value)


def wrap(value) -> str:
    """Escaped text that may break after '_' and '/' (long system ids, paths)."""
    return escape(text(value)).replace("_", "_<wbr>").replace("/", "/<wbr>")


def unverified(figure_html: str, below: bool = False) -> str:
    """A figure (already HTML) followed by the MLCommons label and the footnote
    mark (``below``: on the next line, for a narrow column); the section that
    shows it also shows :func:`footnote`."""
    return f'{figure_html}{"<br>" if below else " "}<span class="unv">{UNVERIFIED_LABEL}<sup>1</sup></span>'


def footnote(comparison: bool = False) -> str:
    """The MLCommons sentence, for a section holding unverified figures."""
    out = f'<p class="fn"><sup>1</sup> {UNVERIFIED_LABEL}: {escape(UNVERIFIED_FOOTNOTE)}</p>'
    if comparison:
        out += f'<p class="fn disclaimer">{escape(COMPARISON_DISCLAIMER)}</p>'
    return out


def verdict(name: str, label: str | None = None) -> str:
    """A verdict as a coloured tag (the CSS class is its code; the text its label)."""
    cls = "".join(c if c.isalnum() else "-" for c in name)
    return f'<span class="v v-{cls}">{escape(label or word(name))}</span>'


# ---- tables ----------------------------------------------------------------------------

@dataclass
class Cell:
    html: str
    sort: float | str | None = None     # the value sorted on, when not the text
    cls: str = ""


@dataclass
class Table:
    """A table that sorts (click a header) and filters (the box above it)."""

    ident: str
    header: list[str]
    rows: list[list[Cell | str]] = field(default_factory=list)
    row_classes: list[str] = field(default_factory=list)
    numeric: set[int] = field(default_factory=set)   # right-aligned columns
    foot: str = ""                                   # HTML under the rows, wrapped to the table's width
    searchable: bool = True                          # a filter box above (when over 8 rows)
    screen_only: set[int] = field(default_factory=set)   # columns left out when printed
    where_all: str = ""                              # where every row is when print leaves some out

    def add(self, cells: list[Cell | str], cls: str = "", printed: bool = True) -> None:
        """A row; ``printed=False``: on screen only (the printed report keeps
        what an auditor needs and says where the rest is)."""
        self.rows.append(cells)
        self.row_classes.append(" ".join(c for c in (cls, "" if printed else "noprint") if c))

    def _print_note(self) -> str:
        left_out = sum("noprint" in c.split() for c in self.row_classes)
        if not left_out:
            return ""
        shown = len(self.rows) - left_out
        return (f'<p class="print-only small">Printed: {shown} of {len(self.rows)} rows; all {len(self.rows)} '
                f"are in the report on screen{escape(self.where_all)}.</p>")

    def html(self, empty: str = "None.") -> str:
        if not self.rows:
            return f'<p class="empty">{escape(empty)}</p>'

        def column_class(i: int) -> str:
            return " ".join(c for c in ("num" if i in self.numeric else "",
                                        "noprint" if i in self.screen_only else "") if c)

        head = "".join(f'<th scope="col"{_class_attr(column_class(i))}>{escape(h)}</th>'
                       for i, h in enumerate(self.header))
        body = []
        for cells, cls in zip(self.rows, self.row_classes):
            tds = []
            for i, cell in enumerate(cells):
                cell = cell if isinstance(cell, Cell) else Cell(cell)
                attrs = f' data-sort="{escape(str(cell.sort))}"' if cell.sort is not None else ""
                classes = " ".join(c for c in (cell.cls, column_class(i)) if c)
                attrs += _class_attr(classes)
                tds.append(f"<td{attrs}>{cell.html}</td>")
            row_attrs = f' class="{cls}"' if cls else ""
            body.append(f"<tr{row_attrs}>{''.join(tds)}</tr>")
        caption = f'<caption class="foot">{self.foot}</caption>' if self.foot else ""
        search = (f'<input class="filter" type="search" placeholder="Filter {len(self.rows)} rows" '
                  f'aria-label="Filter the rows of this table" data-table="{self.ident}">'
                  if self.searchable and len(self.rows) > 8 else "")
        none_printed = all("noprint" in c.split() for c in self.row_classes)   # the note alone prints
        return (f'<div class="tbl">{search}<table id="{self.ident}" '
                f'class="sortable{" noprint" if none_printed else ""}">{caption}'
                f'<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{self._print_note()}</div>')


def _class_attr(classes: str) -> str:
    return f' class="{classes}"' if classes else ""


# ---- the page --------------------------------------------------------------------------

CSS = """
:root { --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --line: #d0d7de; --muted: #59636e; }
* { box-sizing: border-box; }
body { font: 14px/1.35 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto;
       max-width: 1340px; padding: .5rem 1rem 2rem; color: #1f2328; }
header h1 { font-size: 1.15rem; margin: .2rem 0; }
.lead { color: var(--muted); margin: 0 0 .4rem; }
h2 { font-size: 1.15rem; border-bottom: 2px solid #1f2328; padding-bottom: .1rem; margin: 1.4rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .3rem; } h4 { font-size: .92rem; margin: .8rem 0 .3rem; }
#answers { font-size: 12px; line-height: 1.25; }
#answers h2 { font-size: 13px; border: 0; margin: .05rem 0 .2rem; }
#answers h3 { font-size: 13px; margin: 0 0 .1rem; }
/* the partners left with the unverified results and the checks under them, the claims right; where the
   rounds stack (under 1250 px), the checks under the claims: every answer on the first screen */
#answers .grid { display: grid; grid-template-columns: auto minmax(31rem, 1fr); gap: .4rem .8rem; align-items: start;
                 grid-template-areas: "partners side" "more side" "more checks"; grid-template-rows: auto auto 1fr; }
#answers [data-answer=partners] { grid-area: partners; } #answers .side { grid-area: side; }
#answers .more, #answers .checks { contain: inline-size; }   /* as wide as their column, never widening it */
#answers .more { grid-area: more; } #answers .checks { grid-area: checks; }
#answers .rounds { display: flex; flex-direction: column; gap: .3rem; }
#answers .round-partners table { width: 100%; }
/* a partner's name breaks only after '_' (its <wbr>), never mid-word; a long one is shortened (whole in its tooltip) */
#answers .pname { display: inline-block; }
#answers caption.foot { caption-side: bottom; text-align: left; padding: 0 .25rem; }
#answers table { font-size: 11.5px; line-height: 1.15; margin: 0; width: auto; } #answers th, #answers td { padding: 0 .25rem; }
#answers td.claim { min-width: 12rem; }
#answers .scope { font-size: 10px; color: var(--muted); }  /* what a claim covers, under its id */
#answers .box { border: 1px solid var(--line); border-radius: 6px; padding: .2rem .45rem; margin-bottom: .35rem; }
#answers .box.alarm { border-color: var(--bad); } #answers .box table { width: 100%; }
#answers p { margin: .1rem 0; } #answers .fn { font-size: 11.5px; }
/* wide screens: partner names wrapped sooner; the two rounds' tables stay one above the
   other (side by side, two tables squeeze a long name past three lines) */
@media (min-width: 1250px) {
  #answers .round-partners table { width: auto; } #answers .pname { max-width: 8rem; } }
@media (max-width: 820px) { #answers .grid { grid-template-columns: 1fr; grid-template-areas: "partners" "side" "more" "checks"; } }
table { border-collapse: collapse; margin: .2rem 0 .6rem; font-size: 12.5px; width: 100%; }
th, td { border: 1px solid var(--line); padding: .15rem .4rem; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
th { background: #f6f8fa; cursor: pointer; white-space: nowrap; user-select: none; }
th[data-dir="asc"]::after { content: " \\25B2"; } th[data-dir="desc"]::after { content: " \\25BC"; }
.nw { white-space: nowrap; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.bad td { background: #fff1f0; } tr.warn td { background: #fff8e6; }
.small { font-size: .88em; color: var(--muted); }
input.filter { font: inherit; font-size: 12px; padding: .1rem .3rem; margin: .1rem 0; width: 16rem; }
.v { font-weight: 600; white-space: nowrap; }
.v-agree, .v-holds, .v-met, .v-linear { color: var(--ok); }
.v-deviates, .v-does-not-hold, .v-failed, .v-ambiguous, .v-unmatched { color: var(--bad); }
.v-cherry-picked, .v-no-reference, .v-excluded, .v-set-aside, .v-not-applicable, .v-sub-linear, .v-super-linear {
  color: var(--warn); }
.unv { color: var(--warn); font-weight: 600; font-size: .85em; white-space: nowrap; }
.fn { font-size: .9em; color: #3d444d; margin: .2rem 0; } .disclaimer { color: var(--muted); }
.empty, .missing { color: var(--muted); font-style: italic; }
section.status { border-left: 5px solid var(--ok); padding-left: .8rem; margin: .6rem 0; }
section.status.unverified { border-left-color: var(--warn); background: #fffbf0; }
details summary { cursor: pointer; color: var(--muted); } details ul { margin: .2rem 0; padding-left: 1rem; }
details.nc summary { color: inherit; margin: .1rem 0; } details.nc[open] { margin-bottom: .4rem; }
caption.foot { caption-side: bottom; text-align: left; font-size: .92em; color: var(--muted); }
table[id^="claims-"] .v { white-space: normal; } table[id^="claims-"] td:first-child { min-width: 15rem; }
nav ul { columns: 3; margin: .2rem 0; }
.chart { margin: .3rem 0 .8rem; font-size: .9em; max-width: 1100px; }
.crow { display: grid; grid-template-columns: 15rem minmax(0, 1fr) 6.5rem; gap: .5rem; align-items: center;
        min-height: 18px; }
.clab { text-align: right; overflow-wrap: anywhere; } .cval { font-variant-numeric: tabular-nums; }
.cgroup { font-weight: 600; margin: .35rem 0 .1rem; overflow-wrap: anywhere; }
.track { position: relative; height: 14px; background: #f6f8fa; }
.track .band { position: absolute; top: 0; bottom: 0; background: #dafbe1; }
.track .zero, .track .linear { position: absolute; top: -2px; bottom: -2px; border-left: 1px solid #57606a; }
.track .dot { position: absolute; top: 2px; width: 10px; height: 10px; margin-left: -5px; border-radius: 50%;
              background: var(--ok); opacity: .85; }
.track .dot.bad { background: var(--bad); }
.track .bar { position: absolute; top: 2px; bottom: 2px; left: 0; background: #54aeff; }
.axis { display: grid; grid-template-columns: 15rem minmax(0, 1fr) 6.5rem; gap: .5rem; color: var(--muted); }
.axis .ticks { position: relative; height: 1.1em; } .axis .ticks span { position: absolute;
  transform: translateX(-50%); white-space: nowrap; }
footer { border-top: 1px solid var(--line); margin-top: 1.5rem; font-size: 12px; color: var(--muted); }
.print-only { display: none; }
@media print {
  .noprint { display: none !important; } .print-only { display: block; }
  @page { size: A4 landscape; margin: 10mm; }
  body { max-width: none; padding: 0; font-size: 10px; }
  nav, input.filter, details { display: none; }
  h2 { break-after: avoid; } h3, h4 { break-after: avoid; }
  tr, .crow { break-inside: avoid; }
  table { font-size: 8.5px; line-height: 1.2; } th, td { padding: 1px 3px; }
  #answers, #answers table { font-size: 8.5px; } #answers h2, #answers h3 { font-size: 10px; }
  #answers td.claim { min-width: 0; } #answers .fn { font-size: 8.5px; }
  #answers .rounds { flex-direction: row; gap: .4rem; align-items: flex-start; }
  #answers .round-partners table { width: auto; }
  table[id^="claims-"] td:first-child { min-width: 0; }
  thead { display: table-header-group; } br.ub { display: none; }   /* units beside the figure: the page is wider */
  #answers .scope { display: none; }   /* printed, each claim's scope is in its round's claims table */
  .chart { font-size: 9px; } .crow { min-height: 12px; } .track { height: 10px; }
  .track .dot { width: 8px; height: 8px; margin-left: -4px; top: 1px; }
  h2 { margin: .6rem 0 .3rem; } h3 { margin: .5rem 0 .2rem; }
  th[data-dir]::after { content: ""; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  a { color: inherit; text-decoration: none; }
}
"""

# Sorting (click a header; numbers by data-sort) and filtering (the box above
# a table). No network, no library.
SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (t) {
  t.querySelectorAll("th").forEach(function (th, i) {
    th.addEventListener("click", function () {
      var dir = th.dataset.dir === "asc" ? "desc" : "asc";
      t.querySelectorAll("th").forEach(function (h) { delete h.dataset.dir; });
      th.dataset.dir = dir;
      var key = function (r) { var c = r.cells[i]; return c ? (c.dataset.sort || c.textContent.trim()) : ""; };
      var rows = Array.from(t.tBodies[0].rows).sort(function (a, b) {
        var x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny) && isFinite(x) && isFinite(y)) ? nx - ny : x.localeCompare(y);
        return dir === "asc" ? c : -c;
      });
      rows.forEach(function (r) { t.tBodies[0].appendChild(r); });
    });
  });
});
document.querySelectorAll("input.filter").forEach(function (box) {
  box.addEventListener("input", function () {
    var q = box.value.toLowerCase();
    Array.from(document.getElementById(box.dataset.table).tBodies[0].rows).forEach(function (r) {
      r.hidden = q !== "" && r.textContent.toLowerCase().indexOf(q) < 0;
    });
  });
});
"""


def page(lead: str, body: list[str]) -> str:
    return "".join([
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(TITLE)}</title><style>{CSS}</style></head><body>",
        f'<header><h1>{escape(TITLE)}</h1><p class="lead">{lead}</p></header><main>', *body, "</main>",
        f'<footer><p id="fn-unverified"><sup>1</sup> {UNVERIFIED_LABEL}: {escape(UNVERIFIED_FOOTNOTE)}</p>',
        f"<p>{escape(COMPARISON_DISCLAIMER)}</p></footer>",
        f"<script>{SCRIPT}</script></body></html>\n"])
