"""Moved to :mod:`pipeline.render` (one renderer for every report). These names
stay so that callers of the gate's renderers keep working."""

from __future__ import annotations

from .render import (FORMATS, _escape_data, _escape_property, as_json, gate_text as text,  # noqa: F401
                     gate_verdict as _verdict, github, junit, markdown, render)
from .model import UNVERIFIED_FOOTNOTE  # noqa: F401
