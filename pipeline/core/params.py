"""Pipeline parameters (params.yaml), read once at the edge and passed in."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from pipeline.core.errors import ConfigError, UsageError

from pipeline.core.model import DEFAULT_PARAMS as DEFAULTS

DEFAULT_FILE = Path("params.yaml")   # the project's, read from the working folder (may be absent)


def load(path: Path | None) -> dict:
    """params.yaml merged over the defaults; a missing default file is fine."""
    params = {k: dict(v) for k, v in DEFAULTS.items()}
    if path is None or not path.exists():
        return params
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping")
    for section, values in data.items():
        if isinstance(values, dict):
            params.setdefault(section, {}).update(values)
        else:
            params[section] = values
    tol = params["compare"]["tolerance_pct"]
    if not _bound(tol):
        raise ConfigError(f"{path}: compare.tolerance_pct must be a finite number >= 0, not {tol!r}")
    return params


def _bound(tolerance: object) -> bool:
    """A tolerance that bounds something: a finite number >= 0 (NaN would make every row deviate)."""
    return (not isinstance(tolerance, bool) and isinstance(tolerance, (int, float))
            and math.isfinite(tolerance) and tolerance >= 0)


def read(path: Path | None) -> dict:
    """The parameters of ``path`` (a file the user named, which must exist:
    a usage error otherwise), or of the project's params.yaml when None
    (which may be absent: built-in defaults)."""
    if path is not None and not Path(path).exists():
        raise UsageError(f"--params {path}: no such file")
    return load(Path(path) if path is not None else DEFAULT_FILE)


@dataclass(frozen=True)
class Compare:
    """``compare.*``: the agreement tolerance and whose results are the reference."""

    tolerance_pct: float
    reference_submitter: str
    reference_vendor: str


def compare(path: Path | None, tolerance_pct: float | None = None,
            reference_submitter: str | None = None) -> Compare:
    """``compare.*`` of the parameters (see :func:`read`), the tolerance and the
    reference submitter overridden by the values given on the command line;
    a tolerance given there that bounds nothing is a usage error."""
    p = read(path)["compare"]
    if tolerance_pct is not None and not _bound(tolerance_pct):
        raise UsageError(f"--tolerance-pct {tolerance_pct}: must be a finite number >= 0")
    return Compare(p["tolerance_pct"] if tolerance_pct is None else tolerance_pct,
                   reference_submitter or p["reference_submitter"], p["reference_vendor"])
