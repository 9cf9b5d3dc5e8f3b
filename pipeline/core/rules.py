"""Round rules as data: what changes by round, loaded from a ``schemas/`` folder.

:meth:`Rules.load` makes one immutable value of a schemas folder; it is made
at the edge (the CLI, a test) and passed down, never switched through the
environment. Nothing here is a literal of a round: deadlines, models, units
and the accelerator registry come from YAML files under the folder. Each file
is checked once, when first loaded, against the JSON Schema beside it
(:func:`schema_of`): what a file must look like is said there, with the
domain's wording in each ``description``; what only several files together
can say (a round's model is in models.yaml, a family has the scenario) is
checked here. A missing or broken file is a :class:`ConfigError` (exit 3)
naming the file, the line and key, what was expected and what was found.

One registry per fact: ``models.yaml`` names every benchmark with its aliases
and unit family; ``rules/metrics.yaml`` gives a family's units per scenario;
``rules/<round>.yaml`` says which benchmarks the round has, in which scenarios,
and any units the round published differently. Answers are cached on the value (:func:`memo`).
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import jsonschema
import yaml
from jsonschema.exceptions import best_match

from pipeline.core import textcheck
from pipeline.core.errors import ConfigError

RULES_DIR = "rules"
SCHEMA_FILE = "results.v4.yaml"   # the canonical table's schema (v1 to v3 stay as released)
ROUND_SCHEMA = f"{RULES_DIR}/round.schema.json"   # every rules/<round>.yaml
_ROUND_FILE = re.compile(rf"{RULES_DIR}/v\d+\.\d+\.yaml")
_TABLE_SCHEMA = re.compile(r"results\.v\d+\.yaml")   # pandera's own format, checked by pandera
_FORMATS = jsonschema.FormatChecker(formats=("regex",))   # a pattern is a Python regular expression
# JSON has no NaN or infinity: a YAML number JSON could not write (.nan, .inf) is no number
# (every bound, minimum or maximum, would pass NaN).
Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "number", lambda checker, value: jsonschema.Draft202012Validator.TYPE_CHECKER.is_type(value, "number")
        and math.isfinite(value)))


def validator(schema: dict) -> jsonschema.Draft202012Validator:
    """A validator of SCHEMA (draft 2020-12, finite numbers, Python regular expressions)."""
    return Validator(schema, format_checker=_FORMATS)


def memo(maxsize: int | None = None):
    """Memoise ``fn(rules, *args)`` on the rules value: the cache is kept in
    the value's own dictionary, so it lives and dies with those rules (the
    gate's base and head never share an answer)."""
    def wrap(fn):
        @functools.wraps(fn)
        def call(rules: Rules, *args, **kwargs):
            cache = rules.memos.get(fn) or rules.memos.setdefault(
                fn, functools.lru_cache(maxsize)(functools.partial(fn, rules)))
            return cache(*args, **kwargs)
        return call
    return wrap


def schema_of(name: str) -> str | None:
    """The JSON Schema a schemas/ file NAME is checked against: ``<name>.schema.json``
    beside it, one schema for every round's rules; None for the table schemas."""
    if _TABLE_SCHEMA.fullmatch(name):
        return None
    return ROUND_SCHEMA if _ROUND_FILE.fullmatch(name) else name.removesuffix(".yaml") + ".schema.json"


def conform(path: Path, text: str, data: object, schema: str, checker: jsonschema.Draft202012Validator) -> None:
    """Raise the ConfigError of the place where the document at PATH (TEXT, read as DATA)
    best breaks SCHEMA (CHECKER): the file and line, the key, what the schema expects (its
    ``description`` there, else the rule), what the file holds, and why not."""
    error = best_match(checker.iter_errors(data))
    if error is None:
        return
    key = ".".join(str(k) for k in error.absolute_path)
    try:
        line = textcheck.key_lines(textcheck.compose(text)[0]).get(key) if key else None
    except yaml.YAMLError:   # a JSON file that YAML does not read (tabs): the key alone
        line = None
    expected = error.schema.get("description") or f"{error.validator} {error.validator_value!r}"
    found = repr(error.instance)
    found = found if len(found) <= 80 else found[:77] + "..."
    raise ConfigError(f"{path}{f':{line}' if line else ''}: key {key or '<top>'}: expected {expected}; found {found} "
                      f"({error.message[:200]}): change the file to match {schema}")


