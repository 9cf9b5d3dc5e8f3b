"""The Data Docs site with every asset local: GX's pages load bootstrap,
jquery, vega, fonts and its logo from CDNs, so offline they are unstyled.
Each such URL is rewritten to a copy in the site's ``static/vendor/`` from
the npm packages in ``vendor/npm/`` (``cdn.json`` maps each URL). GX has no
setting for these URLs (they are in its templates, which a custom views
folder cannot replace), hence the rewrite. A page that loads a URL the map
lacks (a GX upgrade) is refused with the URL named.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from pipeline.core.errors import ConfigError
from pipeline.core.files import atomic_path

VENDOR = Path(__file__).resolve().parents[2] / "vendor" / "npm"
STATIC = "static:"                 # a file GX itself copies into the site's static/
_TAG = re.compile(rb"<(?:script|link|img)\b[^>]*>", re.S)
_URL = re.compile(rb'\b(src|href)="(https?://[^"]+)"')
_SRI = re.compile(rb'\s+(?:integrity="[^"]*"|crossorigin="[^"]*")')


def _load_map() -> dict:
    try:
        return json.loads((VENDOR / "cdn.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{VENDOR / 'cdn.json'}: the Data Docs' local assets cannot be read ({exc})") from None


def localise(folder: Path) -> None:
    """Rewrite every page of the site to load its assets from static/vendor/ and
    copy there the files they load. Links (``<a href>``) stay as they are."""
    spec = _load_map()
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
