"""The LoadGen detail log (``mlperf_log_detail.txt``): one ``:::MLLOG {json}``
per line; the first occurrence of a key counts; a line that is not valid JSON
is a finding. It names no submitter or system: the tree reader uses it.

Given the keys it needs, the parser decodes only the lines that may hold one:
a line whose plain key is another, and which ends as LoadGen ends a line
(``}}``), costs a prefix test (the 137 KB ``loaded_qsl_set`` line among them).
Asking the log for a key it was not told to keep is a bug, never a silent None.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.core import textcheck
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.readers.base import as_source, read_text
from pipeline.readers.round_rules import MetricSpec

MARKER = ":::MLLOG"
SHOWN_CHARS = 80
MAX_MALFORMED_REPORTED = 10
# keys LoadGen itself repeats with other values (real logs: generic_message,
# warning_generic_message); any other key twice with two values is a finding
REPEATABLE = ("_message",)
_LONG_LINE = 4096
_ARRAY_HEAD = '"value": ['
_DECODER = json.JSONDecoder()
_KEYED = MARKER + ' {"key": "'
_ARRAY_AFTER_KEY = '", "value": ['     # from the key's closing quote
_LEADING_ZERO = re.compile(rb"(?:^|,)0[0-9]")   # an item such as 07: not a JSON number


@dataclass
class LoadgenLog:
    """The keys of a detail log, the line each first appears on, and findings."""

    where: Source                # the log file
    values: dict[str, object] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    keys: frozenset[str] | None = None     # the keys parsed; None: every key

    def get(self, key: str) -> object | None:
        if self.keys is not None and key not in self.keys:
            raise LookupError(f"LoadGen key {key} was not among the keys parsed (a bug: add it)")
        return self.values.get(key)

    def at(self, key: str) -> Source:
        return Source(self.where.file, self.lines.get(key), key=key, root=self.where.root)


def read_log(path: Path, where: Source | str, max_bytes: int, keys: frozenset[str] | None = None
             ) -> tuple[LoadgenLog | None, list[Finding]]:
    text, found = read_text(path, where, max_bytes, checks=textcheck.NONE)   # machine-written
    if text is None:
        return None, found
    return parse(text, where, keys), []


def parse(text: str, where: Source | str, keys: frozenset[str] | None = None) -> LoadgenLog:
    where = as_source(where)
    log = LoadgenLog(where, keys=None if keys is None else frozenset(keys))
    bad: list[tuple[int, str]] = []
    marked, todo = _scan(text, keys)
    for number, line in todo:
        entry = _decode(line[len(MARKER):])
        if entry is None:
            bad.append((number, line[:SHOWN_CHARS]))
            continue
        key = entry["key"]
        if keys is not None and key not in keys:
            continue
        if key not in log.values:
            log.values[key] = entry.get("value")
            log.lines[key] = number
        elif not _same(log.values[key], entry.get("value")) and not key.endswith(REPEATABLE):
            log.findings.append(located(
                "duplicate-key", where.at(line=number, key=key),
                f"{key} once (or repeated with the same value)",
                f"{_shown(entry.get('value'))} after {_shown(log.values[key])} on line {log.lines[key]}",
                "a LoadGen key repeats with another value (the first counts, but which is true?)"))
    if not marked:
        log.findings.append(located(
            "format-mismatch", where.at(line=1), "':::MLLOG {json}' lines (a LoadGen detail log)",
            "an empty file" if not text.strip() else "no ':::MLLOG' line",
            "the file is not a LoadGen detail log"))
    for number, shown in bad[:MAX_MALFORMED_REPORTED]:
        log.findings.append(located(
            "malformed-log-line", where.at(line=number),
            "':::MLLOG ' and a JSON object with a string 'key'", shown,
            "a LoadGen log line is not valid JSON"))
    if len(bad) > MAX_MALFORMED_REPORTED:
        log.findings.append(located(
            "malformed-log-line", where.at(line=bad[MAX_MALFORMED_REPORTED][0]), "valid ':::MLLOG' lines",
            f"{len(bad) - MAX_MALFORMED_REPORTED} more malformed lines "
            f"(lines {bad[MAX_MALFORMED_REPORTED][0]}..{bad[-1][0]})",
            "more malformed LoadGen log lines (not listed one by one)"))
    return log


def _scan(text: str, keys: frozenset[str] | None) -> tuple[int, list[tuple[int, str]]]:
    """The number of ``:::MLLOG`` lines, and (line number, line) of those to
    decode; lines are found in place: one skipped is never copied."""
    todo: list[tuple[int, str]] = []
    marked = number = pos = 0
    size = len(text)
    find, startswith = text.find, text.startswith
    keyed, after = len(_KEYED), len(_ARRAY_AFTER_KEY)
    while pos <= size:
        end = find("\n", pos)
        if end < 0:
            end = size
        number += 1
        if startswith(MARKER, pos):
            marked += 1
            if keys is not None and startswith(_KEYED, pos) and startswith("}}", end - 2):
                close = find('"', pos + keyed, end)
                if close > 0:
                    key = text[pos + keyed:close]
                    if key not in keys and "\\" not in key:
                        # does "key" occur again after the key's closing quote? A line whose value is an
                        # array (loaded_qsl_set: 137 KB of integers) is searched from its first quote on
                        if startswith(_ARRAY_AFTER_KEY, close):
                            quote = find('"', close + after, end)
                            again = quote >= 0 and find('"key"', quote, end) >= 0
                        else:
                            again = find('"key"', close, end) >= 0
                        if not again:
                            pos = end + 1
                            continue
            todo.append((number, text[pos:end]))
        pos = end + 1
    return marked, todo


def _same(a: object, b: object) -> bool:
    """Equal JSON values (1 and 1.0 alike; True and 1 not)."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def _shown(value: object) -> str:
    return repr(value)[:SHOWN_CHARS]


def _decode(body: str) -> dict | None:
    """The line's JSON object, or None; a long flat integer array (never used) is kept empty."""
    if len(body) > _LONG_LINE:
        body = _elide_int_array(body)
    body = body.strip()
    try:
        entry, end = _DECODER.raw_decode(body)   # json.loads without two wrapper calls
    except (ValueError, RecursionError):
        return None
    if end != len(body) or not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        return None
    return entry


def _elide_int_array(body: str) -> str:
    """``"value": [1,2,3]`` -> ``"value": []`` when the array is well-formed
    non-negative JSON integers (checked on bytes, in C); else the body unchanged."""
    start = body.find(_ARRAY_HEAD)
    if start < 0:
        return body
    first = start + len(_ARRAY_HEAD)
    end = body.find("]", first)
    if end <= first:
        return body
    try:
        items = body[first:end].encode("ascii")
    except UnicodeEncodeError:
        return body
    if (items.translate(None, b"0123456789,") or b",," in items or items[:1] == b","
            or items[-1:] == b"," or _LEADING_ZERO.search(items)):
        return body
    return body[:first] + body[end:]


def number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def result_text(log: LoadgenLog, spec: MetricSpec) -> str | None:
    """The published result as text, in the published units (ns -> ms), or None."""
    value = log.get(spec.key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None if value is None else str(value)
    if spec.divide_by != 1:
        return repr(value / spec.divide_by)
    return str(value)
