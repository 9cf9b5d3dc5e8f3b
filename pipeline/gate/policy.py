"""The gate's policy: what decides a verdict, read from the merge base.

Policy is ``params.yaml`` (``compare.*``), all of ``schemas/``, ``published/``,
the tool itself (``pipeline/``, ``pyproject.toml``), ``dvc.yaml`` and
``.github/``. The gate judges a pull request's submissions with the policy of
the merge base, read through git (``git archive`` of ``schemas/`` into a
temporary folder, ``git show`` of ``params.yaml``), never from the working
tree. A pull request that changes policy is located key by key (YAML) or line
by line; with ``--allow-policy-change`` the gate lists every shipped result
whose verdict or status flips between the base and the head policy
(:mod:`pipeline.gate.flips`).
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from pipeline.core import params as params_mod, rules, textcheck
from pipeline.core.errors import ConfigError
from pipeline.core.findings import Finding, located
from pipeline.core.model import DEFAULT_REFERENCE_VENDOR, Source

POLICY = ("params.yaml", "schemas/", "published/", "pipeline/", "pyproject.toml", "dvc.yaml", ".github/")
GENERATED = ("dvc.lock", "data/", "results/", "audit/", "reports/", "metrics.json")
PARAMS_POLICY_SECTION = "compare"      # the only params.yaml keys that decide a verdict
MAX_KEYS_SHOWN = 50                    # per file; the rest are counted in one finding


@dataclass(frozen=True)
class Policy:
    """The schemas folder and compare parameters a verdict is judged with."""

    schemas: Path
    tolerance_pct: float
    reference_submitter: str
    source: str                          # "base 1a2b3c4d5e6f", "head (working tree)", ...
    published: Path | None = None        # the published/ tables the crosscheck reads (policy too)
    reference_vendor: str = DEFAULT_REFERENCE_VENDOR   # partner results: on this vendor's parts

    @classmethod
    def of(cls, schemas: Path, compare: dict, source: str, published: Path | None = None) -> "Policy":
        """From the ``compare`` section of a params.yaml (:func:`pipeline.core.params.load`)."""
        return cls(schemas, compare["tolerance_pct"], compare["reference_submitter"], source, published,
                   compare["reference_vendor"])


def is_policy(path: str) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in POLICY)


def is_generated(path: str) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in GENERATED)


def tool_schemas() -> Path:
    """The schemas shipped with the installed tool (in CI: the base checkout's)."""
    here = Path(rules.__file__).resolve().parent.parent
    for path in (here.parent / "schemas", here / "schemas"):
        if path.is_dir():
            return path
    raise ConfigError(f"the tool's schemas folder is missing beside {here}")


@contextmanager
def active(policy: Policy):
    """Run with POLICY's schemas: MLREPRO_SCHEMAS points at them and every
    schema-derived cache is cleared on the way in and out."""
    before = os.environ.get("MLREPRO_SCHEMAS")
    os.environ["MLREPRO_SCHEMAS"] = str(policy.schemas)
    rules.clear_caches()
    try:
        yield policy
    finally:
        if before is None:
            os.environ.pop("MLREPRO_SCHEMAS", None)
        else:
            os.environ["MLREPRO_SCHEMAS"] = before
        rules.clear_caches()


def _git_bytes(top: Path, *args: str) -> bytes | None:
    done = subprocess.run(["git", *args], cwd=top, capture_output=True, check=False)
    return None if done.returncode else done.stdout


def blob(top: Path, commit: str, path: str) -> bytes | None:
    """A file's bytes at COMMIT, or None when it does not exist there."""
    return _git_bytes(top, "show", f"{commit}:{path}")


def base_policy(top: Path, commit: str, params_path: str, workdir: Path) -> Policy:
    """The policy at COMMIT: its schemas/ (or the tool's when the base has none)
    and its params.yaml (or the built-in defaults)."""
    schemas = tool_schemas()
    archive = _git_bytes(top, "archive", "--format=tar", commit, "--", "schemas")
    if archive:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(workdir, filter="data")
        schemas = workdir / "schemas"
    published = None
    tables = _git_bytes(top, "archive", "--format=tar", commit, "--", "published")
    if tables:
        with tarfile.open(fileobj=io.BytesIO(tables)) as tar:
            tar.extractall(workdir, filter="data")
        published = workdir / "published"
    text = blob(top, commit, params_path)
    compare = _params(text, workdir, f"{params_path} at {commit[:12]}")
    return Policy.of(schemas, compare, f"base {commit[:12]}", published)


def head_policy(top: Path, params_path: str) -> Policy:
    """The policy in the working tree (only to show what a policy change would do)."""
    schemas = top / "schemas" if (top / "schemas").is_dir() else tool_schemas()
    path = top / params_path
    compare = params_mod.load(path if path.is_file() else None)["compare"]
    published = top / "published" if (top / "published").is_dir() else None
    return Policy.of(schemas, compare, "head (working tree)", published)


def _params(text: bytes | None, tmp: Path, what: str) -> dict:
    """The compare parameters of a params.yaml blob (written into the gate's
    temporary folder TMP so that params.load, the one reader, reads it)."""
    if text is None:
        return params_mod.load(None)["compare"]
    (tmp / "params.base.yaml").write_bytes(text)
    try:
        return params_mod.load(tmp / "params.base.yaml")["compare"]
    except ConfigError as exc:
        raise ConfigError(f"{what}: {exc}") from exc


# ---- what a policy change changes ----------------------------------------------------------

def _flatten(value, at: str = "") -> dict[str, object]:
    if isinstance(value, dict) and value:
        out = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{at}.{k}" if at else str(k)))
        return out
    if isinstance(value, list) and value and any(isinstance(v, (dict, list)) for v in value):
        out = {}
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{at}.{i}" if at else str(i)))
        return out
    return {at or "(document)": value}


def yaml_changes(old: bytes | None, new: bytes | None) -> list[tuple[str, object, object]] | None:
    """(dotted key, old, new) for every leaf that differs; None when either side is not YAML."""
    try:
        a = yaml.safe_load(old.decode("utf-8")) if old is not None else {}
        b = yaml.safe_load(new.decode("utf-8")) if new is not None else {}
    except (yaml.YAMLError, UnicodeDecodeError):
        return None
    fa, fb = _flatten(a), _flatten(b)
    missing = "(absent)"
    return [(k, fa.get(k, missing), fb.get(k, missing)) for k in sorted(set(fa) | set(fb), key=str)
            if fa.get(k, missing) != fb.get(k, missing)]


def _key_lines(text: bytes | None) -> dict[str, int]:
    """The line of each key of a YAML file as it is now (none for a deleted file)."""
    if text is None:
        return {}
    try:
        node = yaml.compose(text.decode("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, UnicodeDecodeError):
        return {}
    return textcheck.key_lines(node)


def policy_findings(top: Path, commit: str, changes: dict[str, str], severity: str) -> list[Finding]:
    """One finding per changed key (YAML: at its line in the changed file) or file, with old -> new."""
    out = []
    for path, status in sorted(changes.items()):
        if not is_policy(path):
            continue
        old = blob(top, commit, path) if status != "A" else None
        new = (top / path).read_bytes() if status != "D" and (top / path).is_file() else None
        keys = yaml_changes(old, new) if path.endswith((".yaml", ".yml")) else None
        if path == "params.yaml" and keys is not None:
            keys = [k for k in keys if k[0] == PARAMS_POLICY_SECTION
                    or k[0].startswith(PARAMS_POLICY_SECTION + ".")]
            if not keys:
                continue                           # e.g. a new submitter's ingest stage entry
        if keys:
            lines = _key_lines(new)
            for key, a, b in keys[:MAX_KEYS_SHOWN]:
                out.append(located("policy-change", Source(path, line=lines.get(key), key=key), _show(a),
                                   _show(b), f"policy changed: {key}: {_show(a)} -> {_show(b)}", severity))
            if len(keys) > MAX_KEYS_SHOWN:
                out.append(located("policy-change", Source(path), "the base's policy",
                                   f"{len(keys) - MAX_KEYS_SHOWN} more changed keys", "policy changed", severity))
            continue
        what = {"A": "added", "D": "deleted", "M": "changed"}[status]
        out.append(located("policy-change", Source(path), "the file as at the base", what,
                           f"policy changed: {path} {what}", severity))
    return out


def _show(value: object) -> str:
    return value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True).strip() \
        .removesuffix("...").strip()


def generated_findings(changes: dict[str, str]) -> list[Finding]:
    return [located("generated-file-edited", Source(path),
                    "generated outputs untouched in a submission pull request",
                    {"A": "added", "D": "deleted", "M": "changed"}[status],
                    "a generated file (DVC output, metrics, reports) is changed together with "
                    "submissions: the maintainers regenerate it with `dvc repro` after merging")
            for path, status in sorted(changes.items()) if is_generated(path)]
