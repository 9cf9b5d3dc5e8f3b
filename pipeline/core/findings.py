"""Findings and reports: what every check returns instead of raising.

A finding has a stable code (kebab-case, listed in :data:`CODES`), the file,
the place in it (line, row, key or column), what was expected and what was
found. Codes are a contract: tools and tests match on them, so a code is
renamed only where two words collided (docs/findings.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from pipeline.core.model import (LABEL_UNVERIFIED, Row, Source, any_unverified, label_frame, plain, result_key,
                                 typed_rows)
from pipeline.core.vocabulary import Severity

if TYPE_CHECKING:
    import pandas as pd

# code -> one-line meaning. Documented in the README.
CODES: dict[str, str] = {
    # files and formats
    "file-unreadable": "the file could not be read (missing, a folder, permission)",
    "file-too-large": "the file is larger than the configured size limit",
    "not-utf8": "the file is not valid UTF-8 text",
    "unknown-format": "the file's format could not be detected",
    "empty-file": "the file holds nothing (no header, no row)",
    "wrong-separator": "a CSV file whose fields are separated by another character than a comma (';', tab)",
    "format-mismatch": "the file does not parse in its declared format",
    "missing-column": "a required column is absent",
    "unexpected-column": "a column the format does not know",
    "malformed-number": "a number is not a plain decimal (e.g. '100 282', '103,48')",
    "missing-value": "a required field is empty",
    "duplicate-row": "the same result appears twice in one file",
    "empty-table": "a table has a header and no row",
    # domain
    "unknown-round": "the round is not in schemas/rounds.yaml",
    "unknown-model": "the benchmark id is not in schemas/models.yaml",
    "model-not-in-round": "the benchmark is not one of its round's models (schemas/rules/<round>.yaml)",
    "unknown-scenario": "the scenario is not an MLPerf scenario",
    "unknown-accelerator": "the accelerator name matches no entry of schemas/accelerators.yaml",
    "units-mismatch": "the units do not fit the model and scenario",
    "invalid-value": "a value is not a finite number in the plausible range (1e-6 to 1e12), or a count is absurd",
    "invalid-choice": "a field holds a value outside its allowed set",
    "accelerator-count-mismatch": "total accelerators disagree with nodes x accelerators per node and no platform id explains it",
    "schema-violation": "the row fails the canonical table schema",
    "unregistered-name": "a published MLCommons table names a model or accelerator the registries lack (row kept, warning naming the registry entry to add)",
    "accelerator-count-disagrees": "a count stated in a system or accelerator name disagrees with the published count, which is kept (warning)",
    "label-mismatch": "a row's labels contradict its system id or each other (accelerator, accelerators per node, nodes, division): an error in a partner's file, a warning in a published table",
    "description-contradicts-system-id": "a system description's host processor count contradicts the count the system id states (warning: the row is kept, the stated count is not taken as the system's)",
    "composition-assumed": "a published system of several accelerator types states no count per type: its accelerators are taken as shared evenly (warning)",
    "power-data-missing": "a power result or power-capped system without the power data or cap statement that backs the label",
    # submissions store
    "manifest-missing": "a version folder has no manifest.yaml",
    "manifest-invalid": "manifest.yaml does not follow schemas/manifest.v1.schema.json",
    "manifest-mismatch": "a manifest field disagrees with its folder or its file",
    "hash-mismatch": "a file changed after it was sealed (sha256 differs from the manifest)",
    "path-escape": "a manifest path or link leaves its version folder",
    "file-not-allowed": "a version folder holds a file or folder outside what it may hold (schemas/version_folder.yaml): a name a tool reads as configuration or code (dvc.yaml, *.dvc, conftest.py, Makefile...), a file under a name its format does not use, or a file a submission tree's MLPerf layout does not have",
    "unsafe-name": "a file or folder name outside the safe set of schemas/version_folder.yaml (ASCII letters, digits, _ + - . ; no leading - + . , no trailing .)",
    "over-cap": "partner input over a cap of schemas/version_folder.yaml (files or bytes of a version, rows of a file, characters of a field): refused at once, never read at length",
    "unlisted-file": "a file or link in a sealed version folder is not listed in its manifest",
    "verified-after-deadline": "declared verified but submitted after the round's deadline",
    "round-mismatch": "a row's round disagrees with its submission's round",
    "submitter-mismatch": "a row's submitter disagrees with its submission's submitter",
    "version-exists": "the version folder already exists; versions are immutable",
    "bad-version-folder": "an entry under a submitter folder is not a version folder v<N> (^v[1-9][0-9]*$); never read as a version",
    "misplaced-file": "a file beside the rounds or directly in a round folder, outside every version folder <round>/<submitter>/v<N>/; never read",
    # gate (versioning rules checked against the git base)
    "version-immutable": "a file of a version that exists at the base was changed, added or deleted",
    "version-not-next": "a new version folder is not numbered next (a gap or a reused number)",
    "policy-change": "a pull request changes what the gate's policy reads (params.yaml compare.*, schemas/, published/)",
    "verdict-flip": "with the maintainers' label: a shipped result whose verdict or status the change flips",
    "generated-file-edited": "an output of dvc.yaml (outs, metrics, dvc.lock) changed in a pull request",
    "maintenance-change": "a changed path that is not a new partner version of regular files: it needs the maintainers' label, never beside a submission",
    "reference-change": "a new version of the reference submitter: reference data, the maintainers' (label needed)",
    "more-than-one-submitter": "a submission pull request holds the versions of more than one submitter",
    "reference-broken": "a reference file, published table or rules file a gated result depends on fails verification",
    "result-dropped": "a new version drops or moves a result of the version it supersedes without listing it under withdraws",
    "submitted-before-round-opens": "a manifest's submitted_at lies before its round opens (rounds.yaml opens)",
    "submitted-in-future": "a manifest's submitted_at lies more than a day ahead of the clock",
    "submitted-before-previous": "a manifest's submitted_at lies before the previous version's",
    # compare
    "deviates-from-reference": "a partner result is outside the tolerance around its reference",
    # crosscheck (a submission declared verified against the published MLCommons table)
    "published-value-differs": "a result declared verified differs from the value MLCommons published for it",
    "not-published": "a result declared verified has no result in the published MLCommons table of its round",
    # partition
    "invariant-broken": "a partition invariant does not hold",
    # claims ledger, scaling and audit
    "ledger-invalid": "the claims ledger is not valid YAML or not the ledger's structure",
    "unknown-key": "a key the claims ledger format does not know",
    "selector-unmatched": "a claim's selector matches no result",
    "selector-ambiguous": "a claim's subject matches several results",
    "claim-not-supported": "the recomputed figure is outside the claim's tolerance",
    "claim-cherry-picked": "a claim holds only against a comparator that is not the strongest",
    "claim-no-reference": "the data lacks what the claim needs (e.g. no single-node reference)",
    "no-results": "the paths given hold no submission and no results file",
    "expectation-failed": "a Great Expectations expectation failed on a results set",
    # MLPerf submission trees, LoadGen logs, published JSON (schemas/rules/<round>.yaml)
    "too-deeply-nested": "a JSON document nests deeper than the reader allows",
    "missing-file": "a file the submission layout requires is absent",
    "missing-system-field": "a required field of a system description JSON is absent",
    "path-mismatch": "a system description disagrees with the folder it sits in (submitter, division)",
    "malformed-log-line": "a ':::MLLOG' line of a LoadGen log is not valid JSON",
    "missing-log-key": "a key the round's rules need is absent from the LoadGen log",
    "run-invalid": "LoadGen marked the run INVALID",
    "test-mode-mismatch": "the performance log is not a PerformanceOnly run",
    "scenario-mismatch": "the log's LoadGen scenario does not fit the scenario folder",
    "wrong-seed": "an RNG seed differs from the round's official seed",
    "min-duration-short": "the run's minimum duration is below the round's minimum",
    "sample-count-low": "effective_performance_sample_count is below the model's minimum",
    "token-latencies-off": "an LLM run without requested_use_token_latencies",
    "latency-setting-mismatch": "the TTFT/TPOT limits the run was made with are not the scenario's",
    "latency-limit-exceeded": "a p99 TTFT/TPOT is over the scenario's limit",
    "latency-constraint-exceeded": "a run's latency (the target given to early stopping, else its p99) is over the round's constraint",
    "min-queries-short": "outside early stopping, effective_min_query_count is below the round's minimum",
    "samples-per-query-low": "an Offline run of the closed division has fewer samples per query than the model's minimum",
    "accuracy-below-target": "an accuracy metric is under the model's target",
    "accuracy-above-limit": "an accuracy metric is over the model's upper limit (e.g. TOKENS_PER_SAMPLE, GEN_LEN)",
    "missing-metric": "an accuracy metric the target needs is absent from accuracy.txt",
    "limit-metric-unstated": "accuracy.txt does not state a metric that has only an upper limit (not checked, as MLCommons; warning)",
    "compliance-missing": "a compliance test the model requires is absent",
    "compliance-failed": "a compliance test's verification does not report a pass",
    "rules-missing": "no rules file (schemas/rules/<round>.yaml) for the round",
    # text hygiene and hostile inputs (pipeline/core/textcheck.py)
    "byte-order-mark": "a partner's CSV, manifest or ledger starts with a UTF-8 byte-order mark",
    "crlf-line-ends": "a partner's CSV, manifest or ledger has CRLF (or lone CR) line ends",
    "control-character": "a partner's text file holds a control character (NUL, escape, ...)",
    "mojibake": "UTF-8 text decoded as Latin-1/cp1252 and saved again (e.g. 'CDNAÃ‚ 4')",
    "duplicate-column": "a CSV header names the same column twice",
    "duplicate-key": "a key appears twice where it must appear once (YAML or JSON mapping, LoadGen log)",
    "invisible-character": "a zero-width, bidirectional-control or other invisible character, or a non-ASCII space, in a name or a partner's text",
    "confusable-character": "a letter or digit drawn like an ASCII one that is not (fullwidth, Cyrillic 'А' in 'АMD')",
}


@dataclass(frozen=True)
class Finding:
    """One problem, located: ``where`` is made where the problem is found."""

    code: str
    where: Source
    expected: str
    found: str
    message: str
    severity: Severity = Severity.ERROR  # error: the data failed a check; warning: noted, not failing
    # submit names the file the user gave; this is where its version holds it (what the gate names)
    sealed: str | None = None

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unregistered finding code {self.code!r}")

    @property
    def file(self) -> str:
        return self.where.path

    @property
    def place(self) -> str:
        return self.where.place

    @property
    def line(self) -> int | None:
        return self.where.line

    def to_dict(self) -> dict:
        w = self.where
        return {"code": self.code, "file": w.path, "line": w.line, "row": w.row, "column": w.column,
                "key": w.key, "place": w.place, "expected": self.expected, "found": self.found,
                "message": self.message, "severity": self.severity,
                **({"sealed": self.sealed} if self.sealed else {})}

    def render(self) -> str:
        where = f"{self.file}: {self.place}" if self.place else self.file
        return (
            f"{where}: [{self.code}] {self.message} "
            f"(expected {self.expected}; found {self.found})"
            + (f" [in the version: {self.sealed}]" if self.sealed else "")
        )


def located(code: str, where: Source, expected: object, found: object, message: str,
            severity: Severity = Severity.ERROR) -> Finding:
    """A finding at ``where``, expected/found shortened to printable text."""
    return Finding(code, where, _show(expected), _show(found), message, severity)


MAX_SHOWN = 200  # a finding quotes at most this much of what it found


def _show(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    if len(text) > MAX_SHOWN:
        return f"{text[:MAX_SHOWN]}… ({len(text)} characters)"
    return text


class ReportShape:
    """What every library entry point returns: a summary, typed rows (one per result, claim,
    suite...) and findings, written in any format by :mod:`pipeline.output.render`, never
    printed here. :class:`Report` holds its rows, :class:`TableReport` builds them from a table."""

    rows: list[Row]
    findings: list[Finding]
    summary: dict
    extra: Mapping = MappingProxyType({})   # more top-level keys of the JSON document (the audit's GX results)
    files: tuple[str, ...] = ()             # the files checked, as the user names them (JUnit: one case each)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == Severity.ERROR]

    @property
    def ok(self) -> bool:
        return self.error_count() == 0

    # What text output needs, without building every row and finding: a report
    # over a large table (a million rows) builds only what is shown.
    def finding_count(self) -> int:
        return len(self.findings)

    def error_count(self) -> int:
        return len(self.errors)

    def findings_head(self, limit: int | None) -> list[Finding]:
        return list(self.findings[:limit])

    def code_counts(self) -> Counter:
        """How many findings of each code."""
        return Counter(f.code for f in self.findings)

    def row_count(self) -> int:
        return len(self.rows)

    def rows_head(self, limit: int | None) -> list[Row]:
        return list(self.rows[:limit])

    def any_unverified(self) -> bool:
        """Whether any row is labelled unverified (text output adds the MLCommons footnote)."""
        return any(r.get("label") == LABEL_UNVERIFIED for r in self.rows)

    def frame(self):
        """The rows as a table (CSV and Parquet outputs)."""
        import pandas as pd

        return pd.DataFrame([dict(r) for r in self.rows])

    def to_dict(self) -> dict:
        """The JSON document: the same for ``--format json`` and ``-o x.json``."""
        return {"summary": plain({**self.summary, "findings": self.finding_count(), "errors": self.error_count()}),
                "findings": [f.to_dict() for f in self.findings], "rows": plain(self.rows), **plain(dict(self.extra))}


@dataclass
class Report(ReportShape):
    """A report of the rows it holds: a command's, a step's, the gate's."""

    rows: list[Row] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def combine(self, before: list[Finding] = (), after: list[Finding] = (), summary: dict | None = None) -> Report:
        """This report with the findings of the same run around its own: BEFORE (what reading its
        input found), AFTER (what a later step found); SUMMARY: what a later step adds to it.
        Never patched in place."""
        return replace(self, findings=[*before, *self.findings, *after], summary={**self.summary, **(summary or {})})


