"""What a version folder may hold, by an allow-list (``schemas/version_folder.yaml``).

A partner's version folder is data: its manifest, each file it lists under a
name its format uses, in a submission tree only the MLPerf layout's files;
never a name a tool reads as configuration or code (``dvc.yaml``,
``conftest.py``...), and every name in a safe character set. :func:`judge`
works on a list of paths, so that one rule applies to a folder on disk
(:func:`check_folder`) and to what ``submit`` is about to seal (:func:`check_source`).
"""

from __future__ import annotations

import fnmatch
import os
import re
import unicodedata
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from pipeline.core import limits
from pipeline.core.findings import Finding, located
from pipeline.core.model import Source
from pipeline.core.rules import Rules, memo

RULES_FILE = limits.RULES_FILE
TREE_FORMAT = "submission-tree"


@dataclass(frozen=True)
class FolderRules:
    """schemas/version_folder.yaml, loaded and checked."""

    name: re.Pattern
    pattern: str
    max_length: int
    max_depth: int
    manifest: str
    formats: dict[str, tuple[str, ...]]
    tree: tuple[tuple[str, tuple[str, ...]], ...]     # (file name glob, folders one of which holds it)
    configuration: tuple[tuple[str, str], ...]        # (name glob, lower case, the tool that reads it)
    caps: dict[str, int]

    def tool_reading(self, name: str) -> str | None:
        """The tool that reads NAME as configuration or code, if any."""
        low = name.lower()
        return next((tool for glob, tool in self.configuration if fnmatch.fnmatchcase(low, glob)), None)


@memo()
def folder_rules(rules: Rules) -> FolderRules:
    """The rule, from RULES' schemas folder (the base's, in the gate)."""
    data = limits.document(rules)
    names = data["names"]
    return FolderRules(
        re.compile(names["pattern"]), names["pattern"], names["max_length"], names["max_depth"], data["manifest"],
        {fmt: tuple(globs) for fmt, globs in data["formats"].items()},
        tuple((entry["name"], tuple(entry.get("under") or ())) for entry in data["tree"]),
        tuple((glob.lower(), tool) for tool, globs in data["configuration"].items() for glob in globs),
        dict(data["caps"]))


_NAMED = {"\n": "a newline", "\t": "a tab", "\\": "a backslash", " ": "a space", "\r": "a carriage return",
          "\x1b": "an escape character"}


def unsafe(rule: FolderRules, name: str) -> str | None:
    """Why one path component is outside the safe set of RULE (None when it is not)."""
    if len(name) > rule.max_length:
        return f"a name of {len(name)} characters (at most {rule.max_length})"
    if rule.name.match(name):
        return None
    bad = next((ch for ch in name if not (ch.isascii() and (ch.isalnum() or ch in "_+.-"))), None)
    if bad is not None:
        what = _NAMED.get(bad) or unicodedata.name(bad, "a control character")
        return f"{ascii(name)}: U+{ord(bad):04X} ({what})"
    if not name:
        return "an empty name"
    if name[0] in "-+.":
        return f"{ascii(name)}: a leading {name[0]!r}"
    return f"{ascii(name)}: a trailing {name[-1]!r}"


@dataclass(frozen=True)
class Refusal:
    """One path of a version that breaks the rule."""

    path: str            # relative to the version folder ("" for the folder's own names)
    code: str
    expected: str
    found: str
    fix: str


def judge(rules: Rules, paths: list[tuple[str, bool]], listed: dict[str, str] | None,
          sizes: int = 0) -> list[Refusal]:
    """The refusals of a version holding PATHS ((relative path, is a folder)) of
    SIZES bytes; LISTED: the manifest's path -> format (None when it does not read)."""
    rule = folder_rules(rules)
    out: list[Refusal] = []
    bad_parents: set[str] = set()
    files = 0
    for path, is_dir in sorted(paths):
        parts = path.split("/")
        if any("/".join(parts[:i]) in bad_parents for i in range(1, len(parts))):
            continue              # its folder is refused already: one finding for the folder
        files += not is_dir
        refusal = _judge_one(path, parts, is_dir, listed, rule)
        if refusal is not None:
            out.append(refusal)
            if is_dir:
                bad_parents.add(path)
    cap_files, cap_bytes = rule.caps["files_per_version"], rule.caps["bytes_per_version"]
    if files > cap_files:
        out.append(Refusal("", "over-cap", f"at most {cap_files} files in a version", f"{files} files",
                           "split the results over fewer files, or leave out what the layout does not need"))
    if sizes > cap_bytes:
        out.append(Refusal("", "over-cap", f"at most {cap_bytes} bytes in a version", f"{sizes} bytes",
                           "leave out the large logs the comparison does not read (mlperf_log_accuracy.json)"))
    return out


