"""The report's Jinja environment, the filters that print a value for reading,
and a table's rows: Python computes the values; the templates write the markup.

Escaping. Autoescape is on, and every ``{{ }}`` goes through :func:`html.escape`
(``finalize``: the report spells quotes ``&quot;`` and ``&#x27;``, as it always
has; markupsafe would write ``&#34;`` and ``&#39;``). Only markup safe by
construction is not escaped again: what the templates build, :func:`wrap`'s
output, the package's CSS and script; never partner text marked safe. In a
template, join text to markup in markup (``{{ a }}{{ b }}``), never with ``~``
or ``|join``: those escape with markupsafe's spelling.

Layout. In a ``.html.j2`` template a line break and the indentation after it
are not output: each element on its own line; running text, and every
``{{ }}`` and ``{% %}``, on one line.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass

from jinja2 import Environment, PackageLoader, StrictUndefined
from jinja2.ext import Extension
from markupsafe import Markup

from pipeline.core.model import COMPARISON_DISCLAIMER, LABEL_UNVERIFIED, UNVERIFIED_FOOTNOTE
from pipeline.core.vocabulary import label
from pipeline.output import figures

TITLE = "mlrepro report: MLPerf Inference partner results against the reference"


def text(value) -> str:
    """Plain text of a cell value (no floats printed raw)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return figures.readable(value)
    return str(value)


def wrap(value) -> Markup:
    """Escaped text that may break after '_' and '/' (long system ids, paths)."""
    return Markup(html.escape(text(value)).replace("_", "_<wbr>").replace("/", "/<wbr>"))


def anchor(*parts) -> str:
    """An id (and a CSS class) of text: each part's characters other than letters and digits as '-'."""
    return "-".join("".join(c if c.isalnum() else "-" for c in str(p)) for p in parts)


@dataclass
class Row:
    """A table's row: the item its cells show, its class, whether it prints."""

    item: object
    cls: str = ""
    printed: bool = True


def _escaped(value):
    return value if hasattr(value, "__html__") else Markup(html.escape(str(value)))


class _JoinedLines(Extension):
    """A ``.html.j2`` template's line breaks, and the indentation after them, are not output."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        return re.sub(r"\n[ \t]*", "", source) if name and name.endswith(".html.j2") else source


ENV = Environment(loader=PackageLoader("pipeline.output.report"), autoescape=True, undefined=StrictUndefined,
                  keep_trailing_newline=True, finalize=_escaped, extensions=[_JoinedLines])
ENV.filters.update(text=text, wrap=wrap, label=label, count=figures.count, readable=figures.readable,
                   pct=figures.pct, signed_pct=figures.signed_pct, quantity=figures.quantity, tolerance=figures.tolerance)
ENV.globals.update(anchor=anchor, number=figures.number, TITLE=TITLE, UNVERIFIED_LABEL=LABEL_UNVERIFIED,
                   UNVERIFIED_FOOTNOTE=UNVERIFIED_FOOTNOTE, COMPARISON_DISCLAIMER=COMPARISON_DISCLAIMER)


def render(template: str, **values) -> str:
    return ENV.get_template(template).render(**values)


def macro(template: str, name: str):
    """A macro of a template, called from Python (its output is markup)."""
    return getattr(ENV.get_template(template).module, name)


def verdict(code, text_: str | None = None) -> str:
    """A verdict as a coloured tag (the CSS class is its code; the text its label)."""
    return str(macro("macros.html.j2", "verdict")(code, text_))
