"""`mlrepro ingest-all` (the DVC ingest stage) checks the rows of every
submitter it reads against the table schema in one call: each submitter's
part must still be the bytes that reading that submitter alone writes, and
each frame's verdict the one `table.validate` gives it alone."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pandas as pd

from conftest import RULES, REPO, canonical_row, submit
from pipeline.ingest import table
from pipeline.stages import ingest as merge


def ingest_alone(folder, root, others, out):
    """One submitter folder's four parts, read on its own: what ingest_submitters writes for it."""
    from pipeline.ingest import submissions

    merge.write_part(merge.part_of(submissions.ingest(RULES, [folder], root=root), root, others), out)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    return (list(a.columns) == list(b.columns) and list(a.dtypes) == list(b.dtypes)
            and a.reset_index(drop=True).equals(b.reset_index(drop=True)))


def test_validate_each_gives_each_frame_what_validating_it_alone_gives():
    dell = table.to_frame([canonical_row(submitter="Dell", system="D1", file="v6.0/Dell/v1/a.csv", line=2),
                           canonical_row(submitter="Dell", system="D2", value=-5.0,
                                         file="v6.0/Dell/v1/a.csv", line=3),
                           canonical_row(submitter="Dell", system="D3", scenario="Bogus", value=0.0,
                                         file="v6.0/Dell/v1/a.csv", line=4)])
    hpe = table.to_frame([canonical_row(submitter="HPE", system="H1", division="secret",
                                        file="v6.0/HPE/v1/a.csv", line=2),
                          canonical_row(submitter="HPE", system="H2", file="v6.0/HPE/v1/a.csv", line=3)])
    clean = table.to_frame([canonical_row(file="v6.0/AMD/v1/a.csv", line=2)])
    empty = table.to_frame([])
    frames = [dell, empty, hpe.drop(index=0).pipe(lambda f: pd.concat([hpe.iloc[[0]], f])), clean]
    together = merge.validate_each(RULES, frames)
    assert len(together) == len(frames)
    for frame, (acc, rej, found) in zip(frames, together):
        alone_acc, alone_rej, alone_found = table.validate(RULES, frame)
        assert _same(acc, alone_acc) and _same(rej, alone_rej)
        assert found == alone_found
    assert [len(r) for _, r, _ in together] == [2, 0, 1, 0]
    assert {f.file for f in together[0][2]} == {"v6.0/Dell/v1/a.csv"}
    assert len(together[0][2]) == 3          # value twice (-5 and 0), scenario once


def test_the_parts_of_submitters_read_together_are_the_bytes_of_each_read_alone(tmp_path):
    """The shipped submissions plus two new submitters, one with rejected and
    excluded rows: every part file is the same bytes either way."""
    root = tmp_path / "submissions"
    shutil.copytree(REPO / "submissions", root)
    for name, source in (("Quirky", "results-quirks.csv"), ("Checker", "checker-quirks.csv")):
        rows = pd.read_csv(REPO / "tests/data" / source, dtype=str, keep_default_na=False)
        column = "submitter" if "submitter" in rows.columns else "Organization"
        rows[column] = name            # a submission holds its own submitter's rows only
        rows.to_csv(tmp_path / source, index=False)
        submit(root, tmp_path / source, name, "verified", "2026-02-20T10:00:00+00:00", "v6.0")
    # Quirky's file gains a duplicate row, resealed (both rows rejected: duplicate-row);
    # Checker's file is changed after sealing (every row rejected: the hash differs)
    sealed = root / "v6.0/Quirky/v1/results-quirks.csv"
    text = sealed.read_text()
    sealed.write_text(text + text.splitlines()[1] + "\n")
    manifest = root / "v6.0/Quirky/v1/manifest.yaml"
    old_hash = re.search(r"sha256: (\w+)", manifest.read_text())[1]
    manifest.write_text(manifest.read_text().replace(old_hash, hashlib.sha256(sealed.read_bytes()).hexdigest()))
    tampered = root / "v6.0/Checker/v1/checker-quirks.csv"
    tampered.write_text(tampered.read_text().replace("142136", "142137"))
    folders = merge.submitter_folders(root)
    together = tmp_path / "together"
    for f, part in zip(folders, merge.ingest_submitters(RULES, folders, root, folders)):
        merge.write_part(part, together / f"{f.parent.name}-{f.name}")
    for folder in folders:
        name = f"{folder.parent.name}-{folder.name}"
        alone = tmp_path / "alone" / name
        ingest_alone(folder, root, [f for f in folders if f != folder], alone)
        for part in merge.PARTS:
            assert (together / name / part).read_bytes() == (alone / part).read_bytes(), f"{name}/{part}"
    codes = {n: set(pd.read_csv(together / n / "rejected.csv")["codes"]) for n in ("v6.0-Quirky", "v6.0-Checker")}
    assert "duplicate-row" in codes["v6.0-Quirky"] and codes["v6.0-Checker"], codes


def test_the_submitters_read_together_scan_the_root_for_versions_once(monkeypatch, tmp_path):
    """ingest-all finds the root's versions once, not once per submitter
    folder (pipeline/walk.py one_scan); outside it every read scans."""
    from pipeline.ingest import walk

    scans = []
    real = walk.find_versions
    monkeypatch.setattr(walk, "find_versions", lambda root: scans.append(root) or real(root))
    root = REPO / "submissions"
    folders = merge.submitter_folders(root)[:3]
    merge.ingest_submitters(RULES, folders, root, folders)
    assert scans == [root]
    ingest_alone(folders[0], root, folders[1:], tmp_path / "alone")
    assert scans == [root, root]


def test_coerce_leaves_a_canonical_column_as_it_is_and_converts_any_other():
    """coerce skips columns already of their canonical type (ingest-all coerces
    parts that are canonical already): the result is what full conversion gives."""
    rows = [canonical_row(), canonical_row(system="S2", system_name="x", result_id="r", submission_version=None)]
    raw = pd.DataFrame(rows, columns=list(table.COLUMNS)).astype(object)      # nothing canonical
    once = table.coerce(raw)
    assert _same(table.coerce(once), once)
    other = once.astype({"system": "string", "nodes": "int32", "value": "float32"})
    again = table.coerce(other)
    assert _same(again, once)
    assert str(again["system"].dtype) == "str" and again["nodes"].dtype == "int64"
    assert _same(table.to_frame([]), table.coerce(pd.DataFrame([], columns=list(table.COLUMNS))))
    handed = table.to_frame([])
    handed["extra"] = 1                               # the shared empty frame is never handed out itself
    assert list(table.to_frame([]).columns) == list(table.COLUMNS)
