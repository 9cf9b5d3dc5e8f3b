"""From a reader's raw records to the canonical table's rows, or to a
rejection or an exclusion with its reasons.

Readers only know their format: they hand over :class:`RawRecord` s of text
fields and where each field sits. Everything that is the same for every
format (numbers, names, units, accelerator counts) is decided here, by the
resolvers of :mod:`pipeline.ingest.resolve`. A submission repeats few
distinct values in its descriptive fields, so each resolver is asked once
per distinct raw input of a submission: a repeated value costs a dictionary
lookup. Accepted rows go straight into columns (:class:`Accepted`: per row a
code into each part's distinct values), so a million rows are never a
million dicts.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field, replace

from pipeline.core.rules import Rules
from pipeline.core.findings import Finding, located
from pipeline.core.formulas import plausible
from pipeline.core.model import SET_ASIDE
from pipeline.core.vocabulary import Severity
from pipeline.ingest import resolve
from pipeline.readers.base import Disposition, RawRecord, ReadResult, clean, rejection

EXCLUDED_CPU = "CPU-only result: no accelerator to compare"
EXCLUDED_POWER = "power result: not a performance figure"


@dataclass(frozen=True)
class Context:
    """What the submission (not the file) says about its rows."""

    status: str                      # verified | post-deadline
    round: str | None = None         # the submission's round, when known
    submitter: str | None = None     # the submission's submitter, when known
    submission_version: int | None = None
    # True for a table MLCommons published, decided by where the file lives (the
    # walk: published/), never by its format: it is the authority on its own
    # names, so a name the registries lack keeps its row (warning
    # unregistered-name) and labels that disagree are noted, not refused. A
    # partner's file, in any format, must name known values whose labels agree.
    published: bool = False


# part of a row -> the canonical columns its values fill, in this order; a
# part's value is one tuple per distinct input ("origin": the row's file, made
# its source with the row's line, and its submission's status and version)
PARTS: dict[str, tuple[str, ...]] = {
    "round": ("round",),
    "submitter": ("submitter",),
    "system": ("system",),
    "benchmark": ("model", "used_model", "scenario", "units"),
    "division": ("division",),
    "availability": ("availability",),
    "accelerators": ("accelerator", "accelerator_variant", "composition", "accelerators_per_node", "nodes",
                     "total_accelerators"),
    "system_name": ("system_name",),
    "result_id": ("result_id",),
    "origin": ("source", "status", "submission_version"),
    "description": resolve.DESCRIPTION,
}


class Accepted:
    """The accepted rows of one ingest, as columns: per row, a code into each
    part's distinct values, the value, and the row's line in its file
    (-1 for none). :meth:`frame` makes the canonical table of them."""

    def __init__(self) -> None:
        self.distinct: dict[str, list[tuple]] = {part: [] for part in PARTS}
        self._index: dict[str, dict[tuple, int]] = {part: {} for part in PARTS}
        self.codes: dict[str, array] = {part: array("q") for part in PARTS}
        self.value = array("d")
        self.line = array("q")

    def __len__(self) -> int:
        return len(self.value)

    def code(self, part: str, value: tuple) -> int:
        """The code of one distinct value of a part (given a new code when new)."""
        index = self._index[part]
        code = index.get(value)
        if code is None:
            code = index[value] = len(self.distinct[part])
            self.distinct[part].append(value)
        return code

    def frame(self):
        """The canonical table (pandas, the schema's columns and types) of the rows."""
        import numpy as np
        import pandas as pd

        from pipeline.ingest.table import COLUMNS, dtype

        n = len(self)
        columns: dict[str, object] = {}
        for part, names in PARTS.items():
            codes = np.frombuffer(self.codes[part], dtype=np.int64) if n else np.zeros(0, dtype=np.int64)
            for j, name in enumerate(names):
                values = [v[j] for v in self.distinct[part]]
                kind = dtype(name)
                if name == "source":
                    columns[name] = _cells(pd.array(values, dtype=kind).take(codes), self.line)
                elif kind == np.dtype("int64"):
                    columns[name] = np.array(values, dtype=np.int64)[codes] if values else codes
                else:
                    columns[name] = pd.array(values, dtype=kind).take(codes)
        columns["value"] = np.frombuffer(self.value, dtype=np.float64).copy() if n else np.zeros(0)
        return pd.DataFrame({name: columns[name] for name in COLUMNS}, index=pd.RangeIndex(n), copy=False)


def _cells(files, lines: array):
    """``file:line`` of each row (``file`` alone for a row without a line)."""
    import numpy as np
    import pandas as pd

    files = pd.Series(files)
    at = pd.Series(np.frombuffer(lines, dtype=np.int64) if len(lines) else np.zeros(0, dtype=np.int64))
    cells = files + ":" + at.astype("str")
    return cells.where(at >= 0, files).array


@dataclass
class FileOutcome:
    """What became of one file's records: how many there were and how many
    were accepted; the file's findings (its reader's and the rows'); every
    row not accepted (its reader's rejections included)."""

    records: int
    accepted: int
    findings: list[Finding] = field(default_factory=list)
    dispositions: list[Disposition] = field(default_factory=list)


class Normaliser:
    """Records to canonical rows, added to ``accepted``. Each resolver's answer
    is kept per submission context and distinct raw input."""

    def __init__(self, rules: Rules, accepted: Accepted):
        self.rules, self.accepted = rules, accepted
        self._memos: dict[Context, _Memo] = {}

    def add(self, result: ReadResult, ctx: Context) -> FileOutcome:
        """Every record of a reader's output accepted (into the columns),
        excluded or rejected; a table MLCommons published (``ctx.published``)
        is the authority on its own names."""
        memo = self._memos.get(ctx)
        if memo is None:
            memo = self._memos[ctx] = _Memo(self.rules, ctx, self.accepted)
        before = len(self.accepted)
        found, dispositions = memo.add(result.records)
        accepted = len(self.accepted) - before
        return FileOutcome(accepted + len(dispositions), accepted, merge_warnings(result.findings + found),
                           result.dispositions + dispositions)


class _Memo:
    """One context's resolvers, each answered once per distinct raw input:
    raw input -> (code of the part's value, or -1 when the part fails; its problems)."""

    def __init__(self, rules: Rules, ctx: Context, accepted: Accepted):
        self.rules, self.ctx, self.accepted = rules, ctx, accepted
        self.memo: dict[str, dict] = {part: {} for part in PARTS}
        self.labels: dict[tuple, tuple] = {}   # the labels a row must back up -> their problems

    def add(self, records) -> tuple[list[Finding], list[Disposition]]:
        ctx, accepted = self.ctx, self.accepted
        memo = self.memo
        rounds, submitters, systems = memo["round"], memo["submitter"], memo["system"]
        benchmarks, divisions, availabilities = memo["benchmark"], memo["division"], memo["availability"]
        accelerators, names, ids = memo["accelerators"], memo["system_name"], memo["result_id"]
        descriptions = memo["description"]
        codes = accepted.codes
        put = {part: codes[part].append for part in PARTS}
        put_round, put_submitter, put_system = put["round"], put["submitter"], put["system"]
        put_benchmark, put_division, put_availability = put["benchmark"], put["division"], put["availability"]
        put_accelerators, put_name, put_id, put_origin = (put["accelerators"], put["system_name"],
                                                          put["result_id"], put["origin"])
        put_description = put["description"]
        put_value, put_line = accepted.value.append, accepted.line.append
        number = resolve.NUMBER.match
        found: list[Finding] = []
        dispositions: list[Disposition] = []
        last_source, origin = None, -1
        for rec in records:
            get = rec.fields.get
            key = (get("accelerator"), get("platform"), get("accelerators_per_node"), get("nodes"),
                   get("total_accelerators"))
            acc = accelerators.get(key) or self._accelerators(key)
            if acc[2]:
                dispositions.append(Disposition(rec.cell, SET_ASIDE, "", EXCLUDED_CPU))
                continue
            if get("power") == "true":
                label = self._labels(rec)
                if label:
                    here = _located(rec, (label,))
                    found.extend(here)
                    if any(f.severity == Severity.ERROR for f in here):
                        dispositions.append(rejection(rec.cell, here))
                        continue
                dispositions.append(Disposition(rec.cell, SET_ASIDE, "", EXCLUDED_POWER))
                continue
            round_text = get("round")
            rnd = rounds.get(round_text) or self._round(round_text)
            text = get("submitter")
            sub = submitters.get(text) or self._submitter(text)
            text = get("system")
            system = systems.get(text) or self._system(text)
            key = (get("model"), get("scenario"), get("units"), round_text, get("used_model"))
            bench = benchmarks.get(key) or self._benchmark(key)
            text = get("division")
            division = divisions.get(text) or self._choice("division", text)
            text = get("availability")
            availability = availabilities.get(text) or self._choice("availability", text)
            text = get("value")
            value_problems: tuple = ()
            if text is not None and number(text) and plausible(value := float(text)):
                pass   # a plain number in the plausible range, as typed
            else:
                value, problems = resolve.resolve_value(clean(text))
                value_problems = tuple(problems)
            text = get("system_name")
            name = names.get(text) or self._text("system_name", text)
            text = get("result_id")
            rid = ids.get(text) or self._text("result_id", text)
            # the labels a partner must back up: a power cap in the system's id or
            # name, the network division (flags kept with each distinct text)
            label = self._labels(rec) if system[2] or name[2] or division[2] else ()
            key = (get("host_processor"), get("host_processors_per_node"), get("framework"),
                   get("operating_system"), get("weight_data_types"), get("platform"), get("nodes"))
            desc = descriptions.get(key) or self._description(key)
            if rnd[1] or sub[1] or system[1] or bench[1] or value_problems or division[1] or \
                    availability[1] or acc[1] or label or name[1] or rid[1] or desc[1]:
                here = _located(rec, (rnd[1], sub[1], system[1], bench[1], value_problems, division[1],
                                      availability[1], acc[1], label, name[1], rid[1], desc[1]))
                found.extend(here)
                if any(f.severity == Severity.ERROR for f in here):
                    dispositions.append(rejection(rec.cell, here))
                    continue
            if rec.source is not last_source:
                last_source = rec.source
                origin = accepted.code("origin", (last_source.file, ctx.status, ctx.submission_version))
            put_round(rnd[0])
            put_submitter(sub[0])
            put_system(system[0])
            put_benchmark(bench[0])
            put_division(division[0])
            put_availability(availability[0])
            put_accelerators(acc[0])
            put_name(name[0])
            put_id(rid[0])
            put_description(desc[0])
            put_origin(origin)
            put_value(value)
            at = rec.line if rec.line is not None else rec.row
            put_line(-1 if at is None else at)
        return found, dispositions

    # each resolver asked once per distinct raw input: the answer is memoised

    def _answer(self, part: str, key, value: tuple, problems, fields: tuple = ()) -> tuple:
        """Keep (and return) a resolver's answer to ``key``: the code of its
        value (-1 when it rejects the row), its problems, with those of the
        characters of ``fields`` ((name, text) pairs), and whether the row's
        labels must be checked together (:meth:`_labels`)."""
        problems = tuple(problems) + tuple(p for name, text in fields
                                           for p in resolve.characters(self.rules, name, text, self.ctx.published))
        code = -1 if resolve.errors(problems) else self.accepted.code(part, value)
        flag = not self.ctx.published and resolve.labels_to_check(self.rules, part, value[0])
        self.memo[part][key] = out = (code, problems, flag)
        return out

    def _round(self, text: str | None) -> tuple:
        value, problems = resolve.resolve_round(self.rules, clean(text), self.ctx.round)
        return self._answer("round", text, (value,), problems, (("round", clean(text)),))

    def _submitter(self, text: str | None) -> tuple:
        value, problems = resolve.resolve_submitter(clean(text), self.ctx.submitter)
        return self._answer("submitter", text, (value,), problems, (("submitter", value),))

    def _system(self, text: str | None) -> tuple:
        value, problems = resolve.resolve_required("system", clean(text))
        return self._answer("system", text, (value,), problems, (("system", value),))

    def _choice(self, name: str, text: str | None) -> tuple:
        value, problems = resolve.resolve_choice(name, clean(text), self.rules.choices(name))
        return self._answer(name, text, (value,), problems, ((name, clean(text)),))

    def _benchmark(self, key: tuple) -> tuple:
        model_text, scenario_text, units, round_text, used_text = map(clean, key)
        values, problems = resolve.resolve_benchmark(
            self.rules, model_text, scenario_text, units, resolve.round_name(round_text, self.ctx.round),
            self.ctx.published, used_text)
        return self._answer("benchmark", key, values, problems,
                            (("model", model_text), ("used_model", used_text), ("scenario", scenario_text),
                             ("units", units)))

    def _accelerators(self, key: tuple) -> tuple:
        """Also whether the row is CPU-only (no accelerator named, none per
        node: excluded); a partner's row whose system id names an
        accelerator is not (it is refused)."""
        accelerator, platform, per_node, nodes, total = map(clean, key)
        cpu, why = resolve.cpu_only(self.rules, accelerator, per_node, platform, self.ctx.published)
        values, problems = resolve.resolve_accelerators(self.rules, accelerator, platform, per_node, nodes, total,
                                                        self.ctx.published)
        code, problems, _ = self._answer("accelerators", key, values, tuple(why) + tuple(problems),
                                      (("accelerator", accelerator), ("platform", platform),
                                       ("accelerators_per_node", per_node), ("nodes", nodes),
                                       ("total_accelerators", total)))
        self.memo["accelerators"][key] = out = (code, problems, cpu)
        return out

    def _description(self, key: tuple) -> tuple:
        """The system description as stated (texts kept as given), and a host
        count that contradicts the system id. Free text, not a name: its
        characters are not checked (a published processor name holds a
        narrow no-break space); every view escapes it."""
        texts = tuple(map(clean, key))
        values, problems = resolve.resolve_description(*texts, self.ctx.published)
        return self._answer("description", key, values, problems)

    def _labels(self, rec: RawRecord) -> tuple:
        """The problems of the labels a row must back up together (power, power
        cap, network division), asked once per distinct set of them."""
        get = rec.get
        key = (get("system"), get("system_name"), get("accelerator"), get("division"), get("power"),
               get("power_data"))
        problems = self.labels.get(key)
        if problems is None:
            self.labels[key] = problems = resolve.resolve_labels(self.rules, *key, self.ctx.published)
        return problems

    def _text(self, part: str, text: str | None) -> tuple:
        """A text kept as given (system name, result id), and the problems of its characters."""
        value = clean(text)
        return self._answer(part, text, (value,), (), ((part, value),))


def _located(rec: RawRecord, groups: tuple) -> list[Finding]:
    """The problems of one record, each placed where its field sits (``found``
    None: what the record holds in that field)."""
    return [located(code, rec.place(name), expected, rec.fields.get(name, "<absent>") if got is None else got,
                    message, *severity)
            for problems in groups for code, name, expected, got, message, *severity in problems]


def merge_warnings(found: list[Finding]) -> list[Finding]:
    """One warning per file, code, field and value: an unregistered name or a
    count that disagrees is said once (at its first row, with how many rows
    share it), not once per row. Errors are kept as they are."""
    groups: dict[tuple, list[int]] = {}
    for i, f in enumerate(found):
        if f.severity == Severity.WARNING:
            groups.setdefault((f.code, f.file, f.where.column or f.where.key, f.expected, f.found),
                              []).append(i)
    drop = set()
    merged = {}
    for members in groups.values():
        if len(members) > 1:
            first = found[members[0]]
            merged[members[0]] = replace(first, message=f"{first.message} (and {len(members) - 1} more "
                                                        f"row{'s' if len(members) > 2 else ''})")
            drop.update(members[1:])
    return [merged.get(i, f) for i, f in enumerate(found) if i not in drop]
