"""The model's shared facts: locations, JSON-safe values, the renderer, and
round conventions read from schemas/ (caches keyed on the schemas folder)."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, strategies as st

from conftest import RULES, REPO

from pipeline.output import render
from pipeline.core.rules import Rules
from pipeline.core.findings import Report, located
from pipeline.core.model import Source, plain


@given(st.text(min_size=1), st.one_of(st.none(), st.integers(min_value=1, max_value=10**6)))
def test_a_rows_place_is_its_file_and_line_columns_whatever_the_file_name(file, line):
    # no text is parsed: a file named "a.csv:3" is that file, never line 3 of "a.csv"
    assert Source.of_row({"file": file, "line": line}) == Source(file, line)
    assert Source.of_row({"reference_file": file, "reference_line": line}, prefix="reference_") == Source(file, line)


def test_a_rows_line_from_a_table_is_an_int_or_none():
    frame = pd.DataFrame({"file": ["a.csv", "b.csv"], "line": pd.array([3, None], dtype="Int64")})
    assert [Source.of_row(r) for r in frame.to_dict("records")] == [Source("a.csv", 3), Source("b.csv")]
    assert type(Source.of_row(frame.iloc[0]).line) is int


def test_a_source_names_its_place_and_its_path():
    assert Source("m.yaml", 4, key="submitted_at").place == "line 4, key submitted_at"
    assert Source("r.csv", 2, column="value").place == "line 2, column value"
    assert Source("r.csv").place == "whole file"
    where = Source("v6.0/Dell/v2/results.csv", 3, root="submissions")
    assert (where.path, where.cell, str(where)) == (
        "submissions/v6.0/Dell/v2/results.csv", "v6.0/Dell/v2/results.csv:3", "submissions/v6.0/Dell/v2/results.csv:3")


def test_a_table_source_is_under_the_root_only_when_laid_out_as_a_version():
    def path(file: str) -> str:
        return Source.of_row({"file": file, "line": 3}, "submissions").path

    assert path("v6.0/Dell/v2/results.csv") == "submissions/v6.0/Dell/v2/results.csv"
    assert path("/abs/path/summary.csv") == "/abs/path/summary.csv"
    assert path("results.csv") == "results.csv"
    assert path("v6.0/Dell/v01/results.csv") == "v6.0/Dell/v01/results.csv"   # not a version folder
    assert Source.of_row({"file": "results.csv", "line": None}) == Source("results.csv")


def test_plain_makes_every_value_json_safe():
    values = {"a": np.int64(3), "b": np.float64("nan"), "c": pd.NA, "d": [math.inf, np.bool_(True)],
              "e": pd.Timestamp("2026-01-01"), "f": {"g": np.float32(1.5)}, "h": None}
    out = plain(values)
    assert out == {"a": 3, "b": None, "c": None, "d": [None, True], "e": "2026-01-01 00:00:00",
                   "f": {"g": 1.5}, "h": None}
    json.dumps(out, allow_nan=False)


@pytest.mark.parametrize("fmt", render.FORMATS)
def test_every_format_renders_any_report(fmt):
    report = Report([{"source": "v6.0/Dell/v1/results.csv:2", "file": "v6.0/Dell/v1/results.csv", "line": 2,
                      "system": "a|b", "value": 1.5,
                      "label": "unverified"}],
                    [located("malformed-number", Source("v6.0/Dell/v1/results.csv", 2, column="value"),
                             "a number", "1 0", "bad number")], {"rows": 1})
    text = render.render(report, fmt, ("system", "value"))
    assert text
    if fmt == "json":
        assert json.loads(text) == report.to_dict()
    if fmt == "github":
        assert text.startswith("::error file=v6.0/Dell/v1/results.csv,line=2,title=malformed-number::")
    if fmt == "junit":
        assert 'failures="1"' in text
    if fmt == "text":
        assert "unverified: Result not verified by MLCommons Association." in text


def test_a_text_table_never_cuts_an_identifier():
    long = "87xMI355X_22xEPYC_9575F_with_a_very_long_system_identifier"
    lines = render.table_lines([{"system": long, "round": "v6.0"}], ("round", "system"))
    assert long in lines[1]


def test_round_conventions_come_from_schemas_and_two_rule_values_stand_side_by_side(tmp_path):
    copy = tmp_path / "schemas"
    shutil.copytree(REPO / "schemas", copy)
    (copy / "conventions.yaml").write_text(
        (copy / "conventions.yaml").read_text().replace("power[ _-]?cap", "eco[ _-]?mode"))
    models = (copy / "models.yaml").read_text()
    (copy / "models.yaml").write_text(models.replace(
        "scenarios: [Offline, Server, Interactive, SingleStream, MultiStream]", "scenarios: [Offline]"))
    assert RULES.power_cap_pattern().search("8xMI355X_PowerCap")
    other = Rules.load(copy)            # its own caches: the project's rules are untouched
    assert other.power_cap_pattern().search("8xMI355X_EcoMode")
    assert not other.power_cap_pattern().search("8xMI355X_PowerCap")
    assert other.scenarios() == ("Offline",)
    assert other.choices("division") == ("closed", "open", "network")
    assert "Server" in RULES.scenarios()
    assert RULES.power_cap_pattern().search("8xMI355X_PowerCap")
    with pytest.raises(AttributeError):   # immutable: a value, not a switch
        RULES.folder = copy
