"""A system's accelerators as tables write them, read into parts: pure text
functions of a name (the decisions on counts and labels are
:func:`pipeline.ingest.resolve.resolve_accelerators`').

The accelerator field names one part or several joined by ``,``, ``+``,
``&`` or ``and``, each with its count after it (``(x8)``) or before it
(``8x``). The system id may state parts too (``8xMI300X_2xEPYC_9534_...``).
A part the registry lacks is kept under its own name prefixed by the vendor
its words carry (``AMD-MI400X``), so the vendor can be read back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.core.rules import Rules, memo

_SEPARATOR = re.compile(r"\s*(?:,|\+|&|\band\b)\s*", re.IGNORECASE)
# ... (x8); ... (x2x8): 2 nodes of 8, 16 in all (v6.1's heterogeneous AMD cluster)
_COUNT_AFTER = re.compile(r"\(\s*x\s*(\d+)(?:\s*x\s*(\d+))?\s*\)", re.IGNORECASE)
_COUNT_BEFORE = re.compile(r"^\s*(\d+)\s*[x\u00d7]\s*(?=[A-Za-z])", re.IGNORECASE)   # 8x ..., 2 x ...
_ID_PART = re.compile(r"^(\d+)[xX](.+)$")                                   # 8xMI355X in a system id
_ID_NODES = re.compile(r"^(\d+)[xX](\d+)[xX](.+)$")                          # 9x8xMI355X: nodes x per node
_FORM_FACTOR = re.compile(r"(?<![a-z0-9])(SXM|PCIe|NVL)(?![a-z])", re.IGNORECASE)
_MEMORY = re.compile(r"(?<![0-9.])(\d{2,4})\s*GB?(?![a-z0-9])", re.IGNORECASE)
# what a part's own name leaves out: notes in parentheses ("(R)", "(Power Cap 1000 W)"),
# memory size and type, form factor, power and the word GPU
_NOISE = re.compile(r"\([^)]*\)|(?<![a-z0-9])(?:\d+(?:\.\d+)?\s*(?:GB?|TB|W)|HBM\w*|GDDR\w*|LPDDR\w*|SXM\d*|PCIe|"
                    r"NVL\d*|GPU|Accelerator)(?![a-z0-9])", re.IGNORECASE)
_SLUG = re.compile(r"[^A-Za-z0-9.]+")


@dataclass(frozen=True)
class Part:
    """One accelerator type of a system, as a name states it."""

    name: str              # the registry's name, or the kept name of an unregistered part
    variant: str           # the name with its form factor and memory size, as published
    count: int | None      # the count the text states for it, if any
    vendor: str | None
    registered: bool
    text: str              # the piece of the published name it was read from


def pieces(text: str) -> list[tuple[str, int | None]]:
    """(piece, stated count) of each type a field names; split only when every
    piece holds a digit (``Intel Gaudi and AMD`` stays one piece)."""
    split = [p for p in _SEPARATOR.split(text) if p.strip()]
    if len(split) < 2 or not all(any(c.isdigit() for c in p) for p in split):
        split = [text]
    out = []
    for piece in split:
        count = None
        after = _COUNT_AFTER.search(piece)
        before = _COUNT_BEFORE.match(piece)
        if after:
            count, piece = int(after.group(1)) * int(after.group(2) or 1), _COUNT_AFTER.sub("", piece)
        elif before:
            count, piece = int(before.group(1)), piece[before.end():]
        out.append((piece.strip(), count))
    return out


@memo(maxsize=4096)
def parts_in_name(rules: Rules, text: str) -> tuple[Part, ...]:
    """The parts an accelerator field names, in its order."""
    out = []
    for piece, count in pieces(text):
        name = rules.canonical_accelerator(piece)
        if name is not None:
            out.append(Part(name, variant_of(name, piece), count, rules.registry_vendors().get(name) or None,
                            True, piece))
        else:
            kept, _ = unregistered_name(rules, piece)
            out.append(Part(kept, variant_of(kept, piece), count, rules.accelerator_vendor(kept), False, piece))
    return tuple(out)


@memo()
def canonical(rules: Rules, token: str) -> str | None:
    """The registry's name a token of a system id means, or None (memoised:
    tokens recur in every submitter's ids, each system's id is new)."""
    return rules.canonical_accelerator(token)


@memo(maxsize=4096)
def parts_in_system_id(rules: Rules, system_id: str | None) -> dict[str, int | None]:
    """Registered parts a system id names -> the count it states before the
    name (``87xMI355X_22xEPYC_9575F`` -> {MI355X: 87}; ``9x8xMI355X_...``,
    nodes x per node -> {MI355X: 72}), or None when it names the part alone
    (``XE9680_MI300X_192GBx8`` -> {MI300X: None})."""
    found: dict[str, int | None] = {}
    for token in (system_id or "").split("_"):
        nodes, m = _ID_NODES.match(token), _ID_PART.match(token)
        if nodes and (name := canonical(rules, nodes.group(3))):
            found[name] = (found.get(name) or 0) + int(nodes.group(1)) * int(nodes.group(2))
        elif m and (name := canonical(rules, m.group(2))):
            found[name] = (found.get(name) or 0) + int(m.group(1))
        else:
            for word in token.split("-"):
                name = canonical(rules, re.sub(r"x\d+$", "", word, flags=re.IGNORECASE))
                if name:
                    found.setdefault(name, None)
    return dict(sorted(found.items()))


@memo(maxsize=4096)
def nodes_in_system_id(rules: Rules, system_id: str | None) -> tuple[int, tuple[int, ...]] | None:
    """(nodes, per-node counts) a system id states as ``<nodes>x<per node>x<part>``
    (``2x8xMI355X_2x8xMI300X`` -> (4, (8,))), None when it states none."""
    nodes, per_node = 0, set()
    for token in (system_id or "").split("_"):
        m = _ID_NODES.match(token)
        if m and canonical(rules, m.group(3)):
            nodes += int(m.group(1))
            per_node.add(int(m.group(2)))
    return (nodes, tuple(sorted(per_node))) if nodes else None


def variant_of(family: str, piece: str) -> str:
    """The accelerator as published, beyond its family: form factor (SXM, PCIe,
    NVL) and memory size. ``NVIDIA H200-NVL-141GB`` -> ``H200 NVL 141GB``;
    ``AMD Instinct MI355X 288GB HBM3e`` -> ``MI355X 288GB``."""
    parts = [family]
    form = _FORM_FACTOR.search(piece)
    if form:
        parts.append({"sxm": "SXM", "pcie": "PCIe", "nvl": "NVL"}[form.group(1).lower()])
    memory = _MEMORY.search(_COUNT_AFTER.sub("", piece))
    if memory:
        parts.append(f"{int(memory.group(1))}GB")
    return " ".join(parts)


def unregistered_name(rules: Rules, piece: str) -> tuple[str, str]:
    """(the name a part the registry lacks is kept under, the part's own name):
    ``AMD Instinct MI400X 432GB HBM4`` -> (``AMD-MI400X``, ``MI400X``)."""
    vendor = rules.vendor_in_name(piece)
    text = _COUNT_AFTER.sub(" ", piece)
    if vendor is not None:
        text = rules.vendors()[vendor].pattern(brands=False).sub(" ", text)
    own = _SLUG.sub("-", _NOISE.sub(" ", text)).strip("-.") or _SLUG.sub("-", piece).strip("-.") or "unregistered"
    return (f"{vendor}-{own}" if vendor else own), own


def registry_line(rules: Rules, piece: str) -> str:
    """The schemas/accelerators.yaml entry that would register a published
    name: ``- {name: MI400X, vendor: AMD, pattern: '(?<![a-z0-9])MI400X(?![0-9])'}``."""
    kept, own = unregistered_name(rules, piece)
    vendor = rules.accelerator_vendor(kept) or "<vendor>"
    words = own.split("-")
    pattern = (f"(?<![a-z0-9]){re.escape(own)}(?![0-9])" if len(words) == 1 else " ".join(map(re.escape, words)))
    return f"- {{name: {own}, vendor: {vendor}, pattern: '{pattern}'}}"
