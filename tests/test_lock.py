"""The environment is the lock: uv.lock agrees with pyproject.toml, every
locked package carries its hashes, the uv bootstrap pin is the lock's uv, and
the installed .venv holds exactly what the lock names. All offline: uv checks
the lock against pyproject.toml without the index."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from conftest import REPO

UV = Path(sys.executable).parent / "uv"


def uv(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(Path(sys.executable).parent.parent), "UV_OFFLINE": "1"}
    return subprocess.run([str(UV), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_the_lock_agrees_with_pyproject():
    done = uv("lock", "--check")
    assert done.returncode == 0, done.stderr


def test_every_locked_package_is_pinned_with_hashes():
    lock = tomllib.loads((REPO / "uv.lock").read_text(encoding="utf-8"))
    unhashed = [p["name"] for p in lock["package"] if p["name"] != "mlrepro"
                and not all(f.get("hash", "").startswith("sha256:")
                            for f in [*p.get("wheels", []), *([p["sdist"]] if "sdist" in p else [])])
                or p["name"] != "mlrepro" and not p.get("wheels") and "sdist" not in p]
    assert unhashed == []
    assert len(lock["package"]) > 100            # the transitive closure, not the direct pins


def test_the_uv_bootstrap_is_the_locked_uv_with_its_hashes():
    done = uv("export", "--frozen", "--only-group", "tools", "--no-emit-project",
              "--format", "requirements-txt", "--no-header")
    assert done.returncode == 0, done.stderr
    written = (REPO / "requirements" / "uv.txt").read_text(encoding="utf-8")
    assert written.split("\n", 2)[2] == done.stdout          # past uv's two-line header
    assert "--hash=sha256:" in written


def test_the_installed_environment_is_the_lock():
    done = uv("sync", "--locked", "--extra", "test", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "Would make no changes" in done.stderr, done.stderr
