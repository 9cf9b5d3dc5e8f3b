"""One vocabulary: every verdict, status and outcome word comes from one
enumeration, with one code (JSON, CSV) and one label (text, markdown, JUnit,
the HTML report); one report rendered in every format says each row's verdict
the same way."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

from conftest import RULES, canonical_row
from pipeline.analyses.compare import compare
from pipeline.core import vocabulary
from pipeline.core.vocabulary import AgreementVerdict, ClaimVerdict, KINDS, Outcome, Severity, Status, label, tally
from pipeline.ingest import table
from pipeline.output import render
from pipeline.output.report.html import verdict as html_verdict


def _report():
    """A partner within the tolerance, one outside it, one with no reference, one on another vendor's part."""
    rows = [canonical_row(),                                                        # the reference
            canonical_row(submitter="Dell", system="XE9785", value=101000.0, file="v6.0/Dell/v1/r.csv", line=2),
            canonical_row(submitter="Dell", system="XE9785", scenario="Offline", value=90000.0,
                          file="v6.0/Dell/v1/r.csv", line=3),
            canonical_row(submitter="HPE", system="XD685", model="mixtral-8x7b", value=5.0,
                          file="v6.0/HPE/v1/r.csv", line=2),
            canonical_row(submitter="Lenovo", system="SR780", accelerator="B300", composition="B300:8",
                          file="v6.0/Lenovo/v1/r.csv", line=2)]
    rows[2]["model"] = "llama2-70b-99"
    refs = canonical_row(scenario="Offline", value=100000.0, file="v6.0/AMD/v1/results.csv", line=3)
    return compare(RULES, table.to_frame([*rows, refs]))


def test_every_word_has_one_code_and_one_label():
    labels: dict[str, set[str]] = {}
    for kind in KINDS:
        for word in kind:
            assert word.code == word.value and word == word.code and word.label
            labels.setdefault(word.code, set()).add(word.label)
    assert {code: found for code, found in labels.items() if len(found) > 1} == {}
    # the words that collided are apart: an input row set aside is not a partner result excluded,
    # and no finding says "unverifiable" beside the label "unverified"
    assert Outcome.SET_ASIDE != AgreementVerdict.EXCLUDED
    assert Status.POST_DEADLINE.label == "unverified"
    from pipeline.core.findings import CODES
    assert not [c for c in CODES if "unverifiable" in c]
    assert set(vocabulary.FINDING_VERDICTS) <= set(CODES)


def test_the_tally_counts_every_kind_in_order_from_a_list_or_a_column():
    import pandas as pd

    words = ["agree", "deviates", "agree", "excluded"]
    want = {"agree": 2, "deviates": 1, "no-reference": 0, "excluded": 1}
    assert tally(words, tuple(AgreementVerdict)) == want
    assert tally(pd.Series(words), tuple(AgreementVerdict)) == want
    assert list(tally([], tuple(ClaimVerdict))) == [w.code for w in ClaimVerdict]


def test_one_report_says_each_verdict_the_same_way_in_every_format():
    report = _report()
    verdicts = {r["source"]: str(r["verdict"]) for r in report.rows}
    assert set(verdicts.values()) == {"agree", "deviates", "no-reference", "excluded"}

    doc = json.loads(render.render(report, "json"))
    assert {r["source"]: r["verdict"] for r in doc["rows"]} == verdicts
    assert {f["severity"] for f in doc["findings"]} == {Severity.ERROR.code}
    rows = list(csv.DictReader(io.StringIO(render.render(report, "csv"))))
    assert {r["source"]: r["verdict"] for r in rows} == verdicts

    text = render.render(report, "text", ("verdict", "submitter", "source"), None).splitlines()
    markdown = render.render(report, "markdown")
    for source, code in verdicts.items():
        (line,) = [x for x in text if x.rstrip().endswith(source)]
        assert line.startswith(label(code) + " "), line
        assert f"| {label(code)} |" in markdown
        assert html_verdict(code).endswith(f">{label(code)}</span>")
    # a code stays a code where it is a key (the summary's counts), never as a row's word
    assert not [x for x in text if x.startswith("no-reference")] and "| no-reference | Dell" not in markdown

    cases = {c.get("file") + ":" + c.get("line"): c for c in ET.fromstring(render.render(report, "junit")).iter("testcase")}
    for source, code in verdicts.items():
        skipped = cases[source].find("skipped")
        if code in (AgreementVerdict.NO_REFERENCE, AgreementVerdict.EXCLUDED):
            assert skipped is not None and skipped.get("message").startswith(label(code) + ": ")
        else:
            assert skipped is None
