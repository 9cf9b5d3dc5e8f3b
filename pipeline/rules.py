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

SCENARIOS = ("Offline", "Server", "Interactive", "SingleStream", "MultiStream")
_CACHES: list = []


def cached(maxsize: int | None = None):
    """lru_cache for anything derived from schemas/, registered so that
    :func:`clear_caches` forgets it when the schemas folder changes (tests)."""
    def wrap(fn):
        memo = lru_cache(maxsize=maxsize)(fn)
        _CACHES.append(memo)
        return memo
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
    opens: datetime | None = None      # submissions open; an earlier submitted_at is refused


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
        opens = None
        if info.get("opens") is not None:
            try:
                opens = datetime.fromisoformat(str(info["opens"]))
            except ValueError as exc:
                raise ConfigError(f"rounds.yaml: round {name}: bad opens") from exc
            if opens.tzinfo is None:
                raise ConfigError(f"rounds.yaml: round {name}: opens needs a time zone")
        out[name] = Round(name, deadline, str(info.get("publication_date", "")),
                          dict(info.get("estimated") or {}), opens)
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


def canonical_scenario(text: str) -> str | None:
    key = text.strip().lower()
    for sc in SCENARIOS:
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
