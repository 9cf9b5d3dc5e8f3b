"""The fast line scan of a LoadGen log (``loadgen._scan``) picks exactly the
lines the plain scan it replaced picked: the plain scan is kept here, as the
reference, and both run on real logs, generated logs and near misses (a
quote or a second ``"key"`` inside or after a long integer array, lines cut
short, escaped keys, CRLF, stray lines)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings, strategies as st

from pipeline.readers import loadgen, round_rules
from pipeline.readers.tree_result import log_keys
from conftest import RULES

TREE = Path(__file__).resolve().parent / "real" / "v5.1-submission-tree" / "closed"
MARKER, KEYED = loadgen.MARKER, loadgen.MARKER + ' {"key": "'


def reference_scan(text: str, keys):
    """The plain scan (one substring search of each line), the tuned scan's oracle."""
    todo = []
    marked = number = pos = 0
    size = len(text)
    find, startswith = text.find, text.startswith
    keyed = len(KEYED)
    while pos <= size:
        end = find("\n", pos)
        if end < 0:
            end = size
        number += 1
        if startswith(MARKER, pos):
            marked += 1
            if keys is not None and startswith(KEYED, pos) and startswith("}}", end - 2):
                close = find('"', pos + keyed, end)
                if close > 0:
                    key = text[pos + keyed:close]
                    if key not in keys and "\\" not in key and find('"key"', close, end) < 0:
                        pos = end + 1
                        continue
            todo.append((number, text[pos:end]))
        pos = end + 1
    return marked, todo


def keys_that_count():
    return log_keys(round_rules.all_rounds(RULES), round_rules.formats(RULES))


def test_real_logs_scan_as_before():
    keys = keys_that_count()
    logs = sorted(TREE.glob("*/results/*/*/*/performance/run_1/mlperf_log_detail.txt"))
    assert len(logs) == 30
    for path in logs:
        text = path.read_text(encoding="utf-8")
        assert loadgen._scan(text, keys) == reference_scan(text, keys), path
        assert loadgen._scan(text, None) == reference_scan(text, None), path


META = ', "time_ms": 1.5, "namespace": "mlperf::logging", "metadata": {"is_error": false, "line_no": 9}}'
ARRAYS = st.lists(st.integers(0, 99999), max_size=40).map(lambda xs: ",".join(map(str, xs)))
NEAR = st.sampled_from(['"', '"key"', '"key": "result_validity"', "\\", "]", "[", "}}", "\r", "", ",", " "])


@st.composite
def lines(draw):
    key = draw(st.sampled_from(["loaded_qsl_set", "result_validity", "sut_name", "result_\\u0076alidity",
                                "effective_scenario", ""]))
    inside, after = draw(NEAR), draw(NEAR)
    array = draw(ARRAYS)
    cut = draw(st.integers(0, 3))
    shape = draw(st.sampled_from(["array", "value", "odd", "stray"]))
    if shape == "array":
        line = f'{KEYED}{key}", "value": [{array}{inside}]{after}{META}'
    elif shape == "value":
        line = f'{KEYED}{key}", "value": {json.dumps(inside)}{after}{META}'
    elif shape == "odd":
        line = f'{MARKER}  {{"key":"{key}", "value": [{array}]{META}'
    else:
        line = draw(st.sampled_from(["hello", "", MARKER, KEYED]))
    return line[:len(line) - cut] if cut else line


@settings(max_examples=300)
@given(st.lists(lines(), max_size=12), st.booleans(), st.booleans())
def test_generated_logs_scan_as_before(body, crlf, final_newline):
    keys = frozenset({"result_validity", "effective_scenario"})
    text = ("\r\n" if crlf else "\n").join(body) + ("\n" if final_newline else "")
    assert loadgen._scan(text, keys) == reference_scan(text, keys)
    assert loadgen._scan(text, None) == reference_scan(text, None)
