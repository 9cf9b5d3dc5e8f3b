"""Moved to :mod:`pipeline.output.render` (one renderer for every report). These names
stay so that callers of the gate's renderers keep working."""

from __future__ import annotations

from pipeline.output.render import (FORMATS, _escape_data, _escape_property, as_json, gate_text as text, gate_verdict as _verdict, github, junit, markdown, render)
from pipeline.core.model import UNVERIFIED_FOOTNOTE  # noqa: F401
