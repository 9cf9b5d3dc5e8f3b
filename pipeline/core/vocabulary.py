"""One vocabulary: every word a verdict, a status, an outcome or a severity
is said with, as one enumeration per kind.

A value has one ``code`` (the member's value: what JSON, CSV and the
``--verdict`` filters carry) and one ``label`` (how text, markdown, JUnit and
the HTML report say it to a reader). A member is a ``str``, so it compares,
sorts and serialises as its code. :func:`tally` is the one count of them.
Where a finding code and a verdict name one outcome, :data:`FINDING_VERDICTS`
maps one to the other (docs/findings.md lists the map).
"""

from __future__ import annotations

from collections import Counter
from enum import StrEnum


class Word(StrEnum):
    """A value with its code (the value) and its label (:data:`_LABELS`, else the code)."""

    code = property(lambda self: self.value)
    label = property(lambda self: _LABELS.get(self.value, self.value))


class Severity(Word):
    ERROR, WARNING = "error", "warning"    # the data failed a check; noted, not failing


class Status(Word):
    """A result's status: reviewed by MLCommons (submitted by the deadline) or not."""
    VERIFIED, POST_DEADLINE = "verified", "post-deadline"


class Outcome(Word):
    """What became of an input row: a row of the table; refused, with its findings;
    read but not a comparable result (CPU-only, a power figure), with why."""
    ACCEPTED, REJECTED, SET_ASIDE = "accepted", "rejected", "set-aside"


class AgreementVerdict(Word):
    """compare: a partner result within the tolerance of its reference, outside
    it, with no reference, or not compared (another vendor's parts, power-capped,
    no eligible reference)."""
    AGREE, DEVIATES, NO_REFERENCE, EXCLUDED = "agree", "deviates", "no-reference", "excluded"


class GateVerdict(Word):
    """The gate's word for a result of the reference submitter itself."""
    REFERENCE = "reference"


class ClaimVerdict(Word):
    """A claim of the ledger, recomputed (cherry-picked: it holds only against a
    comparator that is not the strongest)."""
    HOLDS, DOES_NOT_HOLD, CHERRY_PICKED = "holds", "does-not-hold", "cherry-picked"
    NO_REFERENCE, UNMATCHED, AMBIGUOUS, INVALID = "no-reference", "unmatched", "ambiguous", "invalid"


class ScalingVerdict(Word):
    SUB_LINEAR, LINEAR, SUPER_LINEAR = "sub-linear", "linear", "super-linear"
    NO_REFERENCE, NOT_APPLICABLE = "no-reference", "not-applicable"


class CrosscheckVerdict(Word):
    MATCHES, DIFFERS, NOT_PUBLISHED = "matches", "differs", "not-published"


class SupersededFate(Word):
    """What became of a superseded version's row in the version that superseded it."""
    WITHDRAWN, REPLACED, LEFT_OUT = "withdrawn", "replaced", "left out"


# code -> label, where they differ: one label per code, whichever kinds share the code
_LABELS = {"post-deadline": "unverified",          # MLCommons' word for a result it did not review
           "no-reference": "no reference", "does-not-hold": "does not hold",
           "cherry-picked": "holds only against a weaker comparator", "unmatched": "no matching result",
           "ambiguous": "ambiguous selector", "set-aside": "set aside", "not-applicable": "not applicable",
           "not-published": "not published"}

# finding code -> the verdict it reports (the finding is the located reason of that verdict)
FINDING_VERDICTS: dict[str, Word] = {
    "deviates-from-reference": AgreementVerdict.DEVIATES,
    "claim-not-supported": ClaimVerdict.DOES_NOT_HOLD,
    "claim-cherry-picked": ClaimVerdict.CHERRY_PICKED,
    "claim-no-reference": ClaimVerdict.NO_REFERENCE,
    "selector-unmatched": ClaimVerdict.UNMATCHED,
    "selector-ambiguous": ClaimVerdict.AMBIGUOUS,
    "published-value-differs": CrosscheckVerdict.DIFFERS,
    "not-published": CrosscheckVerdict.NOT_PUBLISHED,
}

# every kind of word (docs/findings.md lists them)
KINDS: tuple[type[Word], ...] = (AgreementVerdict, GateVerdict, Outcome, ClaimVerdict, ScalingVerdict,
                                 CrosscheckVerdict, SupersededFate, Status, Severity)


def label(value: object) -> str:
    """The label of a code of any kind (a text that is no code is shown as it is)."""
    return _LABELS.get(str(value), str(value))


def tally(values, kinds) -> dict[str, int]:
    """How many of VALUES (an iterable, or a pandas column) are each of KINDS, in their order, by code."""
    counted = values.value_counts() if hasattr(values, "value_counts") else Counter(map(str, values))
    return {str(k): int(counted.get(k, 0)) for k in kinds}
