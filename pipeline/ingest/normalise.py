"""From a reader's raw records to the canonical table's rows, or to a
rejection or an exclusion with its reasons, decided by the resolvers of
:mod:`pipeline.ingest.resolve` whatever the format.

A submission repeats few distinct values in its descriptive fields, so each
resolver is asked once per distinct raw input of a submission. Accepted rows
go straight into columns (:class:`Accepted`: per row a code into each part's
distinct values), so a million rows are never a million dicts.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field, replace

from pipeline.core import limits
from pipeline.core.rules import Rules
from pipeline.core.findings import Finding, located
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
    published: bool = False          # a table MLCommons published (decided by the walk: where it lives)


# the parts read from one field: field text (stripped, None for a placeholder) -> (value, problems)
FIELDS = {
    "round": lambda memo, text: resolve.resolve_round(memo.rules, text, memo.ctx.round),
    "submitter": lambda memo, text: resolve.resolve_submitter(text, memo.ctx.submitter),
    "system": lambda memo, text: resolve.resolve_required("system", text),
    "division": lambda memo, text: resolve.resolve_choice("division", text, memo.rules.choices("division")),
    "availability": lambda memo, text: resolve.resolve_choice("availability", text,
                                                              memo.rules.choices("availability")),
    "system_name": lambda memo, text: (text, ()),   # a text kept as given
}
# part of a row -> the canonical columns its values fill, in this order; a
# part's value is one tuple per distinct input ("origin": the row's file, and
# its submission's status and version; the line is each row's own)
PARTS: dict[str, tuple[str, ...]] = {
    **{part: (part,) for part in FIELDS},
    "benchmark": ("model", "used_model", "scenario", "units"),
    "accelerators": ("accelerator", "accelerator_variant", "composition", "accelerators_per_node", "nodes",
                     "total_accelerators"),
    "origin": ("file", "status", "submission_version"),
    "description": resolve.DESCRIPTION,
}


class Accepted:
    """The accepted rows of one ingest, as columns: per row, a code into each
    part's distinct values, the value, the result id (never worth a code) and
    the row's line in its file (-1 for none)."""

    def __init__(self) -> None:
        self.distinct: dict[str, list[tuple]] = {part: [] for part in PARTS}
        self._index: dict[str, dict[tuple, int]] = {part: {} for part in PARTS}
        self.codes: dict[str, array] = {part: array("q") for part in PARTS}
        self.value = array("d")
        self.line = array("q")
        self.result_id: list[str | None] = []

    def __len__(self) -> int:
        return len(self.value)

    def code(self, part: str, value: tuple) -> int:
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
                if kind == np.dtype("int64"):
                    columns[name] = np.array(values, dtype=np.int64)[codes] if values else codes
                else:
                    columns[name] = pd.array(values, dtype=kind).take(codes)
        lines = pd.array(np.frombuffer(self.line, dtype=np.int64) if n else np.zeros(0, dtype=np.int64),
                         dtype=dtype("line"))
        columns["line"] = lines.copy()
        columns["line"][lines < 0] = pd.NA   # -1: a row with no line
        columns["source"] = _cells(columns["file"], columns["line"])
        columns["value"] = np.frombuffer(self.value, dtype=np.float64).copy() if n else np.zeros(0)
        columns["result_id"] = pd.array(self.result_id, dtype=dtype("result_id"))
        return pd.DataFrame({name: columns[name] for name in COLUMNS}, index=pd.RangeIndex(n), copy=False)


def _cells(files, lines):
    """The ``source`` column, for people to read: ``file:line`` of each row
    (``file`` alone for a row without a line), as :attr:`Source.cell` writes one."""
    import pandas as pd

    files, at = pd.Series(files), pd.Series(lines)
    cells = files + ":" + at.astype("str")
    return cells.where(at.notna(), files).array


@dataclass
class FileOutcome:
    """What became of one file's records (``dispositions``: every row not accepted)."""

    records: int
    accepted: int
    findings: list[Finding] = field(default_factory=list)
    dispositions: list[Disposition] = field(default_factory=list)


