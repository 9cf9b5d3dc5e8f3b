"""The columnar pieces of the bulk path against what they replace, on the
real MLCommons checker summaries (tests/real): each text column decided once
per distinct raw value (:func:`pipeline.ingest.bulk._coded`) equals the per-row
strip and placeholder test (:func:`pipeline.ingest.bulk._text`); combinations keyed
by integer codes (:func:`pipeline.ingest.bulk.group_codes`) are pandas' groups; and
the whole bulk path gives the row-by-row path's rows, dispositions and
findings, dtypes included, on the real files and on copies with padded and
placeholder cells."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

from conftest import REAL

from pipeline.ingest import bulk
from pipeline import readers
from pipeline.ingest.normalise import Context
from pipeline.readers import tabular

SUMMARIES = [REAL / "v5.1-checker-summary.csv", REAL / "v6.0-checker-summary.csv"]


def _raw_table(path):
    result = readers.read(path, path.name)
    assert result.tables, "the real summary takes the bulk path"
    return result.tables[0]


@pytest.mark.parametrize("path", SUMMARIES, ids=lambda p: p.name)
def test_coded_columns_are_the_per_row_texts(path):
    frame = _raw_table(path).frame
    for column in [*frame.columns, "absent"]:
        coded = bulk._coded(frame, column)
        per_row = bulk._text(frame, column).to_numpy(dtype=object, na_value=None)
        assert coded.values[coded.codes].tolist() == per_row.tolist(), column
        assert len(set(coded.values.tolist())) == len(coded.values)   # equal texts share one code


def test_coded_merges_padded_and_placeholder_spellings():
    frame = pd.DataFrame({"c": pd.array([" AMD", "AMD ", "AMD", "N/A", " none ", "", "Dell", None],
                                        dtype="str")})
    coded = bulk._coded(frame, "c")
    assert coded.values[coded.codes].tolist() == ["AMD", "AMD", "AMD", None, None, None, "Dell", None]
    assert coded.isna().tolist() == [False, False, False, True, True, True, False, True]
    assert coded.equals("AMD").tolist() == [True, True, True, False, False, False, False, False]


@pytest.mark.parametrize("path", SUMMARIES, ids=lambda p: p.name)
def test_group_codes_are_pandas_groups_on_real_fields(path):
    frame = _raw_table(path).frame
    fields = ["accelerator", "platform", "accelerators_per_node", "nodes", "total_accelerators"]
    coded = [bulk._coded(frame, f) for f in fields]
    groups, firsts = bulk.group_codes([c.codes for c in coded], [len(c.values) for c in coded])
    texts = pd.DataFrame({f: bulk._text(frame, f) for f in fields})
    expected = texts.groupby(fields, sort=False, dropna=False).ngroup().to_numpy()
    assert groups.tolist() == expected.tolist()
    assert firsts.tolist() == [int(np.flatnonzero(expected == g)[0]) for g in range(expected.max() + 1)]


def test_group_codes_keep_the_key_in_int64_when_the_radix_overflows():
    rng = np.random.default_rng(12)
    columns = [rng.integers(0, 3, 500) for _ in range(4)]
    sizes = [2 ** 20] * 4          # a radix of 2**80: refactorised on the way
    groups, firsts = bulk.group_codes(columns, sizes)
    expected = pd.DataFrame(columns).T.groupby(list(range(4)), sort=False).ngroup().to_numpy()
    assert groups.tolist() == expected.tolist()
    assert len(firsts) == expected.max() + 1


def _padded(path) -> str:
    """The real file with descriptive cells padded and some blanks as placeholders."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    for i, row in enumerate(rows[1:]):
        for j, name in enumerate(header):
            if name in ("Organization", "Platform", "accelerator_model_name", "Division") and i % 3 == 0:
                row[j] = f" {row[j]} "
            if name == "SystemName" and i % 5 == 0:
                row[j] = "N/A"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _both_paths(path, monkeypatch):
    out = []
    for bulk_path in (True, False):
        with monkeypatch.context() as m:
            m.setattr(bulk, "BULK_MIN_ROWS", 0)
            if not bulk_path:
                m.setattr(tabular, "parse_csv", lambda text: None)
            result = readers.read(path, path.name)
            assert bool(result.tables) == bulk_path
            done = bulk.normalise_result(result, Context(status="verified", round=result.round))
        out.append((done.frame.reset_index(drop=True),
                    sorted((d.source, d.outcome, d.codes, d.reason) for d in done.dispositions),
                    sorted((f.code, f.file, f.place, f.expected, f.found) for f in done.findings)))
    return out


