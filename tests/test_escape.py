"""The escaper of each output kind, in process: partner text stays inside its
markdown code span or fence, is one line of text, one workflow command, and a
CSV cell that no spreadsheet reads as a formula, restored exactly when read back."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from pipeline.core import escape

GFM = MarkdownIt("commonmark").enable("table")
HOSTILE = "x\n```\n## ✅ gate passed\n![](https://evil.example/p.png) @octocat [a](https://evil.example) `b`` |c|"
# text as a partner may write it: backticks, pipes, newlines, markdown's punctuation, controls
partner_text = st.text(alphabet=st.sampled_from(list("ab `|\\\n\r\t*_[]()!@#<>-=+~'\x1b\u202e\u2028é"))
                       | st.characters(blacklist_categories=("Cs",)), max_size=40)    # text decoded from UTF-8


def _inline(markdown: str) -> list:
    """The inline tokens of the one paragraph or table cell MARKDOWN renders to."""
    tokens = GFM.parse(markdown)
    return [child for t in tokens if t.type == "inline" for child in t.children]


# ---- markdown ----------------------------------------------------------------------------------

@given(partner_text)
def test_a_code_span_holds_any_text_whole(value):
    shown = escape.text(value)
    span = escape.md_code(value)
    if not shown.strip(" "):
        return      # a span of spaces only renders as spaces: nothing of it is live either
    [code] = _inline(f"before {span} after")[1:-1]
    assert code.type == "code_inline"
    assert code.content == shown.replace("\n", " ")


@given(partner_text)
def test_a_table_cell_holds_any_text_in_one_cell(value):
    row = f"| a | {escape.md_cell(value)} | b |"
    tokens = GFM.parse(f"| h1 | h2 | h3 |\n|---|---|---|\n{row}\n")
    cells = [t for t in tokens if t.type == "inline"][3:]
    assert [c.content for c in (cells[0], cells[2])] == ["a", "b"]       # no cell split, none added
    kinds = {child.type for child in cells[1].children} - {"text"}
    assert kinds <= {"code_inline"}
    assert len(tokens) == len(GFM.parse("| h1 | h2 | h3 |\n|---|---|---|\n| a | `x` | b |\n"))


@given(st.lists(partner_text, max_size=5))
def test_a_fence_holds_every_line_and_ends_where_it_should(lines):
    block = "\n".join(escape.md_fence(lines) + ["## after"])
    tokens = GFM.parse(block)
    assert tokens[0].type == "fence"
    assert tokens[0].content == "".join(escape.text(x) + "\n" for x in lines)
    assert [t.type for t in tokens[1:]] == ["heading_open", "inline", "heading_close"]


def test_the_hostile_reason_is_neither_a_heading_an_image_a_link_nor_a_mention():
    html = GFM.render("\n".join(escape.md_fence([HOSTILE])) + "\n\n" + escape.md_code(HOSTILE))
    assert "<h2>" not in html and "<img" not in html and "<a " not in html
    assert html.count("<code>") == 2       # the fence's and the span's, nothing outside them


# ---- text and GitHub annotations ---------------------------------------------------------------

@given(partner_text)
def test_text_is_one_line_without_controls(value):
    shown = escape.text(value)
    assert shown.splitlines() in ([shown], [])
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c in "\u2028\u2029\u202e" for c in shown)


def test_text_shows_what_it_escaped():
    assert escape.text("a\nb\r\tc\x1b[31m\u202eZ") == "a\\nb\\r\\tc\\x1b[31m\\u202eZ"
    assert escape.text("plain: ±4% MI355X_8x") == "plain: ±4% MI355X_8x"


@given(partner_text)
def test_a_workflow_command_stays_one_command(value):
    message, prop = escape.gh_data(value), escape.gh_property(value)
    assert "\n" not in message and "\r" not in message and "::" not in prop
    assert ":" not in prop and "," not in prop
    # GitHub unescapes %25 last: the message a runner shows is the text with controls shown
    unescaped = message.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")
    assert unescaped == escape.text(value)


# ---- CSV ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("cell, written", [
    ("=HYPERLINK(\"https://evil.example\",\"x\")", "'=HYPERLINK(\"https://evil.example\",\"x\")"),
    ("+1+1", "'+1+1"), ("-1+cmd|' /C calc'!A0", "'-1+cmd|' /C calc'!A0"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("'quoted", "''quoted"), ("-inf", "'-inf"),
    ("-4.3", "-4.3"), ("+2", "+2"), ("-1e-3", "-1e-3"), ("Dell", "Dell"), ("a=b", "a=b"), ("", ""),
    (-4.3, -4.3), (None, None), (3, 3),
])
def test_the_owasp_rule(cell, written):
    assert escape.csv_cell(cell) == written
    assert escape.csv_restore(escape.csv_cell(cell)) == cell


@given(st.lists(st.tuples(partner_text, st.floats(allow_nan=False, allow_infinity=False, width=32)),
                min_size=1, max_size=6), partner_text)
def test_a_table_written_and_read_back_is_the_table(rows, name):
    frame = pd.DataFrame({"system": [r[0] for r in rows], "deviation_pct": [r[1] for r in rows],
                          name or "x": [r[0] for r in rows]})
    written = pd.read_csv(io.StringIO(escape.csv_text(frame)), dtype=str, keep_default_na=False)
    assert all(not c.startswith(escape.CSV_FORMULA_START) or escape._NUMBER.fullmatch(c)
               for c in written.to_numpy().ravel().tolist() + list(written.columns))
    back = escape.csv_restore_frame(written)
    assert list(back.columns) == list(frame.columns)
    assert back["system"].tolist() == [r[0] for r in rows]
    assert back["deviation_pct"].astype(float).tolist() == frame["deviation_pct"].tolist()


def test_numbers_stay_numbers_and_an_unchanged_table_is_not_copied():
    frame = pd.DataFrame({"system": ["Dell", "HPE"], "deviation_pct": [-4.3, 1.0]})
    assert escape.csv_frame(frame) is frame
    text = escape.csv_text(pd.DataFrame({"system": ["=1+1"], "deviation_pct": [-4.3]}))
    assert text.splitlines()[1] == "'=1+1,-4.3"