class Normaliser:
    """Records to canonical rows, added to ``accepted``, with one memo per submission context."""

    def __init__(self, rules: Rules, accepted: Accepted):
        self.rules, self.accepted = rules, accepted
        self._memos: dict[Context, _Memo] = {}

    def add(self, result: ReadResult, ctx: Context) -> FileOutcome:
        memo = self._memos.get(ctx)
        if memo is None:
            memo = self._memos[ctx] = _Memo(self.rules, ctx, self.accepted)
        before = len(self.accepted)
        found, dispositions = memo.add(result.records)
        accepted = len(self.accepted) - before
        return FileOutcome(accepted + len(dispositions), accepted, merge_warnings(result.findings + found),
                           result.dispositions + dispositions)


# part -> the raw fields its resolver reads (its answer's key), in the resolver's order
KEYS: dict[str, tuple[str, ...]] = {
    **{part: (part,) for part in FIELDS},
    "accelerators": ("accelerator", "platform", "accelerators_per_node", "nodes", "total_accelerators"),
    "benchmark": ("model", "scenario", "units", "round", "used_model"),
    "description": (*resolve.DESCRIPTION, "platform", "nodes"),
}
ROW_PARTS = ("round", "submitter", "system", "benchmark", "division", "availability", "system_name", "description")
# the order a row's problems are reported in
REPORTED = ("round", "submitter", "system", "benchmark", "value", "division", "availability", "accelerators",
            "labels", "system_name", "result_id", "description")