def _judge_one(path: str, parts: list[str], is_dir: bool, listed: dict[str, str] | None,
               rule: FolderRules) -> Refusal | None:
    name = parts[-1]
    tool = rule.tool_reading(name)
    if tool is not None:
        what = "folder" if is_dir else "file"
        return Refusal(path, "file-not-allowed", _ALLOWED, f"{name}: a {what} name {tool} reads as configuration "
                       "or code", f"remove {path}: a partner's folder holds data only, never a name a tool reads")
    why = unsafe(rule, name)
    if why is not None:
        return Refusal(path, "unsafe-name", f"a name matching {rule.pattern}", why,
                       "rename it: letters, digits and _ + - . only, no leading - + . and no trailing .")
    if len(parts) - 1 > rule.max_depth:
        return Refusal(path, "file-not-allowed", f"at most {rule.max_depth} folders deep", f"{len(parts) - 1}",
                       "a submission tree is never this deep: remove the extra folders")
    if path == rule.manifest:
        return None
    fmt = (listed or {}).get(path)
    if fmt is not None and fmt != TREE_FORMAT:
        return Refusal(path, "file-not-allowed", f"a {fmt} file", "a folder",
                       "list the file itself in the manifest") if is_dir else _format_file(path, fmt, rule)
    if is_dir:
        return None
    tree = next((p for p in listed if fmt is None and path.startswith(p + "/")), None) if listed else None
    if listed is not None and tree is None and fmt is None:
        return None                  # not listed: the manifest's check says so (unlisted-file)
    if fmt == TREE_FORMAT:
        return Refusal(path, "file-not-allowed", "a folder (a submission tree)", "a file",
                       "seal the tree's folder, or the file in its own format")
    if listed is None and len(parts) == 1:
        return _format_file(path, None, rule)
    if (listed or {}).get(tree, TREE_FORMAT) != TREE_FORMAT:
        return None                  # inside a listed file that is a folder: refused above
    inner = parts[len(tree.split("/")):] if tree else parts
    if not any(fnmatch.fnmatchcase(inner[-1], glob) and (not under or any(p in under for p in inner[:-1]))
               for glob, under in rule.tree):
        return Refusal(path, "file-not-allowed", f"a file of the MLPerf submission layout ({_TREE})",
                       inner[-1], "remove it: a submission tree holds only the MLPerf layout's files")
    return None


_ALLOWED = ("the manifest and the files it lists, each under a name its format uses (an MLPerf "
            "submission tree holds the layout's files)")
_TREE = ("systems/*.json, LoadGen logs, accuracy.txt, verify_*.txt, measurements.json, user.conf, mlperf.conf, "
         "README.md")


def _format_file(path: str, fmt: str | None, rule: FolderRules) -> Refusal | None:
    """A file of format FMT (any known format, when None) under a name that format uses."""
    globs = [g for f in ([fmt] if fmt is not None else list(rule.formats)) for g in rule.formats.get(f, ())]
    name = path.rsplit("/", 1)[-1]
    if any(fnmatch.fnmatchcase(name.lower(), g.lower()) for g in globs):
        return None
    expected = f"a {fmt} file named {' or '.join(globs)}" if globs and fmt else _ALLOWED
    return Refusal(path, "file-not-allowed", expected, name,
                   "rename the file to a name its format uses (results.csv, summary.json, results.parquet)")


# ---- on disk ----------------------------------------------------------------------------

def walk(folder: Path) -> tuple[list[tuple[str, bool]], int]:
    """(every path under FOLDER, with whether it is a folder; the bytes of its
    regular files). Links are listed as files, never followed."""
    out: list[tuple[str, bool]] = []
    size = 0
    for here, dirs, files in os.walk(folder):    # a link to a folder is listed, never walked into
        rel = Path(here).relative_to(folder).as_posix()
        prefix = "" if rel == "." else rel + "/"
        out += [(prefix + name, not os.path.islink(os.path.join(here, name))) for name in dirs]
        for name in files:
            out.append((prefix + name, False))
            path = os.path.join(here, name)
            if not os.path.islink(path):
                with suppress(OSError):
                    size += os.lstat(path).st_size
    return out, size


def check_folder(rules: Rules, folder: Path, listed: dict[str, str] | None, where) -> tuple[list[Finding], set[str]]:
    """The findings of a version folder on disk, and the top-level entries whose files are refused."""
    paths, size = walk(folder)
    refused = judge(rules, paths, listed, size)
    return [as_finding(r, where(r.path)) for r in refused], {r.path.split("/")[0] for r in refused}


def check_names(rules: Rules, names: list[str], where: Source) -> list[Finding]:
    """``unsafe-name`` for each of a version's own folder names (round, submitter) outside the safe set."""
    rule = folder_rules(rules)
    return [as_finding(Refusal(name, "unsafe-name", f"a name matching {rule.pattern}", why,
                               "rename the folder: letters, digits and _ + - . only"), where)
            for name in names if (why := unsafe(rule, name)) is not None]


def check_source(rules: Rules, source: Path, fmt: str) -> list[Finding]:
    """What ``submit`` would seal: SOURCE as the one file of a version in format FMT."""
    listed = {source.name: fmt}
    if source.is_dir():
        paths, size = walk(source)
        paths = [(source.name, True)] + [(f"{source.name}/{p}", d) for p, d in paths]
    else:
        paths, size = [(source.name, False)], source.stat().st_size
    base = source.parent.as_posix()
    return [as_finding(r, Source(f"{base}/{r.path}" if r.path else source.as_posix()))
            for r in judge(rules, paths, listed, size)]


def as_finding(r: Refusal, where: Source) -> Finding:
    return located(r.code, where, r.expected, r.found, r.fix)
