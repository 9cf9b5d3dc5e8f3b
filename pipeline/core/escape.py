"""Partner text made safe for the output it goes to, one escaper per kind of
output: no string from a partner's folder may close a code fence, start a
formula, forge a line of the text report or a workflow command. (HTML: Jinja's
autoescape.) Standard library only: the gate imports this.

- **CSV**: OWASP's rule against formula injection: a text cell starting with
  ``=``, ``+``, ``-``, ``@``, tab or CR gets a leading ``'`` (not a plain
  number such as ``-4.3``), and one starting with ``'`` one more, so that a
  reader of the pipeline's own CSVs (:func:`csv_restore_frame`) strips exactly
  one. A table with a CR in a text cell is written with every text cell quoted
  (Python's csv quotes only ``\n``; a bare CR would split the row elsewhere).
- **text**: control, line-separator and bidirectional-override characters
  shown escaped: one string is one line and cannot forge another (``::error``).
- **markdown**: partner text only inside a code span or fence it cannot
  close; ``|`` escaped in a cell.
"""

from __future__ import annotations

import csv
import re

# ---- text -----------------------------------------------------------------------------------

_SHOWN = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0, DEL, C1, the line and paragraph separators, and the bidirectional marks and overrides
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _shown(match: re.Match) -> str:
    ch = match.group()
    return _SHOWN.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


def text(value: object) -> str:
    """``value`` as one line of text: control characters shown escaped."""
    return _CONTROL.sub(_shown, str(value))


# ---- GitHub workflow commands ---------------------------------------------------------------

def gh_data(value: object) -> str:
    """The message of a workflow command (``::error ...::MESSAGE``)."""
    return text(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gh_property(value: object) -> str:
    """A property value of a workflow command (``file=``, ``title=``)."""
    return gh_data(value).replace(":", "%3A").replace(",", "%2C")


# ---- markdown -------------------------------------------------------------------------------

_BACKTICKS = re.compile("`+")


def _longest_backticks(value: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(value)), default=0)


def md_code(value: object) -> str:
    """``value`` as an inline code span it cannot leave (empty text: empty string)."""
    shown = text(value)
    if not shown:
        return ""
    ticks = "`" * (_longest_backticks(shown) + 1)
    # a space pads a span whose text starts or ends with a backtick (stripped when rendered)
    pad = " " if shown[0] == "`" or shown[-1] == "`" or (shown[0] == " " and shown[-1] == " ") else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"


def md_cell(value: object) -> str:
    """A table cell holding ``value`` as a code span (GFM splits cells at ``|`` even inside one)."""
    return md_code(value).replace("|", "\\|")


def md_fence(lines: list[str]) -> list[str]:
    """LINES as a fenced code block no line of them can close."""
    shown = [text(line) for line in lines]
    fence = "`" * max(3, max((_longest_backticks(s) for s in shown), default=0) + 1)
    return [fence, *shown, fence]


# ---- CSV ------------------------------------------------------------------------------------

CSV_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
CSV_MARK = "'"
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _needs_mark(value: str) -> bool:
    return value.startswith(CSV_MARK) or (value.startswith(CSV_FORMULA_START)
                                          and _NUMBER.fullmatch(value) is None)


def csv_cell(value: object) -> object:
    """A CSV cell that no spreadsheet reads as a formula; anything but text is returned as is."""
    return CSV_MARK + value if isinstance(value, str) and _needs_mark(value) else value


def csv_restore(value: object) -> object:
    """The string :func:`csv_cell` was given, from the cell it wrote."""
    return value[1:] if isinstance(value, str) and value.startswith(CSV_MARK) else value


def _text_columns(frame) -> list:
    return [c for c in frame.columns if str(frame[c].dtype) in ("object", "str", "string", "category")]


def _first_char_in(column, starts: tuple[str, ...]):
    try:
        return column.str[:1].isin(starts)
    except AttributeError:       # an object column without text (numbers, booleans)
        return column.map(lambda v: isinstance(v, str) and v.startswith(starts)).astype(bool)


def _map_text(frame, cell, wanted, starts: tuple[str, ...]):
    """``frame`` with ``cell`` applied to its text cells (and names: a header is a cell) for which
    ``wanted`` holds; a copy only when some cell changes."""
    changed = {}
    for name in _text_columns(frame):
        column = frame[name]
        if str(column.dtype) == "category":
            column = column.astype("object")
        # the first character is cheap to test for every cell; the rule runs only for those
        candidates = column[_first_char_in(column, starts)]
        hit = candidates[candidates.map(wanted).astype(bool)] if len(candidates) else candidates
        if len(hit):
            column = column.copy()
            column[hit.index] = hit.map(cell)
            changed[name] = column
    names = {c: cell(c) for c in frame.columns if isinstance(c, str) and wanted(c)}
    if not changed and not names:
        return frame
    out = frame.copy()
    for name, column in changed.items():
        out[name] = column
    return out.rename(columns=names) if names else out


def csv_frame(frame):
    """A pandas table as :func:`csv_cell` writes it."""
    return _map_text(frame, csv_cell, _needs_mark, (*CSV_FORMULA_START, CSV_MARK))


def csv_restore_frame(frame):
    """A pandas table read from a CSV the pipeline wrote, as it was before :func:`csv_frame`."""
    return _map_text(frame, csv_restore, lambda v: v.startswith(CSV_MARK), (CSV_MARK,))


def csv_quoting(cells) -> int:
    """The ``quoting`` of Python's csv for CELLS (any iterable of cell values)."""
    return csv.QUOTE_NONNUMERIC if any(isinstance(c, str) and "\r" in c for c in cells) else csv.QUOTE_MINIMAL


def csv_text(frame) -> str:
    """A pandas table as CSV text, its text cells neutralised (:func:`csv_frame`)."""
    frame = csv_frame(frame)
    cr = [name for name in _text_columns(frame) if frame[name].astype("object").map(
        lambda v: isinstance(v, str) and "\r" in v).any()]
    quoting = csv_quoting([*map(str, frame.columns), *("\r" for _ in cr)])
    return frame.to_csv(None, index=False, lineterminator="\n", quoting=quoting)