def default_folder() -> Path:
    """The repository's schemas/ (editable install), else the copy a wheel ships as pipeline/schemas."""
    package = Path(__file__).resolve().parent.parent
    return next((p for p in (package.parent / "schemas", package / "schemas") if p.is_dir()),
                package.parent / "schemas")


@dataclass(frozen=True)
class Round:
    name: str
    submission_deadline: datetime
    opens: datetime | None = None      # submissions open; an earlier submitted_at is refused


@dataclass(frozen=True)
class Model:
    name: str
    family: str
    units: dict[str, tuple[str, ...]]  # scenario -> accepted units, the published one first

    @property
    def scenarios(self) -> tuple[str, ...]:
        return tuple(self.units)


_SEPARATORS = re.compile(r"[\s_]+")


@dataclass(frozen=True, eq=False)
class Rules:
    """The rules of one schemas folder. Immutable; what is derived from the
    folder is computed on first use and kept in ``memos``."""

    folder: Path
    memos: dict = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, folder: Path | str | None = None) -> Rules:
        """The rules of FOLDER (default: :func:`default_folder`). Nothing is read
        until a rule is asked for; a folder that is absent is then a ConfigError."""
        return cls(Path(folder or default_folder()).resolve())

    def __reduce__(self):   # to worker processes: the folder, not the caches
        return (Rules, (self.folder,))

    @memo()
    def load_yaml(self, name: str) -> dict:
        """A schemas/ file, parsed once (libyaml's parser) and checked against its
        JSON Schema (:func:`schema_of`); callers read it, never change it."""
        if not self.folder.is_dir():
            raise ConfigError(f"schemas folder not found: {self.folder} (give --schemas or set MLREPRO_SCHEMAS)")
        path = self.folder / name
        try:
            text = path.read_text(encoding="utf-8")
            data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot load {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping at the top level")
        schema = schema_of(name)
        if schema:
            conform(path, text, data, schema, self.validator(schema))
        return data

    @memo()
    def validator(self, name: str) -> jsonschema.Draft202012Validator:
        """The JSON Schema (draft 2020-12) NAME of the folder, ready to check a document;
        the tool's own where the folder has none (a policy from before the schemas were written)."""
        path = self.folder / name
        path = path if path.is_file() else default_folder() / name
        try:
            with open(path, encoding="utf-8") as fh:
                return validator(json.load(fh))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot load {path}: {exc}") from exc

    @memo()
    def rounds(self) -> dict[str, Round]:
        def time(name: str, info: dict, key: str) -> datetime | None:
            try:   # the schema's pattern passes 2026-13-45T25:61
                return datetime.fromisoformat(info[key]) if key in info else None
            except ValueError as exc:
                raise ConfigError(f"{self.folder / 'rounds.yaml'}: key rounds.{name}.{key}: expected a valid "
                                  f"ISO-8601 time with a time zone; found {info[key]!r} ({exc})") from exc

        return {name: Round(name, time(name, info, "submission_deadline"), time(name, info, "opens"))
                for name, info in self.load_yaml("rounds.yaml")["rounds"].items()}

    @memo()
    def _registry(self) -> tuple[dict[str, str], dict[str, str]]:
        """(model -> unit family, spelling -> model) from models.yaml."""
        data = self.load_yaml("models.yaml")
        families = self.family_units()
        family: dict[str, str] = {}
        aliases: dict[str, str] = {}
        for name, info in data["models"].items():
            if info["family"] not in families:
                raise ConfigError(f"models.yaml: key models.{name}.family: expected one of {sorted(families)} "
                                  f"(the families of rules/metrics.yaml); found {info['family']!r}")
            family[name] = info["family"]
            for spelling in [name, *(info.get("aliases") or [])]:
                key = spelling.lower()
                if aliases.setdefault(key, name) != name:
                    raise ConfigError(f"models.yaml: {spelling!r} names both {aliases[key]} and {name}")
        return family, aliases

    @memo()
    def family_units(self) -> dict[str, dict[str, str]]:
        """family -> scenario -> published units, from rules/metrics.yaml."""
        families = self.load_yaml(f"{RULES_DIR}/metrics.yaml")["families"]
        return {f: {sc: spec["units"] for sc, spec in table.items()} for f, table in families.items()}

    def round_benchmarks(self, data: dict, where: str) -> dict[str, Model]:
        """The benchmarks of one round's rules (``models``, ``scenarios``, ``units``):
        each with the scenarios some category gives it and their accepted units."""
        family, _ = self._registry()
        families = self.family_units()
        names = data.get("models") or []
        unknown = [m for m in names if m not in family]
        if unknown:
            raise ConfigError(f"{where}: models {unknown} are not in models.yaml")
        scenarios: dict[str, list[str]] = {m: [] for m in names}
        for category, kinds in (data.get("scenarios") or {}).items():
            for kind, table in kinds.items():
                for model, listed in (table or {}).items():
                    self._check_names(where, f"scenarios.{category}.{kind}", model, scenarios, listed)
                    scenarios[model] += [s for s in listed if s not in scenarios[model]]
        overrides = {m: {s: tuple(u) for s, u in sc.items()} for m, sc in (data.get("units") or {}).items()}
        out = {}
        for model in names:
            units = {}
            for sc in sorted(scenarios[model], key=self.scenarios().index):
                accepted = overrides.get(model, {}).get(sc) or (
                    (families[family[model]][sc],) if sc in families[family[model]] else ())
                if not accepted:
                    raise ConfigError(f"{where}: {model} {sc}: no units (family {family[model]} "
                                      f"has no {sc} in rules/metrics.yaml and the round gives none)")
                units[sc] = accepted
            out[model] = Model(model, family[model], units)
        for model, table in overrides.items():
            self._check_names(where, "units", model, scenarios, table)
            extra = set(table) - set(scenarios[model])
            if extra:
                raise ConfigError(f"{where}: units: {model} has no scenario {sorted(extra)} in this round")
        return out

    def _check_names(self, where: str, section: str, model: str, scenarios: dict, listed) -> None:
        if model not in scenarios:
            raise ConfigError(f"{where}: {section}: {model} is not in the round's models")
        bad = [s for s in listed if s not in self.scenarios()]
        if bad:
            raise ConfigError(f"{where}: {section}: {model}: unknown scenarios {bad}")

    @memo()
    def round_models(self, round_: str) -> dict[str, Model] | None:
        """The benchmarks of a round, from schemas/rules/<round>.yaml; None when the
        round has no rules file (rounds.yaml and the rules must then be fixed)."""
        name = f"{RULES_DIR}/{round_}.yaml"
        if not re.fullmatch(r"v\d+\.\d+", round_) or not (self.folder / name).is_file():
            return None
        return self.round_benchmarks(self.load_yaml(name), f"schemas/{name}")

    @memo()
    def models(self) -> dict[str, Model]:
        """Every benchmark of models.yaml, with what every round with rules accepts
        (the union over rounds: for checks that do not know the round)."""
        family, _ = self._registry()
        units: dict[str, dict[str, list[str]]] = {m: {} for m in family}
        for round_ in self.rounds():
            for model in (self.round_models(round_) or {}).values():
                for sc, accepted in model.units.items():
                    have = units[model.name].setdefault(sc, [])
                    have += [u for u in accepted if u not in have]
        return {m: Model(m, family[m], {sc: tuple(units[m][sc]) for sc in self.scenarios() if sc in units[m]})
                for m in family}

    def canonical_model(self, text: str) -> str | None:
        """The benchmark id for a spelling (``llama3_1-8b`` -> ``llama3.1-8b``), or None."""
        return self._registry()[1].get(text.strip().lower())

    @memo()
    def _categories(self) -> frozenset[str]:
        found = self.load_yaml("models.yaml")["categories"]
        names = frozenset(_SEPARATORS.sub("-", c.strip().lower()) for c in found)
        clash = sorted(n for n in names if n in self._registry()[1])
        if clash:
            raise ConfigError(f"models.yaml: categories {clash} are also benchmark spellings")
        return names

    def is_category(self, text: str) -> bool:
        """Whether a model column's text is a category or task name (models.yaml
        ``categories``), which is never a benchmark id."""
        return _SEPARATORS.sub("-", text.strip().lower()) in self._categories()

    @memo()
    def scenarios(self) -> tuple[str, ...]:
        """The MLPerf scenarios (schemas/models.yaml ``scenarios``)."""
        return tuple(self.load_yaml("models.yaml")["scenarios"])

    @memo()
    def conventions(self) -> dict:
        """schemas/conventions.yaml: the power-cap naming and the claim defaults."""
        return self.load_yaml("conventions.yaml")

    @memo()
    def power_cap_pattern(self) -> re.Pattern:
        return re.compile(self.conventions()["power_cap_pattern"], re.IGNORECASE)

    def power_capped(self, text: object) -> bool:
        """A system id or name that says power-capped (the pattern is in schemas/conventions.yaml)."""
        return bool(self.power_cap_pattern().search(str(text or "")))

    @memo()
    def choices(self, column: str) -> tuple[str, ...]:
        """The allowed values of a column of the canonical table (its ``isin`` check in
        :data:`SCHEMA_FILE`): division, availability, scenario, status."""
        spec = (self.load_yaml(SCHEMA_FILE).get("columns") or {}).get(column) or {}
        allowed = (spec.get("checks") or {}).get("isin")
        if not isinstance(allowed, list) or not allowed:
            raise ConfigError(f"{SCHEMA_FILE}: column {column} has no isin check")
        return tuple(str(v) for v in allowed)

    def claim_defaults(self) -> dict[str, float]:
        data = self.conventions()["claims"]
        return {k: float(data[k]) for k in ("tolerance_pct_points", "tolerance_ratio")}

    def canonical_scenario(self, text: str) -> str | None:
        return canonical_units(text, self.scenarios())

    @memo()
    def accelerator_patterns(self) -> tuple[tuple[str, re.Pattern], ...]:
        return tuple((e["name"], re.compile(e["pattern"], re.IGNORECASE))
                     for e in self.load_yaml("accelerators.yaml")["accelerators"])

    def canonical_accelerator(self, text: str) -> str | None:
        """The canonical short name for a free-text accelerator name, or None."""
        return next((name for name, pattern in self.accelerator_patterns() if pattern.search(text)), None)

    @memo()
    def registry_vendors(self) -> dict[str, str]:
        """Registered accelerator name -> its vendor (accelerators.yaml ``vendor``)."""
        return {e["name"]: e["vendor"] for e in self.load_yaml("accelerators.yaml")["accelerators"]}

    @memo()
    def vendors(self) -> dict[str, Vendor]:
        """Vendor name -> its words and brands (accelerators.yaml ``vendors``)."""
        out = {name: Vendor(name, tuple(spec["words"]), tuple(spec.get("brands") or ()))
               for name, spec in self.load_yaml("accelerators.yaml")["vendors"].items()}
        unlisted = sorted(set(self.registry_vendors().values()) - set(out))
        if unlisted:
            raise ConfigError(f"accelerators.yaml: vendors {unlisted} of the registry have no words under `vendors`")
        return out

    @memo(maxsize=4096)
    def vendor_in_name(self, text: str) -> str | None:
        """The vendor whose words or brands a published accelerator name carries
        (``AMD Instinct MI400X`` -> AMD); None when it carries none, or several
        vendors' (a name that cannot say)."""
        found = {v.name for v in self.vendors().values() if v.pattern().search(text)}
        return found.pop() if len(found) == 1 else None

    def accelerator_vendor(self, name: str) -> str | None:
        """The vendor of one part of the canonical table: the registry's for a
        registered name, else the vendor an unregistered part is kept under
        (``AMD-MI400X``: AMD); None when nothing says."""
        vendor = self.registry_vendors().get(name)
        if vendor:
            return vendor
        head = name.split("-", 1)[0]
        return head if "-" in name and head in self.vendors() else None


@dataclass(frozen=True)
class Vendor:
    """Whose parts a published name names: its ``words`` (left out of a part's
    name: ``AMD``, ``Instinct``) and ``brands`` (kept in it: ``TPU``, ``Jetson``)."""

    name: str
    words: tuple[str, ...]
    brands: tuple[str, ...] = ()

    def pattern(self, brands: bool = True) -> re.Pattern:
        names = self.words + (self.brands if brands else ())
        return re.compile(r"(?<![a-z0-9])(?:" + "|".join(re.escape(w).replace(r"\ ", r"\W+") for w in names)
                          + r")(?![a-z0-9])", re.IGNORECASE)


def round_order(name: str) -> tuple:
    """A round's place in time, as a sort key: v4.1 before v5.0 before v5.1 (a name without a number first)."""
    numbers = tuple(int(n) for n in re.findall(r"[0-9]+", name))
    return (1, numbers, name) if numbers else (0, (), name)


def canonical_units(text: str, accepted: tuple[str, ...]) -> str | None:
    """The accepted spelling of units (or a scenario) written in any case (``tokens/s`` -> ``Tokens/s``), or None."""
    key = text.strip().lower()
    return next((u for u in accepted if u.lower() == key), None)


def is_latency(units: str) -> bool:
    """Lower is better for latency units; every other unit is a rate."""
    return units.startswith("Latency")
