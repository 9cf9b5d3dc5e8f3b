"""The two pages the pipeline does not draw itself render offline: `dvc plots
show`'s page and the Great Expectations Data Docs. Their libraries are the npm
packages kept in vendor/npm/ (PROVENANCE.md), each file as its package has it;
the pages load only those, and headless Chromium, with every host name failing
to resolve, draws the chart and styles the Data Docs. What the page loaded is
read back from the page itself (Resource Timing) and from Chromium's net log."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from html import unescape
from pathlib import Path

import pytest
import yaml

from conftest import REPO, chromium, needs_chromium, run
from test_audit import sets  # noqa: F401 (fixture)

VENDOR = REPO / "vendor" / "npm"
PACKAGES = json.loads((VENDOR / "packages.json").read_text(encoding="utf-8"))
CDN = json.loads((VENDOR / "cdn.json").read_text(encoding="utf-8"))
CDN_HOSTS = sorted({re.match(r"https?://([^/]+)", url).group(1) for url in CDN["assets"]})
NETWORK_TAG = re.compile(r"<(?:script|link|img)\b[^>]*\b(?:src|href)=\"https?://[^\"]+\"", re.S)

# the page reports what it loaded and what it shows, once everything has loaded
PROBE = """<script>window.addEventListener("load", function () { setTimeout(function () {
  var probe = document.createElement("div"); probe.className = "d-none"; document.body.appendChild(probe);
  var icon = document.createElement("i"); icon.className = "fas fa-check"; document.body.appendChild(icon);
  var out = {resources: performance.getEntriesByType("resource").map(function (e) { return e.name; }),
             bootstrap: getComputedStyle(probe).display, icons: getComputedStyle(icon).fontFamily,
             jquery: typeof window.jQuery, table: typeof (window.jQuery && jQuery.fn.bootstrapTable),
             vega: typeof window.vegaEmbed,
             drawn: document.querySelectorAll("div[id] canvas, div[id] svg.marks").length};
  var pre = document.createElement("pre"); pre.id = "probe"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre); }, 500); });</script>"""


def test_every_vendored_file_is_its_packages_file():
    for package, entry in PACKAGES.items():
        for name, sha256 in entry["files"].items():
            assert hashlib.sha256((VENDOR / package / name).read_bytes()).hexdigest() == sha256, (package, name)
        assert entry["integrity"].startswith("sha512-") and entry["license"]
    provenance = (VENDOR / "PROVENANCE.md").read_text(encoding="utf-8")
    assert all(f"`{package}`" in provenance for package in PACKAGES)
    shipped = {p.relative_to(VENDOR).as_posix() for p in VENDOR.rglob("*") if p.is_file()}
    listed = {f"{package}/{name}" for package, entry in PACKAGES.items() for name in entry["files"]}
    assert shipped - listed == {"packages.json", "cdn.json", "PROVENANCE.md", "dvc-plots.html"}


def test_every_cdn_asset_maps_to_a_vendored_file():
    for url, target in CDN["assets"].items():
        assert target.startswith("static:") or (VENDOR / target).is_file(), url


def _probe(tmp_path: Path, page: Path) -> tuple[dict, set[str]]:
    probed = page.with_name("probed-" + page.name)
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    netlog = tmp_path / f"netlog-{page.stem}.json"
    try:
        done = chromium(tmp_path, "--window-size=1366,768", "--virtual-time-budget=10000",
                        f"--log-net-log={netlog}", "--dump-dom", probed.as_uri())
    finally:
        probed.unlink()
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    hosts = set(re.findall(r'"https?://([^/"\\]+)', netlog.read_text(encoding="utf-8", errors="replace")))
    return json.loads(unescape(found.group(1))), hosts


def _assert_local(shown: dict, hosts: set[str]) -> None:
    # Resource Timing lists the page's http(s) fetches (none: every file is file://), and
    # the net log every request Chromium began, failed ones too: none went to a CDN
    assert [name for name in shown["resources"] if not name.startswith("file://")] == []
    assert not hosts & set(CDN_HOSTS), hosts


@pytest.fixture(scope="module")
def data_docs(sets) -> Path:
    """The Data Docs of the shipped sets (test_audit's fixture builds the sets)."""
    out = sets["folder"] / "offline-audit"
    run("audit", sets["verified"], sets["post"], "-o", out, "--versions", sets["versions"], expect=0)
    return out / "data_docs"


def test_no_data_docs_page_loads_anything_from_the_network(data_docs):
    pages = sorted(data_docs.rglob("*.html"))
    assert len(pages) >= 7
    for page in pages:
        assert NETWORK_TAG.findall(page.read_text(encoding="utf-8")) == [], page


@needs_chromium
def test_chromium_shows_the_data_docs_styled_and_scripted_offline(data_docs, tmp_path):
    index = data_docs / "index.html"
    pages = [index] + sorted((data_docs / "validations").rglob("*.html"))
    links = re.findall(r'href="(validations/[^"]+\.html)"', index.read_text(encoding="utf-8"))
    assert sorted({(data_docs / link).resolve() for link in links}) == sorted(p.resolve() for p in pages[1:])
    for page in pages:
        shown, hosts = _probe(tmp_path, page)
        _assert_local(shown, hosts)
        assert shown["bootstrap"] == "none", page                 # bootstrap's CSS applied
        assert "Font Awesome" in shown["icons"], page             # the icon font's CSS applied
        assert (shown["jquery"], shown["table"]) == ("function", "function"), page


@needs_chromium
def test_chromium_draws_dvc_plots_show_offline(tmp_path):
    """`dvc plots show` with the project's template (.dvc/config) and plots
    (dvc.yaml's `plots:`) over real deviations of the shipped v5.1 partners."""
    project = tmp_path / "project"
    (project / "reports").mkdir(parents=True)
    shutil.copytree(VENDOR, project / "vendor" / "npm")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    dvc = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "dvc"
    dvc = dvc if dvc.exists() else REPO / ".venv" / "bin" / "dvc"
    subprocess.run([dvc, "init", "-q"], cwd=project, check=True, env={**os.environ, "DVC_NO_ANALYTICS": "1"})
    shutil.copyfile(REPO / ".dvc" / "config", project / ".dvc" / "config")
    plots = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["plots"]
    (project / "dvc.yaml").write_text(yaml.safe_dump({"plots": plots}), encoding="utf-8")
    (project / "reports" / "deviation.csv").write_text(
        "round,partner,model,scenario,system,case,status,label,deviation_pct,tolerance,verdict\n"
        "v5.1,ASUSTeK,llama2-70b-99,Interactive,ESC_A8A_MI325X_256GBx8,v5.1 · ASUSTeK · llama2-70b-99 · "
        "Interactive,verified,verified,-15.434178,4.0,deviates\n"
        "v5.1,ASUSTeK,llama2-70b-99,Offline,ESC_A8A_MI325X_256GBx8,v5.1 · ASUSTeK · llama2-70b-99 · Offline,"
        "verified,verified,-1.642599,4.0,agree\n", encoding="utf-8")
    done = subprocess.run([dvc, "plots", "show"], cwd=project, capture_output=True, text=True,
                          env={**os.environ, "DVC_NO_ANALYTICS": "1"})
    assert done.returncode == 0, done.stderr
    page = project / "dvc_plots" / "index.html"
    assert NETWORK_TAG.findall(page.read_text(encoding="utf-8")) == []
    shown, hosts = _probe(tmp_path, page)
    _assert_local(shown, hosts)
    assert shown["vega"] == "function" and shown["drawn"] >= 1, shown


@needs_chromium
def test_the_probe_sees_a_page_that_asks_a_cdn(tmp_path):
    """The check above can fail: a page as GX writes it asks a CDN, and the net log shows it."""
    page = tmp_path / "cdn.html"
    page.write_text('<html><body><script src="https://cdn.jsdelivr.net/npm/vega@5"></script></body></html>',
                    encoding="utf-8")
    assert NETWORK_TAG.findall(page.read_text(encoding="utf-8"))
    _, hosts = _probe(tmp_path, page)
    assert "cdn.jsdelivr.net" in hosts
