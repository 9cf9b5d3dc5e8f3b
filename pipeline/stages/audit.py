"""The ``audit`` stage (``mlrepro audit``): the Great Expectations suites over
the verified and post-deadline sets (:mod:`pipeline.analyses.audit`), their
report written as ``validation.json`` and, when asked for, the Data Docs
site, built beside the old one and swapped in whole (a killed run leaves the
old one), made stable and offline here.

GX's pages load bootstrap, jquery, vega, fonts and its logo from CDNs, and GX
has no setting for these URLs, which are in its templates: ``cdn.json`` maps
each URL to a file of ``vendor/npm/``, and a page that loads a URL the map
lacks, after a GX upgrade, is refused with the URL named.
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from contextlib import nullcontext
from datetime import datetime
from html import escape
from pathlib import Path

from pipeline.analyses.audit import RUN_TIME, audit, read_set, validated_at
from pipeline.core.errors import ConfigError
from pipeline.core.files import atomic_dir, atomic_path, umask
from pipeline.core.findings import Report
from pipeline.core.rules import Rules
from pipeline.output.render import write_report

VALIDATION = "validation.json"


def run(rules: Rules, verified: Path, post_deadline: Path, out_dir: Path, suites: Path | None = None,
        docs: Path | None = None, versions: Path | None = None) -> Report:
    """The suites run on the two sets; OUT_DIR/validation.json and the Data Docs (DOCS) written."""
    data_time = RUN_TIME
    if docs is not None:
        if versions is None:
            raise ConfigError("the Data Docs show the time of the validated data: they need the versions table "
                              "(data/versions.csv)")
        data_time = validated_at([read_set(verified), read_set(post_deadline)], Path(versions))
    with atomic_dir(docs) if docs is not None else nullcontext() as building:
        report = audit(rules, verified, post_deadline, building, suites, data_time)
        if building is not None:
            pin_site(building, data_time)
            list_offline(building, report.rows, data_time)
            localise(building)
            _ordinary_modes(building)
    write_report(report, out_dir / VALIDATION)
    return report


# What GX writes into its pages that differs between runs of the same inputs: the clock
# in its logo's URL (``logo-long.png?d=20261201T000758.019632Z``, a cache-buster), the
# batch's ``ge_load_time`` and random ids of the collapsible blocks (uuid4).
_URL_STAMP = re.compile(rb"\?d=\d{8}T\d{6}\.\d{6}Z(&)?")
_STAMP = re.compile(rb"\b\d{8}T\d{6}\.\d{6}Z\b")
_BLOCK_ID = re.compile(rb"(collapse-body-)([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


def pin_site(folder: Path, data_time: datetime) -> None:
    """The Data Docs site with GX's clock stamps pinned to the data's time (the
    logo's cache-buster dropped) and its random block ids derived from the page
    and their order, so that the same inputs give the same bytes."""
    stamp = data_time.strftime("%Y%m%dT%H%M%S.%fZ").encode()
    for page in sorted(folder.rglob("*.html")):
        raw = page.read_bytes()
        ids: dict[bytes, bytes] = {}

        def block_id(m: re.Match) -> bytes:
            name = f"mlrepro-docs:{page.relative_to(folder).as_posix()}:{len(ids)}"
            new = ids.setdefault(m.group(2), str(uuid.uuid5(uuid.NAMESPACE_URL, name)).encode())
            return m.group(1) + new

        pinned = _URL_STAMP.sub(lambda m: b"?" if m.group(1) else b"", raw)
        pinned = _BLOCK_ID.sub(block_id, _STAMP.sub(stamp, pinned))
        if pinned != raw:
            with atomic_path(page) as tmp:
                tmp.write_bytes(pinned)


# GX's index page: the table its scripts fill with the validations (empty in the HTML).
_VALIDATIONS_TABLE = re.compile(
    rb'(<table\s+id="[^"]+"\s+class="table-sm ge-index-page-validation-results-table"[^>]*>)\s*</table>')


def list_offline(folder: Path, suites: list, data_time: datetime) -> None:
    """Write the list of validations into the site's index as HTML (GX's
    scripts, when they load, draw their own over it), with the data's time
    and what it is."""
    index = folder / "index.html"
    raw = index.read_bytes()
    found = _VALIDATIONS_TABLE.search(raw)
    if found is None:
        raise ConfigError(f"{index}: GX's list of validations is not where great_expectations "
                          "1.24 writes it; the offline list cannot be added")
    when = data_time.strftime("%Y-%m-%d %H:%M:%S UTC")
    rows = []
    for suite in sorted(suites, key=lambda s: s["suite"]):
        name = suite["suite"]
        pages = sorted(p.relative_to(folder).as_posix() for p in (folder / "validations" / name).rglob("*.html"))
        status = "Success" if suite["success"] else f"Failed: {suite['failed']} of {suite['expectations_loaded']}"
        result = f'<a href="{escape(pages[0])}">{status}</a>' if pages else status
        rows.append(f"<tr><td>{result}</td><td>{when}</td><td>{escape(name)}</td><td>{escape(suite['runs_on'])}"
                    f"</td><td>{suite['rows']}</td><td>{suite['expectations_loaded']}</td>"
                    f'<td><a href="expectations/{escape(name)}.html">{escape(name)}</a></td></tr>')
    note = (f'<p class="mlrepro-data-time">Data as of {when}: the newest submission time (submitted_at) of the '
            "submission versions whose results the two sets hold. Each page's Run Time is this time, so the "
            "same data gives the same pages.</p>")
    table = (found.group(1) + b"<thead><tr><th>Status</th><th>Run Time</th><th>Asset Name</th><th>Set</th>"
             b"<th>Rows</th><th>Expectations</th><th>Expectation Suite</th></tr></thead><tbody>"
             + "".join(rows).encode() + b"</tbody></table>")
    with atomic_path(index) as tmp:
        tmp.write_bytes(raw[:found.start()] + note.encode() + table + raw[found.end():])


def _ordinary_modes(folder: Path) -> None:
    """Folders and files of the Data Docs site as the umask makes them (the
    site is built in a private temporary folder, mode 0700)."""
    mask = umask()
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod((0o777 if path.is_dir() else 0o666) & ~mask)


# ---- the site's assets, local ------------------------------------------------------------

VENDOR = Path(__file__).resolve().parents[2] / "vendor" / "npm"
STATIC = "static:"                 # a file GX itself copies into the site's static/
_TAG = re.compile(rb"<(?:script|link|img)\b[^>]*>", re.S)
_URL = re.compile(rb'\b(src|href)="(https?://[^"]+)"')
_SRI = re.compile(rb'\s+(?:integrity="[^"]*"|crossorigin="[^"]*")')


def localise(folder: Path) -> None:
    """Rewrite every page of the site to load its assets from static/vendor/ and
    copy there the files they load. Links (``<a href>``) stay as they are."""
    try:
        spec = json.loads((VENDOR / "cdn.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{VENDOR / 'cdn.json'}: the Data Docs' local assets cannot be read ({exc})") from None
    assets, folders = spec["assets"], spec.get("folders", {})
    used: set[str] = set()
    for page in sorted(folder.rglob("*.html")):
        up = "../" * (len(page.relative_to(folder).parts) - 1)
        raw = page.read_bytes()

        def tag(m: re.Match) -> bytes:
            found = _URL.search(m.group(0))
            if found is None:
                return m.group(0)
            url = found.group(2).decode()
            target = assets.get(url)
            if target is None:
                raise ConfigError(f"{page}: loads {url} from the network; add it to {VENDOR / 'cdn.json'} "
                                  "with the file of its npm package (vendor/npm/PROVENANCE.md)")
            if target.startswith(STATIC):
                local = up + "static/" + target[len(STATIC):]
            else:
                used.add(target)
                local = up + "static/vendor/" + target
            # the hash pins the CDN's copy; a file:// page cannot load a script in cors mode
            return _SRI.sub(b"", m.group(0).replace(found.group(0), found.group(1) + b'="' + local.encode() + b'"'))

        rewritten = _TAG.sub(tag, raw)
        if rewritten != raw:
            with atomic_path(page) as tmp:
                tmp.write_bytes(rewritten)
    for target in sorted(used):
        _copy(VENDOR / target, folder / "static" / "vendor" / target)
        if target in folders:
            for source in sorted((VENDOR / folders[target]).iterdir()):
                _copy(source, folder / "static" / "vendor" / folders[target] / source.name)


def _copy(source: Path, dest: Path) -> None:
    if not source.is_file():
        raise ConfigError(f"{source}: a Data Docs asset vendor/npm/cdn.json names is missing")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)
