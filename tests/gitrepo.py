"""Temporary git repositories for the tests that need real commits and a base
ref (the gate's versioning rules, policy from the base, the visibility record)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(repo: Path, *args: str, when: str | None = None) -> str:
    """Run git in REPO; WHEN (ISO-8601) sets the author and committer dates."""
    env = dict(os.environ)
    if when:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env=env).stdout


def init(repo: Path, who: str) -> Path:
    """An empty repository on branch main, with a committer named ``who``."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", who)
    git(repo, "config", "user.email", f"{who.lower().replace(' ', '-')}@example.invalid")
    return repo


def commit(repo: Path, message: str, when: str | None = None) -> None:
    """Commit everything; WHEN fixes the commit's dates (the clock ingest reads)."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, when=when)


def base_then_branch(repo: Path, who: str, branch: str, message: str = "base") -> None:
    """Commit what ``repo`` holds as main, then start ``branch`` from it."""
    init(repo, who)
    commit(repo, message)
    git(repo, "checkout", "-q", "-b", branch)