@pytest.mark.parametrize("padded", [False, True], ids=["as-published", "padded"])
@pytest.mark.parametrize("source", SUMMARIES, ids=lambda p: p.name)
def test_bulk_equals_row_path_on_real_summaries(tmp_path, monkeypatch, source, padded):
    path = tmp_path / source.name
    path.write_text(_padded(source) if padded else source.read_text(encoding="utf-8"), encoding="utf-8")
    (fast, fast_out, fast_found), (slow, slow_out, slow_found) = _both_paths(path, monkeypatch)
    assert fast_out == slow_out and fast_found == slow_found
    assert len(fast) > 0 and len(fast) + len(fast_out) == len(path.read_text().splitlines()) - 1
    from pipeline.ingest.table import coerce
    pd.testing.assert_frame_equal(coerce(fast), coerce(slow))      # dtypes too


@pytest.mark.parametrize("cells", [
    [" AMD", "TBD", "\tDell\t", "-", "Null", "", "x"],                       # ASCII: Python's strip
    ["\u00a0AMD\u00a0", "Gigabyte\u3000", "N/A", "İ", "Σ", " ", "AMD"],      # not: pandas' strip
], ids=["ascii", "unicode"])
def test_coded_is_text_on_both_strip_paths(cells):
    frame = pd.DataFrame({"c": pd.array(cells * 3 + [None], dtype="str")})
    coded = bulk._coded(frame, "c")
    assert coded.values[coded.codes].tolist() == \
        bulk._text(frame, "c").to_numpy(dtype=object, na_value=None).tolist()


# --- Arrow's CSV reader (tabular.parse_csv) and the value column (bulk._numbers)

def _pandas_text(text: str) -> pd.DataFrame:
    """What parse_csv gave before Arrow read the file: pandas' reader, text columns."""
    frame = pd.read_csv(io.BytesIO(text.encode("utf-8")), dtype=str, keep_default_na=False, engine="pyarrow")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


EDGE_CSVS = ["a,b\n1,2\n", "a,b\n1,2", '"a","b c"\n"1",""\n', "value,b\n1.5,ü\nNA,null\n",
             "Result,Organization\n 3 ,X\n", " a , b \nx,y\n", "a,,b\n1,2,3\n", "a\nx\nx\ny\n"]


@pytest.mark.parametrize("text", [p.read_text(encoding="utf-8") for p in SUMMARIES] + EDGE_CSVS,
                         ids=[p.name for p in SUMMARIES] + [repr(t) for t in EDGE_CSVS])
def test_arrow_csv_columns_are_pandas_text(text):
    frame, expected = tabular.parse_csv(text), _pandas_text(text)
    renamed = "" in next(csv.reader([text.split("\n", 1)[0]]))   # pandas names it "Unnamed: N"
    assert list(frame.columns) == list(expected.columns)
    for column in frame.columns:
        assert frame[column].astype("str").tolist() == expected[column].tolist(), column
        # codes as read, except the per-row result column (and a header pandas renames: all text)
        coded = isinstance(frame[column].dtype, pd.CategoricalDtype)
        assert coded == (column not in tabular.PLAIN and not renamed)
        assert bulk._coded(frame, column).values[bulk._coded(frame, column).codes].tolist() == \
            bulk._coded(expected, column).values[bulk._coded(expected, column).codes].tolist()


@pytest.mark.parametrize("text", ["a,b\n1,2,3\n", "a,b\n1\n", "a,b\n", 'a\n"x\ny"\n', "a,b\n1,2\n\n"])
def test_arrow_csv_refuses_what_the_row_path_must_report(text):
    assert tabular.parse_csv(text) is None


def test_numbers_are_float_of_each_matching_text():
    rng = np.random.default_rng(12)
    texts = ["1.", ".5", "+5", "-5", "1e400", "1e-400", "00012", "1E5", "1.e3", "+.5e-2", "0",
             "123456789012345678901234567890", "4.9e-324", "2.4e-324", "1.7976931348623158e308",
             "abc", "", " 5", "1,5", "nan", "inf", "0x10", None]
    texts += [f"{rng.integers(0, 10**9)}.{rng.integers(0, 10**12):012d}e{rng.integers(-20, 20)}"
              for _ in range(2000)]
    column = pd.Series(pd.array(texts, dtype="str"))
    matching = column.where(column.str.fullmatch(bulk.NUMBER_PATTERN), None)
    expected = [float(t) if isinstance(t, str) and bulk.normalize._NUMBER.match(t) else np.nan for t in texts]
    assert np.array_equal(bulk._numbers(matching), np.array(expected), equal_nan=True)
    as_objects = pd.Series(["1.5", None, "x"], dtype=object)   # the cast refuses "x": pandas' parser decides
    assert np.array_equal(bulk._numbers(as_objects), [1.5, np.nan, np.nan], equal_nan=True)
