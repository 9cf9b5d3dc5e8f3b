"""Checks on partner text before it is parsed, returning findings (never raising).

**Hygiene.** What partners type or export by hand must be plain UTF-8 with LF
line ends: a byte-order mark, CRLF, a control character, mojibake (UTF-8 read
as cp1252 and saved again: ``CDNAÃ‚ 4``) or a CSV header naming a column twice
refuses the file. An invisible or confusable character (Cyrillic ``А`` in
``АMD``) makes one name look like another to a reader and not to a program.
Files machines write (LoadGen logs) are not checked (:data:`NONE`).

**YAML shape.** :func:`yaml_guard` walks the event stream (no object is
built) and refuses too deep a nesting, aliases that expand too far (the
"billion laughs") or recurse, and, where the format has no use for them,
any anchor, alias or merge key (``<<:`` sets keys as surely as an alias).
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata

import yaml

from pipeline.core.findings import Finding, located
from pipeline.core.model import Source

BOM = "\ufeff"
# cp1252's characters for the bytes 0x80-0x9F (what UTF-8 continuation bytes
# become when UTF-8 is read as cp1252); Latin-1 gives U+0080-U+009F instead.
_CP1252_HIGH = "€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ"
_CONT = f"[\u0080-\u00bf{_CP1252_HIGH}]"
# A two-byte UTF-8 sequence led by C2/C3 (Â, Ã: NBSP, ©, é, ...) or a
# three-byte one led by E2 (â€™, â€¯: quotes, dashes, narrow no-break space),
# read one character per byte.
MOJIBAKE = re.compile(f"[\u00c2\u00c3]{_CONT}|\u00e2{_CONT}{_CONT}")
# C0 controls but tab, LF and CR (CR has its own check), DEL, C1 controls
# that are not part of a mojibake sequence.
_CONTROL = re.compile("[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]")
# Bytes an ASCII text may hold: printable characters, tab, LF, CR (CR has its own check).
_ASCII_ALLOWED = bytes(range(0x20, 0x7f)) + b"\t\n\r"
SHOWN = 40

NONE: tuple[str, ...] = ()
JSON = ("byte-order-mark", "control-character", "mojibake")
DOCUMENT = ("byte-order-mark", "crlf-line-ends", "control-character", "mojibake", "hidden-character")
TABULAR = ("byte-order-mark", "crlf-line-ends", "control-character", "mojibake", "duplicate-column")

# Characters that hide in a name; the rest of Unicode's format characters (Cf)
# and the spaces other than U+0020 are found by their category.
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_BLANK = frozenset("\u034f\u115f\u1160\u180e\u2800\u3164\uffa0")
# Cyrillic and Greek letters drawn like Latin ones (NFKC leaves them as they are)
_LOOK_ALIKE = frozenset("АВЕЅІЈКМНОРСТХУаеѕіјорсхуԁԛԝһӏΑΒΕΖΗΙΚΜΝΟΡΤΥΧοικνρτυχı")

MAX_YAML_DEPTH = 32          # a manifest needs 3, a ledger 4
MAX_YAML_NODES = 100_000     # after expanding aliases; the shipped ledger has ~400


def check(text: str, where: Source | str, checks: tuple[str, ...] = TABULAR) -> list[Finding]:
    """Hygiene findings (errors) of ``text``, for each check in ``checks``."""
    where = where if isinstance(where, Source) else Source(str(where))
    out: list[Finding] = []
    if not checks:
        return out
    if "byte-order-mark" in checks and text.startswith(BOM):
        out.append(located("byte-order-mark", where.at(line=1), "UTF-8 without a byte-order mark",
                           "U+FEFF (EF BB BF) at byte 0",
                           "the file starts with a byte-order mark: save it as UTF-8 without BOM"))
    if "crlf-line-ends" in checks and "\r" in text:
        out.append(_line_ends(text, where))
    ascii_only = text.isascii()   # fast paths: large partner files are usually plain ASCII
    if "control-character" in checks and (
            not ascii_only or text.encode("ascii").translate(None, _ASCII_ALLOWED)):
        if m := _CONTROL.search(text):
            out.append(_at("control-character", text, m.start(), where, "printable text, tabs and line feeds",
                           f"U+{ord(m.group()):04X}", "the file holds a control character"))
    if "mojibake" in checks and not ascii_only and (m := MOJIBAKE.search(text)):
        out.append(_at("mojibake", text, m.start(), where, "text as typed (e.g. 'CDNA 4')",
                       _around(text, m.start(), m.end()), "mojibake: UTF-8 text was decoded as Latin-1/cp1252 "
                       "and saved again; fix the export's encoding"))
    if "duplicate-column" in checks:
        out.extend(_duplicate_columns(text.lstrip(BOM), where))
    if "hidden-character" in checks and not ascii_only and not out:
        body = text[1:] if text.startswith(BOM) else text
        if found := hidden_character(body):
            code, at, described = found
            out.append(_at(code, text, at + len(text) - len(body), where, "plain visible text", described,
                           "the file holds a character that hides in a name (a zero-width or "
                           "bidirectional control character, or a look-alike letter)"))
    return out


def _at(code: str, text: str, at: int, where: Source, expected: str, what: str, message: str) -> Finding:
    """A finding of WHAT at offset AT of TEXT, at its line and character."""
    line, character = _position(text, at)
    return located(code, where.at(line=line), expected, f"{what} at character {character}", message)


# What is left of a mojibake sequence once its second character is gone: a
# lone Â or Ã at the end of an otherwise ASCII word (``MI355XÂ``, what a
# no-break space becomes when UTF-8 is read as cp1252 and the space is then
# trimmed), or at its start.
_LONE_MOJIBAKE = re.compile("(?<=[A-Za-z0-9])[\u00c2\u00c3](?![A-Za-z0-9])|(?<![^\\s])[\u00c2\u00c3](?=[A-Za-z0-9])")


def mojibake_in(text: str) -> tuple[int, str] | None:
    """(offset, what) of the first mojibake in a field, whole or a lone leftover; None for clean text."""
    if text.isascii():
        return None
    m = MOJIBAKE.search(text) or _LONE_MOJIBAKE.search(text)
    if m is None:
        return None
    word = next((w for w in text.split() if m.group()[0] in w), text)
    if not MOJIBAKE.search(text) and not word.replace(m.group(), "").isascii():
        return None            # a word in another script (SÃO), not a leftover in an ASCII name
    return m.start(), f"U+{ord(m.group()[0]):04X} {unicodedata.name(m.group()[0])}, mojibake"


def hidden_character(text: str) -> tuple[str, int, str] | None:
    """(code, offset, what it is) of the first invisible or confusable character, or None."""
    if text.isascii():
        return None
    for at, ch in enumerate(text):
        if ch.isascii():
            continue
        kind = _hidden_kind(ch)
        if kind is not None:
            code, what = kind
            return code, at, f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}, {what}"
    return None


def _hidden_kind(ch: str) -> tuple[str, str] | None:
    if ch in _ZERO_WIDTH:
        return "invisible-character", "a zero-width character"
    if ch in _BIDI:
        return "invisible-character", "a bidirectional control character"
    category = unicodedata.category(ch)
    if category.startswith("Z"):
        return "invisible-character", "a space other than the ASCII space"
    if category == "Cf" or ch in _BLANK:
        return "invisible-character", "an invisible character"
    if ch in _LOOK_ALIKE:
        return "confusable-character", "a letter drawn like an ASCII letter"
    folded = unicodedata.normalize("NFKC", ch)
    if folded != ch and folded.isascii() and folded.isalnum():
        return "confusable-character", f"a form of the ASCII {folded!r}"
    return None


def _line_ends(text: str, where: Source) -> Finding:
    at = text.index("\r")
    crlf = text.count("\r\n")
    lone = text.count("\r") - crlf
    found = ", ".join(p for p in (f"{crlf} CRLF" if crlf else "", f"{lone} lone CR" if lone else "") if p)
    line, _ = _position(text, at)
    return located("crlf-line-ends", where.at(line=line), "LF line ends", found + " line end(s)",
                   "the file has CRLF (Windows) line ends: save it with LF line ends (e.g. dos2unix)")


def _duplicate_columns(text: str, where: Source) -> list[Finding]:
    reader = csv.reader(io.StringIO(text[:1 << 16], newline=""))
    try:   # the header is the first line that is not blank, as the CSV readers take it
        header, line = next(((row, reader.line_num) for row in reader if any(h.strip() for h in row)), ([], 1))
    except csv.Error:
        return []   # the reader reports the header itself
    seen: set[str] = set()
    out = []
    for name in (h.strip() for h in header):
        if name and name in seen:
            out.append(located("duplicate-column", where.at(line=line, column=name), "each column once",
                               f"{name!r} twice", f"the header names column {name!r} twice"))
        seen.add(name)
    return out


def _position(text: str, pos: int) -> tuple[int, int]:
    """(1-based line, 1-based character in that line) of offset ``pos``."""
    line = text.count("\n", 0, pos) + 1
    start = text.rfind("\n", 0, pos) + 1
    return line, pos - start + 1


def _around(text: str, start: int, end: int) -> str:
    line_start = max(text.rfind("\n", 0, start) + 1, start - SHOWN // 2)
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    return repr(text[line_start:min(line_end, end + SHOWN // 2)])


# ---- YAML -------------------------------------------------------------------------------

def _loader():
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def yaml_guard(text: str, where: Source, code: str, aliases: bool = True,
               max_depth: int = MAX_YAML_DEPTH, max_nodes: int = MAX_YAML_NODES) -> list[Finding]:
    """Findings (with ``code``) of a document too deep, expanding too far, or
    (``aliases=False``) using anchors, aliases or merge keys. Invalid YAML gives
    none here: the loader reports it with its line."""
    sizes: dict[str, int | None] = {}       # anchor -> expanded node count (None: still open)
    # per open collection: [node count, anchor, is a mapping, complete children so far]
    stack: list[list] = [[0, None, False, 0]]   # below the document: the depth is len(stack) - 1

    def refuse(expected: str, found: str, message: str, **place) -> list[Finding]:
        return [located(code, where.at(line=line, **place), expected, found, message)]

    try:
        for event in yaml.parse(text, Loader=_loader()):
            line = event.start_mark.line + 1 if event.start_mark else 1
            anchor = getattr(event, "anchor", None)
            if anchor is not None and not aliases:
                kind = "an alias" if isinstance(event, yaml.AliasEvent) else "an anchor"
                return refuse("no anchors or aliases", f"{kind} ({anchor})", "anchors and aliases are not allowed here")
            if not aliases and _merge_key(event, stack[-1]):
                return refuse("no merge keys, anchors or aliases", "a merge key (<<)",
                              "merge keys are not allowed here: state each key itself", key="<<")
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if len(stack) > max_depth:   # this collection would open level len(stack)
                    return refuse(f"at most {max_depth} levels of nesting", "deeper",
                                  "the YAML document nests too deeply")
                if anchor is not None:
                    sizes[anchor] = None
                stack.append([1, anchor, isinstance(event, yaml.MappingStartEvent), 0])
                continue
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                count, anchor, _, _ = stack.pop()
                if anchor is not None:
                    sizes[anchor] = count
                stack[-1][0] += count
            elif isinstance(event, yaml.ScalarEvent):
                if anchor is not None:
                    sizes[anchor] = 1
                stack[-1][0] += 1
            elif isinstance(event, yaml.AliasEvent):
                size = sizes.get(anchor)
                if size is None:
                    return refuse("an alias of a complete node", f"*{anchor}", "a recursive or undefined alias")
                stack[-1][0] += size
            else:
                continue
            stack[-1][3] += 1   # a node of the enclosing collection is complete
            if sum(level[0] for level in stack) > max_nodes:
                return refuse(f"at most {max_nodes} nodes once aliases are expanded", "more (an alias bomb)",
                              "the YAML aliases expand too far")
    except yaml.YAMLError:
        return []
    return []


def _merge_key(event, parent: list) -> bool:
    """Whether EVENT is ``<<`` as a mapping's key, plain or tagged ``!!merge``."""
    if not isinstance(event, yaml.ScalarEvent) or event.value != "<<" or not parent[2] or parent[3] % 2:
        return False
    return bool(event.implicit and event.implicit[0]) or event.tag == "tag:yaml.org,2002:merge"


