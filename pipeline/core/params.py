"""Pipeline parameters (params.yaml), read once at the edge and passed in."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from pipeline.core.errors import ConfigError, UsageError
from pipeline.core.model import DEFAULT_PARAMS as DEFAULTS
from pipeline.core.rules import conform, validator

DEFAULT_FILE = Path("params.yaml")   # the project's, read from the working folder (may be absent)
# The format of params.yaml is this version of the tool's (not a policy of a schemas folder),
# so its schema ships with the code.
SCHEMA = Path(__file__).with_name("params.schema.json")


@functools.cache
def _schema() -> dict:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


def load(path: Path | None) -> dict:
    """params.yaml merged over the defaults; a missing default file is fine."""
    params = {k: dict(v) for k, v in DEFAULTS.items()}
    if path is None or not path.exists():
        return params
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    data = {} if data is None else data
    conform(path, text, data, SCHEMA.name, validator(_schema()))
    for section, values in data.items():   # another tool's section is kept as it is
        if isinstance(values, dict):
            params.setdefault(section, {}).update(values)
        else:
            params[section] = values
    return params


@dataclass(frozen=True)
class Compare:
    """``compare.*``: the agreement tolerance and whose results are the reference."""

    tolerance_pct: float
    reference_submitter: str
    reference_vendor: str


def compare(path: Path | None, tolerance_pct: float | None = None,
            reference_submitter: str | None = None) -> Compare:
    """``compare.*`` of the parameters of ``path`` (a file the user named, which must
    exist), or of the project's params.yaml when None (which may be absent: built-in
    defaults); the tolerance and the reference submitter overridden by the values given
    on the command line. A missing file, or a tolerance that bounds nothing (NaN would
    make every row deviate), is a usage error."""
    if path is not None and not Path(path).exists():
        raise UsageError(f"--params {path}: no such file")
    p = load(Path(path) if path is not None else DEFAULT_FILE)["compare"]
    bound = _schema()["properties"]["compare"]["properties"]["tolerance_pct"]
    if tolerance_pct is not None and not validator(bound).is_valid(tolerance_pct):
        raise UsageError(f"--tolerance-pct {tolerance_pct}: must be a finite number >= 0")
    return Compare(p["tolerance_pct"] if tolerance_pct is None else tolerance_pct,
                   reference_submitter or p["reference_submitter"], p["reference_vendor"])
