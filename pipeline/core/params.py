"""Pipeline parameters (params.yaml), read once at the edge and passed in."""

from __future__ import annotations

import math
from pathlib import Path

import yaml

from pipeline.core.errors import ConfigError

from pipeline.core.model import DEFAULT_PARAMS as DEFAULTS


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
    if (isinstance(tol, bool) or not isinstance(tol, (int, float))
            or not (math.isfinite(tol) and tol >= 0)):
        raise ConfigError(f"{path}: compare.tolerance_pct must be a finite number >= 0, not {tol!r}")
    return params