def compose(text: str) -> tuple[object, object]:
    """(node tree, data): one libyaml parse gives the values and their lines.
    Raises yaml.YAMLError; run :func:`yaml_guard` first on untrusted text."""
    parser = _loader()(text)
    try:
        node = parser.get_single_node()
        return node, (parser.construct_document(node) if node is not None else None)
    finally:
        parser.dispose()


def entries(root):
    """(marking node, key or index, parent node, key path) of every entry of ``root``, in
    document order; a node reached again (an alias) is walked once."""
    todo = [(None, None, None, (), root)] if root is not None else []
    walked: set[int] = set()
    while todo:
        marked, name, parent, path, node = todo.pop()
        if marked is not None:
            yield marked, name, parent, path
        if id(node) in walked:
            continue
        walked.add(id(node))
        if isinstance(node, yaml.MappingNode):
            children = [(key_node, getattr(key_node, "value", None), value) for key_node, value in node.value]
        elif isinstance(node, yaml.SequenceNode):
            children = [(item, i, item) for i, item in enumerate(node.value)]
        else:
            continue
        # a complex key is left out: compose refuses it
        todo.extend((m, n, node, (*path, n), v) for m, n, v in reversed(children) if isinstance(n, (str, int)))


def duplicate_paths(root) -> list[tuple[tuple, int]]:
    """(key path, line) of every key a mapping of the composed ``root`` states again, in document order."""
    out, seen = [], set()
    for marked, name, parent, path in entries(root):
        if isinstance(parent, yaml.MappingNode) and isinstance(name, str):
            if (id(parent), name) in seen:
                out.append((path, marked.start_mark.line + 1))
            seen.add((id(parent), name))
    return out


def duplicate_keys(root) -> list[tuple[str, int]]:
    """(key, line) of every key a mapping of the composed ``root`` states twice."""
    return sorted(((path[-1], line) for path, line in duplicate_paths(root)), key=lambda kv: kv[1])


def key_lines(root) -> dict[str, int]:
    """Dotted key (``files.0.sha256``) -> its first line, for every key and list item of ``root``."""
    out: dict[str, int] = {}
    for marked, _, _, path in entries(root):
        out.setdefault(".".join(map(str, path)), marked.start_mark.line + 1)
    return out