@dataclass
class TableReport(ReportShape):
    """A report over a table that may hold a million rows (the canonical
    table, the agreement table, the two sets): its rows are the table's, typed
    as ``kind`` and built only for those shown; ``frame()`` is the table as it
    is written. Its findings are those listed (``found``), then one error per
    row whose ``flag`` column holds the flag's value (``finding_of(row,
    prefix)``, built only when shown: 500,000 deviating rows make no 500,000
    objects for a text report of 200), then those of a later step (``after``)."""

    table: pd.DataFrame
    kind: str
    summary: dict = field(default_factory=dict)
    found: list[Finding] = field(default_factory=list)
    after: list[Finding] = field(default_factory=list)
    labelled: bool = False        # rows get the MLCommons label and footnote of their status when built
    flag: tuple[str, str] | None = None
    finding_of: Callable[[dict, str], Finding] | None = None
    prefix: str = ""              # before a row's source in its finding: the submissions root, as given
    # texts held as categoricals (a few distinct values over a million rows), written as text
    text_columns: tuple[str, ...] = ()

    def combine(self, before: list[Finding] = (), after: list[Finding] = (), summary: dict | None = None,
                prefix: str | None = None) -> TableReport:
        """As :meth:`Report.combine`; PREFIX: the root the flagged rows' findings name their files under."""
        return replace(self, found=[*before, *self.found], after=[*self.after, *after],
                       summary={**self.summary, **(summary or {})}, prefix=self.prefix if prefix is None else prefix)

    @property
    def rows(self) -> list[Row]:
        return self.rows_head(None)

    @property
    def findings(self) -> list[Finding]:
        return self.findings_head(None)

    def _flagged(self, limit: int | None = None) -> list[dict]:
        import numpy as np

        if self.flag is None:
            return []
        column, value = self.flag
        at = np.flatnonzero((self.table[column] == value).to_numpy())
        return plain(self.table.iloc[at if limit is None else at[:max(limit, 0)]].to_dict("records"))

    def _flag_count(self) -> int:
        return 0 if self.flag is None else int((self.table[self.flag[0]] == self.flag[1]).sum())

    def finding_count(self) -> int:
        return len(self.found) + self._flag_count() + len(self.after)

    def error_count(self) -> int:
        return sum(1 for f in self.found + self.after if f.severity == Severity.ERROR) + self._flag_count()

    def code_counts(self) -> Counter:
        """As :meth:`ReportShape.code_counts`; every flagged row's finding has the
        code of the first (one rule flags them all, as error_count counts them)."""
        counts = Counter(f.code for f in self.found + self.after)
        flagged = self._flag_count()
        if flagged:
            counts[self.finding_of(self._flagged(1)[0], self.prefix).code] += flagged
        return counts

    def findings_head(self, limit: int | None) -> list[Finding]:
        head = self.found[:limit]
        head = head + [self.finding_of(r, self.prefix)
                       for r in self._flagged(None if limit is None else limit - len(head))]
        return head + (self.after if limit is None else self.after[:max(limit - len(head), 0)])

    def row_count(self) -> int:
        return len(self.table)

    def rows_head(self, limit: int | None) -> list[Row]:
        head = self.table if limit is None else self.table.head(limit)
        if self.labelled:
            head = label_frame(head)
        return typed_rows(self.kind, head.to_dict("records"))

    def rows_at(self, positions) -> list[Row]:
        return typed_rows(self.kind, self.table.iloc[positions].to_dict("records"))

    def any_unverified(self) -> bool:
        if self.labelled:
            return any_unverified(self.table)
        return "label" in self.table.columns and bool((self.table["label"] == LABEL_UNVERIFIED).any())

    def frame(self):
        """The table as it is written: the texts held as categoricals back as text
        columns (the same file as when they were text all along)."""
        return self.table.assign(**{c: _text(self.table[c]) for c in self.text_columns}) if self.text_columns \
            else self.table


