"""`mlrepro report`: one self-contained HTML file (inline CSS and SVG, nothing
from the network), verified and post-deadline apart, every text escaped; one
test renders it in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import UNVERIFIED_FOOTNOTE, canonical_row, read_csv, run, write_canonical

CHROMIUM = Path("/usr/bin/chromium")
TITLE = "mlrepro report: MLPerf Inference partner results against the reference"
HOSTILE = "<img src=x onerror=alert(1)>"


# ---- inputs ----------------------------------------------------------------------------

def _results() -> list[dict]:
    return [
        canonical_row(submitter="AMD", scenario="Server", value=100000.0,
                      source="v6.0/AMD/v1/results.csv:2"),
        canonical_row(submitter="AMD", scenario="Offline", value=110000.0,
                      source="v6.0/AMD/v1/results.csv:3"),
        canonical_row(submitter="Dell", system="PowerEdge_XE9785_8xMI355X", scenario="Server",
                      value=98000.0, source="v6.0/Dell/v2/results.csv:2", submission_version=2),
        canonical_row(submitter="Dell", system="PowerEdge_XE9785_8xMI355X", scenario="Offline",
                      value=99000.0, source="v6.0/Dell/v2/results.csv:3", submission_version=2),
        canonical_row(submitter="Vultr", system=f"Cloud {HOSTILE}", scenario="Server", value=101000.0,
                      status="post-deadline", source="v6.0/Vultr/v1/results.csv:2"),
    ]


def _doc(rows: list[dict]) -> dict:
    return {"summary": {"rows": len(rows)}, "findings": [], "rows": rows}


SCALING = _doc([
    {"round": "v6.0", "submitter": "AMD", "system": "87xMI355X_22xEPYC_9575F", "nodes": 11,
     "total_accelerators": 87, "value": 1016380.0, "expected": 1090566.75, "efficiency_pct": 93.197413,
     "verdict": "sub-linear", "references": [{"accelerator": "MI355X", "rule": "same-submitter"}],
     "status": "verified", "label": "verified", "footnote": ""},
    {"round": "v6.0", "submitter": "MangoBoost", "system": "32xMI355X-Cluster", "nodes": 4,
     "total_accelerators": 32, "value": 300000.0, "expected": 400000.0, "efficiency_pct": 75.0,
     "verdict": "sub-linear", "status": "post-deadline", "label": "unverified",
     "footnote": UNVERIFIED_FOOTNOTE}])
CLAIMS = _doc([
    {"id": "generation-gain", "kind": "ratio", "text": "3.1x MI325X", "claimed": 3.1, "computed": 3.13,
     "holds": True, "verdict": "holds", "subject": {"round": "v6.0", "submitter": "AMD", "system": "s",
                                                   "value": 100282.0, "units": "Tokens/s"},
     "label": "verified", "footnote": ""},
    {"id": "post-deadline-parity", "kind": "ratio", "text": f"parity {HOSTILE}", "claimed": 100,
     "computed": 100.88, "holds": False, "verdict": "does-not-hold", "subject": {"round": "v6.0"},
     "label": "unverified", "footnote": UNVERIFIED_FOOTNOTE, "cherry_picked": False}])


@pytest.fixture
def inputs(tmp_path) -> dict[str, Path]:
    data = tmp_path / "data"
    results = write_canonical(data / "results.parquet", _results())
    agreement = data / "agreement.csv"
    run("compare", results, "-o", agreement, "--exit-zero", expect=0)
    rejected = data / "rejected.csv"
    rejected.write_text("source,outcome,codes,reason\n"
                        "v6.0/Dell/v1/results.csv:4,rejected,malformed-number,the value is not a plain "
                        "finite number\n", encoding="utf-8")
    versions = data / "versions.csv"
    versions.write_text(
        "round,submitter,version,path,used,status_declared,status,submitted_at,supersedes\n"
        "v6.0,AMD,1,v6.0/AMD/v1,True,verified,verified,2026-02-20T10:00:00+00:00,\n"
        "v6.0,Dell,1,v6.0/Dell/v1,False,verified,verified,2026-02-19T10:00:00+00:00,\n"
        "v6.0,Dell,2,v6.0/Dell/v2,True,verified,verified,2026-02-21T10:00:00+00:00,1\n"
        "v6.0,Vultr,1,v6.0/Vultr/v1,True,post-deadline,post-deadline,2026-03-20T10:00:00+00:00,\n",
        encoding="utf-8")
    scaling, claims = data / "scaling.json", data / "claims.json"
    scaling.write_text(json.dumps(SCALING), encoding="utf-8")
    claims.write_text(json.dumps(CLAIMS), encoding="utf-8")
    docs = tmp_path / "audit" / "data_docs" / "index.html"
    docs.parent.mkdir(parents=True)
    docs.write_text("<html></html>", encoding="utf-8")
    return {"results": results, "agreement": agreement, "rejected": rejected, "versions": versions,
            "scaling": scaling, "claims": claims, "data_docs": docs, "out": tmp_path / "reports" / "index.html"}


def report(inputs: dict, *extra: object, with_docs: bool = True, expect: int = 0):
    args = ["report", inputs["results"], "--agreement", inputs["agreement"],
            "--rejected", inputs["rejected"], "--versions", inputs["versions"], "-o", inputs["out"]]
    if with_docs:
        args += ["--scaling", inputs["scaling"], "--claims", inputs["claims"],
                 "--data-docs", inputs["data_docs"]]
    return run(*args, *extra, expect=expect)


class Page(HTMLParser):
    """Tags with their attributes, the text of each section class, all text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.title = ""
        self._in_title = False
        self._stack: list[str] = []
        self.sections: dict[str, list[str]] = {}

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "section":
            self._stack.append(dict(attrs).get("class") or "")
        self._in_title = tag == "title" and not self.title and not self._stack

    def handle_endtag(self, tag):
        if tag == "section" and self._stack:
            self._stack.pop()
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_title:
            self.title += data
        for cls in set(self._stack):
            self.sections.setdefault(cls, []).append(data)

    def section_text(self, cls: str) -> str:
        return " ".join(self.sections.get(cls, []))


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


