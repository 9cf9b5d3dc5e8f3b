"""The gate's policy: what decides a verdict, read from the base branch's tip.

Policy is ``params.yaml``'s ``compare`` section and the ``schemas/`` and
``published/`` folders (:data:`SOURCES`), each as git stores it at a commit,
never from the working tree or the environment; a policy holds its own
:class:`~pipeline.core.rules.Rules` value (the base's and the head's side by
side). A change to the policy is located key by key (YAML) or file by file
(``policy-change``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from pipeline.core import params as params_mod, textcheck
from pipeline.core.rules import SCHEMA_FILE, Rules, default_folder
from pipeline.core.errors import ConfigError
from pipeline.core.findings import Finding, located
from pipeline.core.model import DEFAULT_REFERENCE_VENDOR, Source
from pipeline.gate import gitstore

SOURCES = ("schemas", "published")     # the policy's folders, beside params.yaml's compare section
PARAMS_POLICY_SECTION = "compare"      # the only params.yaml keys that decide a verdict
MAX_KEYS_SHOWN = 50                    # per file; the rest are counted in one finding


@dataclass(frozen=True)
class Policy:
    """The rules (a schemas folder) and compare parameters a verdict is judged with."""

    rules: Rules
    tolerance_pct: float
    reference_submitter: str
    source: str                          # "base 1a2b3c4d5e6f", "head 1a2b3c4d5e6f", "local ..."
    published: Path | None = None        # the published/ tables the crosscheck reads (policy too)
    reference_vendor: str = DEFAULT_REFERENCE_VENDOR   # partner results: on this vendor's parts

    @classmethod
    def of(cls, rules: Rules, compare: dict, source: str, published: Path | None = None) -> "Policy":
        """From the ``compare`` section of a params.yaml (:func:`pipeline.core.params.load`)."""
        return cls(rules, compare["tolerance_pct"], compare["reference_submitter"], source, published,
                   compare["reference_vendor"])


def is_source(path: str, params_path: str) -> bool:
    """Whether a repository path is read by :func:`policy_at`."""
    return path == params_path or any(path.startswith(folder + "/") for folder in SOURCES)


def local(rules: Rules, params_path: Path | None, where: str = "--params") -> Policy:
    """The policy of this working folder, for runs without a git base: RULES as
    the command line read them, and PARAMS_PATH's compare section (defaults when absent)."""
    compare = params_mod.load(params_path if params_path and params_path.is_file() else None)["compare"]
    return Policy.of(rules, compare, f"local (the installed tool's or $MLREPRO_SCHEMAS schemas, {where})")


def policy_at(top: Path, rev: str, params_path: str, scratch: Path, source: str,
              beside: tuple[str, ...] = ()) -> Policy:
    """The policy at REV as git stores it, written into SCRATCH (with the files
    BESIDE, in the same pass); the tool's schemas/ and the built-in parameters
    where REV has none."""
    gitstore.materialise(top, rev, [*SOURCES, params_path, *beside], scratch)
    schemas = scratch / "schemas" if (scratch / "schemas").is_dir() else default_folder()   # the tool's
    published = scratch / "published" if (scratch / "published").is_dir() else None
    params = scratch / params_path
    try:
        compare = params_mod.load(params if params.is_file() else None)["compare"]
    except ConfigError as exc:
        raise ConfigError(f"{params_path} at {rev[:12]}: {scrub(str(exc), scratch)}") from exc
    return Policy.of(Rules.load(schemas), compare, source, published)


# ---- the rules a verdict depends on -----------------------------------------------------------

def _loaders(rules: Rules, rounds: list[str]) -> list[tuple[str, object]]:
    """(file under schemas/, what loads it), each after those it depends on."""
    out = [("rounds.yaml", rules.rounds), ("models.yaml", lambda: (rules.scenarios(), rules.canonical_model(""))),
           ("rules/metrics.yaml", rules.family_units)]
    out += [(f"rules/{r}.yaml", lambda r=r: rules.round_models(r)) for r in rounds]
    return out + [("accelerators.yaml", rules.accelerator_patterns), ("conventions.yaml", rules.power_cap_pattern),
                  (SCHEMA_FILE, lambda: [rules.choices(c) for c in ("division", "availability", "status")])]


