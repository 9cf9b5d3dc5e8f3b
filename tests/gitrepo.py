"""Temporary git repositories for the tests that need real commits and a base
ref (the gate's versioning rules)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def init(repo: Path, who: str) -> Path:
    """An empty repository on branch main, with a committer named ``who``."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", who)
    git(repo, "config", "user.email", f"{who.lower().replace(' ', '-')}@example.invalid")
    return repo


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def base_then_branch(repo: Path, who: str, branch: str, message: str = "base") -> None:
    """Commit what ``repo`` holds as main, then start ``branch`` from it."""
    init(repo, who)
    commit(repo, message)
    git(repo, "checkout", "-q", "-b", branch)
