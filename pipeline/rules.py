"""Round rules as data: loads what changes by round from ``schemas/``.

Nothing here is a literal of a round: deadlines, models, units and the
accelerator registry come from YAML files under the schemas folder, which is
``$MLREPRO_SCHEMAS`` when set, otherwise the ``schemas/`` folder beside the
package (or the copy a wheel ships inside it). A missing or broken file is a :class:`ConfigError` (exit 3).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import yaml

from .errors import ConfigError

_CACHES: list = []


def cached(maxsize: int | None = None):
    """lru_cache for anything derived from schemas/, keyed on the schemas
    folder ($MLREPRO_SCHEMAS: a change of it is seen) and registered so that
    :func:`clear_caches` forgets it when files change in place (tests)."""
    def wrap(fn):
        memo = lru_cache(maxsize=maxsize)(lambda folder, *args, **kwargs: fn(*args, **kwargs))
        _CACHES.append(memo)

        def call(*args, **kwargs):
            return memo(os.environ.get("MLREPRO_SCHEMAS", ""), *args, **kwargs)
        call.cache_clear = memo.cache_clear
        call.__wrapped__ = fn
        call.__doc__ = fn.__doc__
        return call
    return wrap


def clear_caches() -> None:
    for memo in _CACHES:
        memo.cache_clear()


def schemas_dir() -> Path:
    """$MLREPRO_SCHEMAS, else the repository's schemas/ (editable install), else
    the copy a wheel ships as pipeline/schemas."""
    env = os.environ.get("MLREPRO_SCHEMAS")
    here = Path(__file__).resolve().parent
    path = Path(env) if env else next(
        (p for p in (here.parent / "schemas", here / "schemas") if p.is_dir()), here.parent / "schemas")
    if not path.is_dir():
        raise ConfigError(f"schemas folder not found: {path} (set MLREPRO_SCHEMAS)")
    return path


def load_yaml(name: str) -> dict:
    path = schemas_dir() / name
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot load {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


@dataclass(frozen=True)
class Round:
    name: str
    submission_deadline: datetime
    publication_date: str
    estimated: dict


@cached()
def rounds() -> dict[str, Round]:
    data = load_yaml("rounds.yaml").get("rounds") or {}
    out = {}
    for name, info in data.items():
        try:
            deadline = datetime.fromisoformat(str(info["submission_deadline"]))
        except (KeyError, ValueError) as exc:
            raise ConfigError(f"rounds.yaml: round {name}: bad submission_deadline") from exc
        if deadline.tzinfo is None:
            raise ConfigError(f"rounds.yaml: round {name}: deadline needs a time zone")
        out[name] = Round(name, deadline, str(info.get("publication_date", "")),
                          dict(info.get("estimated") or {}))
    return out


@dataclass(frozen=True)
class Model:
    name: str
    family: str
    units: dict[str, tuple[str, ...]]  # scenario -> accepted units

    @property
    def scenarios(self) -> tuple[str, ...]:
        return tuple(self.units)


@cached()
def _models() -> tuple[dict[str, Model], dict[str, str]]:
    data = load_yaml("models.yaml")
    families = data.get("unit_families") or {}
    models: dict[str, Model] = {}
    aliases: dict[str, str] = {}
    for name, info in (data.get("models") or {}).items():
        fam = families.get(info.get("family"))
        if fam is None:
            raise ConfigError(f"models.yaml: model {name}: unknown family {info.get('family')!r}")
        units = {sc: tuple(u) for sc, u in fam.items()}
        for sc, extra in (info.get("extra_units") or {}).items():
            units[sc] = tuple(units.get(sc, ())) + tuple(extra)
        models[name] = Model(name, info["family"], units)
        aliases[name.lower()] = name
        for alias in info.get("aliases") or []:
            aliases[str(alias).lower()] = name
    return models, aliases


def models() -> dict[str, Model]:
    return _models()[0]


def canonical_model(text: str) -> str | None:
    """The benchmark id for a spelling (``llama3_1-8b`` -> ``llama3.1-8b``), or None."""
    return _models()[1].get(text.strip().lower())


@cached()
def scenarios() -> tuple[str, ...]:
    """The MLPerf scenarios (schemas/models.yaml ``scenarios``)."""
    found = load_yaml("models.yaml").get("scenarios")
    if not isinstance(found, list) or not found:
        raise ConfigError("models.yaml: `scenarios` must be a non-empty list")
    return tuple(str(s) for s in found)


@cached()
def conventions() -> dict:
    """schemas/conventions.yaml: the power-cap naming and the claim defaults."""
    return load_yaml("conventions.yaml")


@cached()
def power_cap_pattern() -> re.Pattern:
    try:
        return re.compile(str(conventions()["power_cap_pattern"]), re.IGNORECASE)
    except (KeyError, re.error) as exc:
        raise ConfigError(f"conventions.yaml: bad power_cap_pattern: {exc}") from exc


@cached()
def choices(column: str) -> tuple[str, ...]:
    """The allowed values of a column of the canonical table (its ``isin``
    check in schemas/results.v1.yaml): division, availability, scenario, status."""
    spec = (load_yaml("results.v1.yaml").get("columns") or {}).get(column) or {}
    allowed = (spec.get("checks") or {}).get("isin")
    if not isinstance(allowed, list) or not allowed:
        raise ConfigError(f"results.v1.yaml: column {column} has no isin check")
    return tuple(str(v) for v in allowed)


def claim_defaults() -> dict[str, float]:
    data = conventions().get("claims") or {}
    try:
        return {k: float(data[k]) for k in ("tolerance_pct_points", "tolerance_ratio")}
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"conventions.yaml: claims needs tolerance_pct_points and "
                          f"tolerance_ratio numbers ({exc})") from exc


def canonical_scenario(text: str) -> str | None:
    key = text.strip().lower()
    for sc in scenarios():
        if sc.lower() == key:
            return sc
    return None


def is_latency(units: str) -> bool:
    """Lower is better for latency units; every other unit is a rate."""
    return units.startswith("Latency")


@cached()
def accelerator_patterns() -> tuple[tuple[str, re.Pattern], ...]:
    data = load_yaml("accelerators.yaml").get("accelerators") or []
    try:
        return tuple((e["name"], re.compile(e["pattern"], re.IGNORECASE)) for e in data)
    except (KeyError, re.error) as exc:
        raise ConfigError(f"accelerators.yaml: bad entry: {exc}") from exc


def canonical_accelerator(text: str) -> str | None:
    """The canonical short name for a free-text accelerator name, or None."""
    for name, pattern in accelerator_patterns():
        if pattern.search(text):
            return name
    return None


def known_accelerators() -> set[str]:
    return {name for name, _ in accelerator_patterns()}