def verify(policy: Policy, rounds: list[str]) -> list[Finding]:
    """``reference-broken`` for the first rules file the gated ROUNDS' verdicts
    depend on that does not load, so that broken rules name their file."""
    for name, load in _loaders(policy.rules, rounds):
        try:
            load()
        except ConfigError as exc:
            return [unverifiable(Source(f"schemas/{name}"), "the rules load", scrub(str(exc), policy))]
    return []


def scrub(text: str, where: Policy | Path) -> str:
    """TEXT with the policy's scratch folder left out of the paths it names."""
    folder = where.rules.folder.parent if isinstance(where, Policy) else where
    return text.replace(folder.as_posix() + "/", "")


def unverifiable(where: Source, expected: str, found: str) -> Finding:
    return located("reference-broken", where, expected, found,
                   "what the gated results are judged against does not verify in this run: the gate "
                   "cannot judge them (the maintainers fix the reference data or rules)")


# ---- what a policy change changes ----------------------------------------------------------

def _flatten(value, at: str = "") -> dict[str, object]:
    """Dotted key -> leaf; a list of scalars is one leaf."""
    if isinstance(value, dict) and value:
        items = value.items()
    elif isinstance(value, list) and value and any(isinstance(v, (dict, list)) for v in value):
        items = enumerate(value)
    else:
        return {at or "(document)": value}
    out = {}
    for k, v in items:
        out.update(_flatten(v, f"{at}.{k}" if at else str(k)))
    return out


def _parsed(text: bytes | None) -> tuple[object, object] | None:
    """(node tree, data) of a policy file's YAML ((None, {}) when absent); None
    when it is not YAML or fails :func:`textcheck.yaml_guard` (a pull request's
    file: the gate never expands what it has not bounded)."""
    if text is None:
        return None, {}
    try:
        decoded = text.decode("utf-8")
        if textcheck.yaml_guard(decoded, Source("policy"), "policy-change"):
            return None
        return textcheck.compose(decoded)
    except (yaml.YAMLError, UnicodeDecodeError):
        return None


def yaml_changes(old: tuple | None, new: tuple | None) -> list[tuple[str, object, object]] | None:
    """(dotted key, old, new) of every leaf that differs; None when either is not readable YAML."""
    if old is None or new is None:
        return None
    fa, fb = _flatten(old[1]), _flatten(new[1])
    missing = "(absent)"
    return [(k, fa.get(k, missing), fb.get(k, missing)) for k in sorted(set(fa) | set(fb), key=str)
            if fa.get(k, missing) != fb.get(k, missing)]


def policy_findings(top: Path, base: str, head: str, path: str, status: str, params_path: str,
                    severity: str, together: str = "") -> list[Finding]:
    """One finding per changed key of a policy file (at its line at the head),
    else one for the file; none for a params.yaml whose compare section is unchanged."""
    old = gitstore.read(top, base, path) if status != "A" else None
    new = gitstore.read(top, head, path) if status != "D" else None
    parsed = (_parsed(old), _parsed(new)) if path.endswith((".yaml", ".yml")) else (None, None)
    keys = yaml_changes(*parsed)
    if path == params_path:
        keys = [k for k in keys or [] if k[0] == PARAMS_POLICY_SECTION
                or k[0].startswith(PARAMS_POLICY_SECTION + ".")]
        if not keys:
            return []                          # another section: not policy
    if keys:
        lines = textcheck.key_lines(parsed[1][0])
        out = [located("policy-change", Source(path, line=lines.get(key), key=key), _show(a), _show(b),
                       f"policy changed: {key}: {_show(a)} -> {_show(b)}{together}", severity)
               for key, a, b in keys[:MAX_KEYS_SHOWN]]
        if len(keys) > MAX_KEYS_SHOWN:
            out.append(located("policy-change", Source(path), "the base's policy",
                               f"{len(keys) - MAX_KEYS_SHOWN} more changed keys", f"policy changed{together}",
                               severity))
        return out
    what = gitstore.WHAT[status]
    return [located("policy-change", Source(path), "the file as at the base", what,
                    f"policy changed: {path} {what}{together}", severity)]


def _show(value: object) -> str:
    return value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True).strip() \
        .removesuffix("...").strip()
