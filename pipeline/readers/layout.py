"""Where an MLPerf submission tree keeps its submitters: enough to recognise
a tree (``sniff_dir``) without loading the tree reader and its worker pool."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.core.rules import Rules
from pipeline.core.model import Source
from pipeline.readers.base import inside


def sniff_dir(rules: Rules, path: Path) -> bool:
    return bool(submitter_folders(rules, path, Source(path.name)))


def submitter_folders(rules: Rules, path: Path, where: Source) -> list[tuple[Path, Source, str | None]]:
    if _is_submitter(rules, path):
        division = path.parent.name if path.parent.name in rules.choices("division") else None
        return [(path, where, division)]
    if path.name in rules.choices("division"):
        return [(c, inside(where, c.name), path.name) for c in _subfolders(path) if _is_submitter(rules, c)]
    return [folder for division in rules.choices("division") if (path / division).is_dir()
            for folder in submitter_folders(rules, path / division, inside(where, division))]


def _is_submitter(rules: Rules, path: Path) -> bool:
    """results/ and systems/; inside a division folder results/ alone will do
    (its missing system descriptions then reject its results)."""
    return (path / "results").is_dir() and ((path / "systems").is_dir() or path.parent.name in rules.choices("division"))


def _subfolders(path: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return []
    return [Path(e.path) for e in entries if not e.name.startswith(".") and e.is_dir()]
