"""JSON from partners' files with a bound on nesting (too deep is a finding,
never a RecursionError); an object that states a key twice (``json`` keeps
the last silently) comes back as a :class:`Duplicates` naming those keys."""

from __future__ import annotations

import json
import re

from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.readers.base import as_source

MAX_DEPTH = 16
# a JSON string (unrolled loop: fast on long strings) or one bracket
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


class Duplicates(dict):
    """A JSON object that stated the keys ``duplicates`` twice (holding the last values, as ``json`` does)."""

    duplicates: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, object]]) -> dict:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    repeated = [k for k, _ in pairs if k in seen or seen.add(k)]
    dup = Duplicates(out)
    dup.duplicates = tuple(dict.fromkeys(repeated))
    return dup


def repeated_key(value: object, where: Source, message: str) -> Finding | None:
    if not isinstance(value, Duplicates):
        return None
    key = value.duplicates[0]
    return located("duplicate-key", where.at(key=key), f"{key!r} once", f"{key!r} twice", message)


def scan(text: str, max_depth: int = MAX_DEPTH) -> tuple[int | None, list[int]]:
    """(line where nesting first exceeds ``max_depth``, or None; the line of each object of a top-level array)."""
    depth = 0
    starts: list[int] = []
    for m in _TOKEN.finditer(text):
        char = m.group()
        if char in "[{":
            depth += 1
            if depth > max_depth:
                return text.count("\n", 0, m.start()) + 1, []
            if depth == 2 and char == "{":
                starts.append(m.start())
        elif char in "]}":
            depth -= 1
    return None, _lines_of(text, starts)


def loads(text: str, where: Source | str, max_depth: int = MAX_DEPTH
          ) -> tuple[object | None, list[int], list[Finding]]:
    where = as_source(where)
    too_deep, starts = scan(text, max_depth)
    if too_deep is not None:
        return None, [], [located("too-deeply-nested", where.at(line=too_deep),
                                  f"at most {max_depth} levels of nesting", "deeper",
                                  "the JSON document nests too deeply")]
    try:
        return json.loads(text, object_pairs_hook=_object), starts, []
    except RecursionError:
        return None, [], [located("too-deeply-nested", where, f"at most {max_depth} levels", "deeper",
                                  "the JSON nests too deeply")]
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        return None, [], [located("format-mismatch", where.at(line=line), "valid JSON",
                                  str(exc).split(":")[0], "the file is not valid JSON")]


def _lines_of(text: str, positions: list[int]) -> list[int]:
    lines, line, last = [], 1, 0
    for pos in positions:
        line += text.count("\n", last, pos)
        lines.append(line)
        last = pos
    return lines