class _Memo:
    """One context's resolvers, each answered once per distinct raw input
    (:data:`KEYS`): raw input -> (code of the part's value, or -1 when the
    part fails; its problems; whether the row's labels need checking)."""

    def __init__(self, rules: Rules, ctx: Context, accepted: Accepted):
        self.rules, self.ctx, self.accepted = rules, ctx, accepted
        self.memo: dict[str, dict] = {part: {} for part in KEYS}
        self.labels: dict[tuple, tuple] = {}   # the labels a row must back up -> their problems
        self.longest = limits.cap(rules, "field_length")
        self.low, self.high = resolve.bounds(rules)["value"]
        self.parts = [(part, self.memo[part], KEYS[part]) for part in ROW_PARTS]

    def add(self, records) -> tuple[list[Finding], list[Disposition]]:
        found: list[Finding] = []
        dispositions: list[Disposition] = []
        last_source, origin = None, -1
        for rec in records:
            get = rec.fields.get
            acc = self._ask("accelerators", tuple(map(get, KEYS["accelerators"])))
            if acc[2]:
                dispositions.append(Disposition(rec.origin, SET_ASIDE, "", EXCLUDED_CPU))
                continue
            if get("power") == "true":
                label = self._labels(rec)
                here = _located(rec, (label,))
                found.extend(here)
                bad = any(f.severity == Severity.ERROR for f in here)
                dispositions.append(rejection(rec.origin, here) if bad
                                    else Disposition(rec.origin, SET_ASIDE, "", EXCLUDED_POWER))
                continue
            answers = [memo.get(key := tuple(map(get, fields))) or self._ask(part, key)
                       for part, memo, fields in self.parts]
            value, value_problems = self._value(get("value"))
            rid, rid_problems = self._result_id(get("result_id"))
            # the labels a partner must back up: a power cap in the system's id or
            # name, the network division (flags kept with each distinct text)
            label = self._labels(rec) if any(a[2] for a in answers) else ()
            if acc[1] or label or value_problems or rid_problems or any(a[1] for a in answers):
                by_part = {part: a[1] for part, a in zip(ROW_PARTS, answers)}
                by_part.update(accelerators=acc[1], labels=label, value=value_problems, result_id=rid_problems)
                here = _located(rec, tuple(by_part[part] for part in REPORTED))
                found.extend(here)
                if any(f.severity == Severity.ERROR for f in here):
                    dispositions.append(rejection(rec.origin, here))
                    continue
            if rec.source is not last_source:
                last_source = rec.source
                origin = self.accepted.code("origin", (last_source.file, self.ctx.status,
                                                       self.ctx.submission_version))
            self._put(answers, acc[0], origin, value, rid, rec.line if rec.line is not None else rec.row)
        return found, dispositions

    def _ask(self, part: str, key: tuple) -> tuple:
        # an answer is never empty: (code, problems, flag)
        return self.memo[part].get(key) or (self._field(part, *key) if part in FIELDS
                                            else getattr(self, f"_{part}")(*key))

    def _put(self, answers: list[tuple], accelerators: int, origin: int, value: float, rid, at) -> None:
        codes = self.accepted.codes
        for part, answer in zip(ROW_PARTS, answers):
            codes[part].append(answer[0])
        codes["accelerators"].append(accelerators)
        codes["origin"].append(origin)
        self.accepted.value.append(value)
        self.accepted.result_id.append(rid)
        self.accepted.line.append(-1 if at is None else at)

    def _value(self, text: str | None) -> tuple[float | None, tuple]:
        """A plain number in the plausible range, as typed, at once; anything else as the resolver judges it."""
        if text is not None and resolve.NUMBER.match(text) and self.low <= (value := float(text)) <= self.high:
            return value, ()
        value, problems = resolve.resolve_value(self.rules, clean(text))
        return value, tuple(problems)

    def _result_id(self, text: str | None) -> tuple[str | None, tuple]:
        """A result id kept as given (each row has its own: not memoised), and
        the problems of its characters (plain short text has none)."""
        value = clean(text)
        if value is None or (value.isascii() and len(value) <= self.longest):
            return value, ()
        return value, resolve.characters(self.rules, "result_id", value, self.ctx.published)

    # each resolver asked once per distinct raw input: the answer is memoised

    def _answer(self, part: str, key, value: tuple, problems, fields: tuple = ()) -> tuple:
        """Keep (and return) a resolver's answer to ``key``: the code of its
        value (-1 when it rejects the row), its problems and those of the
        characters of ``fields``, and whether the row's labels need :meth:`_labels`."""
        problems = tuple(problems) + tuple(p for name, text in fields
                                           for p in resolve.characters(self.rules, name, text, self.ctx.published))
        code = -1 if resolve.errors(problems) else self.accepted.code(part, value)
        flag = not self.ctx.published and resolve.labels_to_check(self.rules, part, value[0])
        self.memo[part][key] = out = (code, problems, flag)
        return out

    def _field(self, part: str, text: str | None) -> tuple:
        """A part read from one field (:data:`FIELDS`), and the problems of its characters."""
        given = clean(text)
        value, problems = FIELDS[part](self, given)
        return self._answer(part, (text,), (value,), problems, ((part, given),))

    def _benchmark(self, *key) -> tuple:
        model_text, scenario_text, units, round_text, used_text = map(clean, key)
        values, problems = resolve.resolve_benchmark(
            self.rules, model_text, scenario_text, units, resolve.round_name(round_text, self.ctx.round),
            self.ctx.published, used_text)
        return self._answer("benchmark", key, values, problems,
                            (("model", model_text), ("used_model", used_text), ("scenario", scenario_text),
                             ("units", units)))

    def _accelerators(self, *key) -> tuple:
        """Its flag says whether the row is CPU-only (:func:`resolve.cpu_only`)."""
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

    def _description(self, *key) -> tuple:
        """Free text, not a name: its characters are not checked (a published
        processor name holds a narrow no-break space); every view escapes it."""
        texts = tuple(map(clean, key))
        values, problems = resolve.resolve_description(*texts, self.ctx.published)
        return self._answer("description", key, values, problems)

    def _labels(self, rec: RawRecord) -> tuple:
        """The problems of the labels a row must back up together, asked once per distinct set."""
        get = rec.get
        key = (get("system"), get("system_name"), get("accelerator"), get("division"), get("power"),
               get("power_data"))
        problems = self.labels.get(key)
        if problems is None:
            self.labels[key] = problems = resolve.resolve_labels(self.rules, *key, self.ctx.published)
        return problems


def _located(rec: RawRecord, groups: tuple) -> list[Finding]:
    """The problems of one record, each placed where its field sits (``found``
    None: what the record holds in that field)."""
    return [located(code, rec.place(name), expected, rec.fields.get(name, "<absent>") if got is None else got,
                    message, *severity)
            for problems in groups for code, name, expected, got, message, *severity in problems]


def merge_warnings(found: list[Finding]) -> list[Finding]:
    """One warning per file, code, field and value, at its first row with how
    many rows share it, not once per row. Errors are kept as they are."""
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
