"""pipeline/core/imports.py: a module kept from importing inside a block (absent), and
the table check, which keeps pandera from importing hypothesis (the test extras
install it; the pipeline never uses pandera's data synthesis)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _fresh(code: str) -> str:
    """``code`` run by a new interpreter in the project folder (pytest has
    imported hypothesis already): its stdout."""
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_an_absent_module_fails_to_import_inside_the_block_only(tmp_path):
    (tmp_path / "optional.py").write_text("VALUE = 7\n")
    out = _fresh(f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
from pipeline.core.imports import absent
with absent("optional"):
    try:
        import optional
    except ImportError:
        inside = "ImportError"
    else:
        inside = "imported"
print(inside, "optional" in sys.modules)
import optional
print(optional.VALUE)
""")
    assert out.split() == ["ImportError", "False", "7"]


def test_an_absent_module_already_imported_stays_as_it_is(tmp_path):
    (tmp_path / "optional.py").write_text("VALUE = 7\n")
    out = _fresh(f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
import optional
from pipeline.core.imports import absent
with absent("optional"):
    import optional as again
print(again is optional, sys.modules["optional"] is optional)
""")
    assert out.split() == ["True", "True"]


def test_the_table_check_runs_pandera_without_importing_hypothesis():
    out = _fresh("""
import sys
from pipeline.core.rules import Rules
from pipeline.ingest import table
RULES = Rules.load()
good = dict(round="v6.0", submitter="A", system="s", system_name=None, accelerator="MI300X",
            accelerator_variant="MI300X", composition="MI300X:8", accelerators_per_node=8, nodes=1,
            total_accelerators=8, model="m", used_model="m", scenario="Offline", value=1.0, units="u",
            division="closed", availability="available", status="verified", result_id=None,
            source="f.csv:2", file="f.csv", line=2, submission_version=1)
accepted, rejected, found = table.validate(RULES, table.to_frame([good, {**good, "value": -5.0, "source": "f.csv:3", "line": 3}]))
print(len(accepted), list(rejected["source"]), [(f.code, f.expected) for f in found])
print("pandera" in sys.modules, "hypothesis" in sys.modules)
import hypothesis   # importable again after the check
""")
    first, second = out.splitlines()
    assert first == "1 ['f.csv:3'] [('invalid-value', 'a number from 1e-06 to 1e+12')]"
    assert second == "True False"