def _text(column):
    """A categorical column as a text column: each category's text taken per row
    (by Arrow; astype("str") goes through a million Python objects)."""
    import pandas as pd

    texts = pd.array(column.cat.categories.to_numpy(dtype=object), dtype="str")
    return pd.Series(texts.take(column.cat.codes.to_numpy(), allow_fill=True), index=column.index,
                     name=column.name)


def filtered(report: ReportShape, wanted: dict[str, object]) -> ReportShape:
    """The report with only the rows whose columns hold one of the values
    wanted (``{"verdict": ["deviates"], "round": []}``: an empty choice keeps
    every value), and the findings of those rows: a finding at a kept row's
    file and line, or naming a kept claim (``claims.<id>``); a finding of no
    line (the whole file) is always kept. The summary says how many rows are
    shown and by which filters."""
    wanted = {k: {str(v) for v in values} for k, values in wanted.items() if values}
    if not wanted:
        return report
    rows = [r for r in report.rows if all(str(r.get(k)) in v for k, v in wanted.items())]
    # a row's file and line, as a finding's Source holds them: the file relative to its root
    kept = {result_key(r) for r in rows if r.get("file")}
    claims = {f"claims.{r['id']}" for r in rows if r.get("id")}

    def of_a_kept_row(f: Finding) -> bool:
        key = f.where.key
        return (f.line is None or any(key and (key == c or key.startswith(c + ".")) for c in claims)
                or (f.where.file, f.line) in kept)

    summary = {**report.summary, "shown": len(rows),
               **{f"filter_{k}": ",".join(sorted(v)) for k, v in wanted.items()}}
    return Report(rows, [f for f in report.findings if of_a_kept_row(f)], summary)