# ---- the file --------------------------------------------------------------------------

def test_the_report_is_one_offline_html_file(inputs):
    result = report(inputs)
    out = inputs["out"]
    assert result.stdout.strip() == f"wrote {out} and {out.parent / 'deviation.csv'}"
    html = out.read_text(encoding="utf-8")
    page = parse(out)
    assert page.title == TITLE
    names = [t for t, _ in page.tags]
    assert names.count("svg") >= 2                      # deviation and scaling plots
    assert names.count("table") >= 6
    assert "script" not in names and "img" not in names and "iframe" not in names
    for tag, attrs in page.tags:
        for key in ("src", "href", "xlink:href", "srcset", "data"):
            value = attrs.get(key) or ""
            assert not re.match(r"\s*(https?:)?//", value), (tag, key, value)
        if tag == "link":
            assert "stylesheet" not in (attrs.get("rel") or ""), attrs
    assert not re.search(r"url\(\s*['\"]?\s*(https?:)?//", html)
    assert not re.search(r"@import", html)
    assert "@media print" in html


def test_verified_and_post_deadline_results_are_in_separate_sections(inputs):
    report(inputs)
    page = parse(inputs["out"])
    verified, unverified = page.section_text("verified"), page.section_text("unverified")
    assert "PowerEdge_" in verified and "PowerEdge_" not in unverified
    assert "Vultr" in unverified and "Vultr" not in verified
    assert "Post-deadline results: unverified" in unverified
    text = " ".join(page.text)
    assert f"unverified: {UNVERIFIED_FOOTNOTE}" in text
    html = inputs["out"].read_text(encoding="utf-8")
    # every unverified figure carries the label and the footnote marker
    assert re.search(r"101000 Tokens/<wbr>s <span class=\"unv\">unverified<sup><a href=\"#fn-unverified\">1",
                     html)


