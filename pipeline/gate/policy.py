"""The gate's policy: what decides a verdict, read from the merge base.

Policy is ``params.yaml`` (``compare.*``), all of ``schemas/``, ``published/``,
the tool itself (``pipeline/``, ``pyproject.toml``), ``dvc.yaml`` and
``.github/``. The gate judges a pull request's submissions with the policy of
the merge base, read through git (``git archive`` of ``schemas/`` into a
temporary folder, ``git show`` of ``params.yaml``), never from the working
tree. A pull request that changes policy is located key by key (YAML) or line
by line; with ``--allow-policy-change`` the gate lists every shipped result
whose verdict or status flips between the base and the head policy.
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

from pipeline.core import params as params_mod, rules
from pipeline.core.errors import ConfigError
from pipeline.core.findings import Finding, finding
from pipeline.core.model import DEFAULT_REFERENCE_VENDOR

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

def _flatten(value, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict) and value:
        out = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and value and any(isinstance(v, (dict, list)) for v in value):
        out = {}
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}.{i}" if prefix else str(i)))
        return out
    return {prefix or "(document)": value}


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


def policy_findings(top: Path, commit: str, changes: dict[str, str], severity: str) -> list[Finding]:
    """One finding per changed key (YAML) or file, with old -> new."""
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
            for key, a, b in keys[:MAX_KEYS_SHOWN]:
                out.append(finding("policy-change", path, f"key {key}", _show(a), _show(b),
                                   f"policy changed: {key}: {_show(a)} -> {_show(b)}", severity))
            if len(keys) > MAX_KEYS_SHOWN:
                out.append(finding("policy-change", path, "whole file", "the base's policy",
                                   f"{len(keys) - MAX_KEYS_SHOWN} more changed keys",
                                   "policy changed", severity))
            continue
        what = {"A": "added", "D": "deleted", "M": "changed"}[status]
        out.append(finding("policy-change", path, "whole file", "the file as at the base", what,
                           f"policy changed: {path} {what}", severity))
    return out


def _show(value: object) -> str:
    return value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True).strip() \
        .removesuffix("...").strip()


def generated_findings(changes: dict[str, str]) -> list[Finding]:
    return [finding("generated-file-edited", path, "whole file",
                    "generated outputs untouched in a submission pull request",
                    {"A": "added", "D": "deleted", "M": "changed"}[status],
                    "a generated file (DVC output, metrics, reports) is changed together with "
                    "submissions: the maintainers regenerate it with `dvc repro` after merging")
            for path, status in sorted(changes.items()) if is_generated(path)]


# ---- what the new policy would do ------------------------------------------------------------

def outcomes(root: Path, policy: Policy) -> dict[str, dict]:
    """result source -> its status and verdict (or outcome) under POLICY
    (ENGINE: see :mod:`pipeline.gate.results`)."""
    from pipeline.gate.results import Engine as eng

    with active(policy):
        report = eng.ingest([root], root=root)
        compared = {r["source"]: r for r in eng.compare(report.rows, policy)}
    out = {}
    for row in report.rows:
        r = compared.get(row["source"], {})
        out[row["source"]] = {k: row[k] for k in ("round", "submitter", "system", "model", "scenario")} | {
            "status": row["status"], "verdict": r.get("verdict") or "reference",
            "deviation_pct": r.get("deviation_pct")}
    for d in report.dispositions:
        out.setdefault(d.source, {"round": None, "submitter": None, "system": None, "model": None,
                                  "scenario": None, "status": None, "verdict": d.outcome,
                                  "deviation_pct": None})
    return out


def flips(root: Path, base: Policy, head: Policy, prefix: str,
          ) -> tuple[list[dict], list[Finding]]:
    """Every shipped result whose verdict or status differs between the two policies."""
    before, after = outcomes(root, base), outcomes(root, head)
    rows, found = [], []
    for source in sorted(set(before) | set(after)):
        a = before.get(source) or {"status": None, "verdict": "absent"}
        b = after.get(source) or {"status": None, "verdict": "absent"}
        if (a["status"], a["verdict"]) == (b["status"], b["verdict"]):
            continue
        who = b if b.get("model") else a
        changed = [f"{a['verdict']} -> {b['verdict']}"] if a["verdict"] != b["verdict"] else []
        if a["status"] != b["status"]:
            changed.append(f"{a['status']} -> {b['status']}")
        name = " ".join(str(who.get(k) or "?") for k in ("submitter", "round", "model", "scenario"))
        text = f"{name}: {', '.join(changed)}"
        file, _, line = source.rpartition(":")
        file, line = (file, line) if line.isdigit() else (source, "")
        rows.append({"source": prefix + source, "file": prefix + file, "line": int(line) if line else None,
                     "submitter": who.get("submitter"), "round": who.get("round"),
                     "system": who.get("system"), "model": who.get("model"), "scenario": who.get("scenario"),
                     "base": {"status": a["status"], "verdict": a["verdict"],
                              "deviation_pct": a.get("deviation_pct")},
                     "head": {"status": b["status"], "verdict": b["verdict"],
                              "deviation_pct": b.get("deviation_pct")},
                     "text": text})
        found.append(finding("verdict-flip", prefix + file, f"line {line}" if line else "whole file",
                             f"{a['verdict']} ({a['status']}) under the base policy",
                             f"{b['verdict']} ({b['status']}) under the head policy",
                             f"the policy change flips {text}", "warning"))
    return rows, found