def test_the_tables_hold_agreement_rejections_versions_scaling_and_claims(inputs):
    report(inputs)
    page = parse(inputs["out"])
    text = "".join(page.text)                           # <wbr> splits long ids into several texts
    for expected in ("Agreement with the reference", "-2.00%", "+1.00%", "deviates", "agree",
                     "malformed-number", "v6.0/Dell/v1/results.csv:4",
                     "Scaling efficiency per cluster", "93.20%", "75.00%",
                     "Claims ledger", "generation-gain", "✓ holds", "✗ does not hold",
                     "Submission versions", "superseded"):
        assert expected in text, expected
    versions = [r for r in re.findall(r"<tr>(.*?)</tr>", inputs["out"].read_text()) if ">v1<" in r]
    assert any("superseded" in r and ">v2<" in r for r in versions)     # Dell v1 superseded by v2
    assert "cherry_picked" in text                       # a key the renderer does not know, kept


def test_the_deviation_data_for_dvc_plots(inputs):
    report(inputs)
    rows = read_csv(inputs["out"].parent / "deviation.csv")
    assert list(rows[0]) == ["round", "partner", "model", "scenario", "system", "case", "status", "label",
                             "deviation_pct", "tolerance", "verdict"]
    got = {(r["partner"], r["scenario"], r["status"]): (round(float(r["deviation_pct"]), 2), r["verdict"])
           for r in rows}
    assert got == {("Dell", "Server", "verified"): (-2.0, "agree"),
                   ("Dell", "Offline", "verified"): (-10.0, "deviates"),
                   ("Vultr", "Server", "post-deadline"): (1.0, "agree")}
    assert {r["tolerance"] for r in rows} == {"4.0"}


def test_all_text_is_escaped(inputs):
    report(inputs)
    html = inputs["out"].read_text(encoding="utf-8")
    assert HOSTILE not in html and "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_missing_scaling_and_claims_are_said(inputs):
    report(inputs, with_docs=False)
    text = " ".join(parse(inputs["out"]).text)
    assert "No scaling input was given (option --scaling)." in text
    assert "No claims input was given (option --claims)." in text
    assert "No GX Data Docs given (option --data-docs)." in text

    result = report(inputs, "--scaling", inputs["out"].parent / "nope.json", with_docs=False)
    assert "warning: --scaling" in result.stderr
    assert "is missing" in " ".join(parse(inputs["out"]).text)


def test_the_data_docs_link_is_relative(inputs):
    report(inputs)
    links = [a.get("href") for t, a in parse(inputs["out"]).tags if t == "a" and "Data" not in str(a)]
    assert "../audit/data_docs/index.html" in links


# ---- in a browser ----------------------------------------------------------------------

def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"chromium-profile-{len(list(tmp_path.glob('chromium-profile-*')))}"
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})


def png_rows(path: Path, limit: int) -> tuple[int, int, list[bytes]]:
    """Width, height and the first ``limit`` unfiltered pixel rows of an
    8-bit RGB or RGBA PNG, with zlib and struct only."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    rows, prev = [], bytes(stride)
    for y in range(min(limit, height)):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def _variance(rows: list[bytes]) -> float:
    values = [v for row in rows for v in row[::7]]
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / len(values)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed "
                    "(.ci/run installs Debian's chromium; locally: apt-get install -y chromium)")
def test_chromium_renders_the_report(inputs, tmp_path):
    report(inputs)
    url = inputs["out"].resolve().as_uri()
    dom = _chromium(tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert f"<title>{TITLE}</title>" in dom.stdout
    for text in ("Agreement with the reference", "Claims ledger", "generation-gain", "malformed-number"):
        assert text in dom.stdout, text
    assert dom.stdout.count("<svg") >= 2

    shot = tmp_path / "report.png"
    done = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", url)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    blank_page = tmp_path / "blank.html"
    blank_page.write_text("<!DOCTYPE html><html><head><title>blank</title></head><body></body></html>")
    blank = tmp_path / "blank.png"
    _chromium(tmp_path, f"--screenshot={blank}", "--window-size=1280,2000", blank_page.as_uri())

    width, height, rows = png_rows(shot, 400)
    assert (width, height) == (1280, 2000)
    assert _variance(rows) > 100                          # text, tables and rules, not a flat page
    assert len({row[i:i + 3] for row in rows for i in range(0, len(row), 3 * 5)}) > 20
    if blank.is_file():
        _, _, blank_rows = png_rows(blank, 400)
        assert _variance(blank_rows) < 1
        assert shot.stat().st_size > 10 * blank.stat().st_size
