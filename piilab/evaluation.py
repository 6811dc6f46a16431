"""Evaluating predictions: entity F1, leaks, hallucinations, tokenization (chapter 04).

`evaluate(records, predictions)` scores raw model outputs against gold entities
and returns an `EvaluationResult`, a frozen dataclass with exactly these fields
(all rates in [0, 1]; ``result.to_dict()`` gives the same tree as plain JSON data):

- ``entity`` and ``per_type.<LABEL>``: precision, recall, F1 and tp/fp/fn over
  per-document *sets* of normalized ``(TYPE, VALUE)`` pairs, summed over documents;
- ``documents.leak_rate``: documents in which some gold occurrence is not fully
  covered by the replacement spans / all documents;
- ``entities.leak_rate``: gold pairs with any uncovered occurrence / gold pairs;
- ``entities.over_redaction_rate``: FP / predicted pairs (a legacy name: it does
  not count removed characters);
- ``entities.hallucination_rate``: parsed rows with no source match / rows,
  whatever the parse flag;
- ``parse.success_rate``: documents whose caller flag is True / documents;
- ``tokenization.deterministic_rate``: documents whose masking is identical with
  the candidate order reversed;
- ``tokenization.round_trip_rate``: documents whose masked text reassembles to
  the NFC source.

The leak metric works on *characters of the source*. Masking returns spans
(offsets into the NFC source); every occurrence of every gold value, literal or
a permitted variant (`piilab.matching.find_occurrences`, every start position,
repeats and overlaps included), must lie entirely inside the union of those
spans. A separator left between two masked halves is a leak. The metric never
searches the masked text for gold strings: that would call ``[PERSON_1]`` a leak
when the gold value is the word ``PERSON``, and would miss ``Alpha`` left next to
a masked ``Beta``.

What it is not: entity F1 here compares normalized value *pairs*, not NER spans
(a valid variant can mask the source completely yet count as a false positive),
and token equality is not identity resolution. Zero denominators give 0.

How sure a score is: `bootstrap_intervals(records, predictions, n=1000, seed=0)`
resamples the *documents* with replacement and gives percentile intervals for
entity precision, recall and F1 and both leak rates (`BootstrapIntervals`);
`paired_bootstrap(records, predictions_a, predictions_b)` resamples the same
documents for two systems and gives intervals for the differences A - B of F1 and
of the document leak rate (`PairedComparison`), whose `verdict` says ``"better"``
or ``"worse"`` only when the interval excludes zero. Both work from per-document counts
(`DocumentCounts`, `document_counts`), which hold numbers only and can be stored;
`bootstrap_counts` and `paired_bootstrap_counts` take such counts directly. The
resampling is seeded (`random.Random(seed)`): the same inputs, `n` and `seed`
give the same intervals on every machine.

Errors are `EvaluationError` (a `ValueError`); messages name the record id and
the reason, never an entity value.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from itertools import accumulate
from operator import itemgetter
from types import MappingProxyType

from piilab.errors import PiilabError
from piilab.labels import LABELS, PairError, gold_pairs, nfc
from piilab.masking import MaskResult, mask_text, reassemble_text
from piilab.matching import find_occurrences
from piilab.parsing import ParsedOutput, parse_model_output
from piilab.predictions import PredictionError, make_prediction, validate_predictions
from piilab.records import record_problems

__all__ = [
    "BootstrapIntervals",
    "Difference",
    "DocumentCounts",
    "DocumentRates",
    "DocumentScore",
    "EntityRates",
    "EvaluationError",
    "EvaluationResult",
    "Interval",
    "PairedComparison",
    "ParseRates",
    "Scores",
    "TokenizationRates",
    "bootstrap_counts",
    "bootstrap_intervals",
    "document_counts",
    "evaluate",
    "format_report",
    "oracle_predictions",
    "paired_bootstrap",
    "paired_bootstrap_counts",
    "score_document",
    "score_documents",
    "summarize",
    "uncovered_occurrences",
]

Pair = tuple[str, str]


class EvaluationError(PiilabError):
    """Invalid evaluation input (names the record and the reason, never a value).

    Besides the message, `source` (``"records"`` or ``"predictions"``), `index`
    (the 0-based position in that list) and `reason` (the message without the
    record id) say where and what, so that a caller that read the input from a
    file can point at a line instead of quoting an id (`piilab evaluate` does).
    """

    def __init__(self, message: str, *, source: str | None = None, index: int | None = None,
                 reason: str | None = None) -> None:
        super().__init__(message)
        self.source, self.index, self.reason = source, index, reason or message


@dataclass(frozen=True)
class DocumentScore:
    """Everything `evaluate` measures on one document (for teaching and debugging).

    Offsets only: `leaked` lists the gold pairs with an uncovered occurrence and
    `leak_spans` the uncovered ``(start, end)`` occurrences in the NFC source.
    """

    record_id: str
    gold: frozenset[Pair]
    predicted: frozenset[Pair]
    rows: int
    unmatched_rows: int
    parse_success: bool
    leaked: frozenset[Pair]
    leak_spans: tuple[tuple[int, int], ...]
    deterministic: bool
    round_trip: bool
    mask: MaskResult


@dataclass(frozen=True)
class Scores:
    """Precision, recall and F1 over ``(TYPE, VALUE)`` pairs, with their counts."""

    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int

    @classmethod
    def from_counts(cls, tp: int, fp: int, fn: int) -> Scores:
        precision = _rate(tp, tp + fp)
        recall = _rate(tp, tp + fn)
        f1 = _rate(2 * precision * recall, precision + recall) if precision + recall else 0.0
        return cls(precision, recall, f1, tp, fp, fn)


@dataclass(frozen=True)
class DocumentRates:
    """Rates over documents: ``leak_rate``, documents with an uncovered gold occurrence."""

    leak_rate: float


@dataclass(frozen=True)
class EntityRates:
    """Rates over gold pairs (``leak_rate``), predicted pairs (``over_redaction_rate``) and
    parsed rows (``hallucination_rate``)."""

    leak_rate: float
    over_redaction_rate: float
    hallucination_rate: float


@dataclass(frozen=True)
class ParseRates:
    """``success_rate``: documents whose caller flag is True."""

    success_rate: float


@dataclass(frozen=True)
class TokenizationRates:
    """Documents whose masking is order-independent and whose restoration is exact."""

    deterministic_rate: float
    round_trip_rate: float


@dataclass(frozen=True)
class EvaluationResult:
    """What `evaluate` returns; `to_dict()` is the JSON form (``piilab evaluate --json``).

    A renamed or missing field is an `AttributeError` where it is read, not a ``KeyError``
    deep inside a chapter.

    >>> Scores.from_counts(tp=3, fp=1, fn=0).precision
    0.75
    """

    entity: Scores
    per_type: Mapping[str, Scores]
    documents: DocumentRates
    entities: EntityRates
    parse: ParseRates
    tokenization: TokenizationRates

    def to_dict(self) -> dict:
        """Plain nested dicts and numbers, in field order (per_type in `LABELS` order)."""
        return {
            "entity": asdict(self.entity),
            "per_type": {label: asdict(scores) for label, scores in self.per_type.items()},
            "documents": asdict(self.documents),
            "entities": asdict(self.entities),
            "parse": asdict(self.parse),
            "tokenization": asdict(self.tokenization),
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> EvaluationResult:
        """The inverse of `to_dict`: ``EvaluationResult.from_dict(r.to_dict()) == r``.

        Reads a stored result back (``piilab evaluate --json``). Every block and field
        of `to_dict` must be there, per_type with every label of `LABELS`; a missing or
        mistyped one is an `EvaluationError` that names its path (``per_type.PHONE.tp``),
        never its value. Extra keys are ignored.

        >>> r = evaluate([], [])
        >>> EvaluationResult.from_dict(r.to_dict()) == r
        True
        """
        per_type = _block(data, "per_type", Mapping)
        return cls(
            entity=_dataclass_from(Scores, _block(data, "entity", Mapping), "entity"),
            per_type=MappingProxyType({
                label: _dataclass_from(Scores, _block(per_type, label, Mapping, "per_type"),
                                       f"per_type.{label}")
                for label in LABELS}),
            documents=_dataclass_from(DocumentRates, _block(data, "documents", Mapping),
                                      "documents"),
            entities=_dataclass_from(EntityRates, _block(data, "entities", Mapping), "entities"),
            parse=_dataclass_from(ParseRates, _block(data, "parse", Mapping), "parse"),
            tokenization=_dataclass_from(TokenizationRates,
                                         _block(data, "tokenization", Mapping), "tokenization"),
        )


def _block(data: object, key: str, kind: type, parent: str = "") -> object:
    where = f"{parent}.{key}" if parent else key
    if not isinstance(data, Mapping) or key not in data:
        raise EvaluationError(f"stored result: missing field {where}", reason="missing field")
    value = data[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise EvaluationError(f"stored result: field {where} has the wrong type",
                              reason="wrong type")
    return value


def _dataclass_from(cls: type, data: Mapping, where: str):
    values = {}
    for field in fields(cls):
        kind = int if field.type == "int" else (int, float)
        values[field.name] = _block(data, field.name, kind, where)
    return cls(**values)


def _gold_pairs(record: Mapping) -> frozenset[Pair]:
    try:
        return frozenset(pair for _, pair in gold_pairs(record))
    except PairError as err:
        raise EvaluationError(f"record {record['id']}: {err.reason}", reason=err.reason) from None


def uncovered_occurrences(source: str, gold: Iterable[Pair],
                          spans: Iterable[tuple[int, int]]) -> dict[Pair, list[tuple[int, int]]]:
    """The leak check on its own: gold occurrences not fully inside the union of `spans`.

    `source` is the NFC source, `gold` normalized ``(TYPE, VALUE)`` pairs and
    `spans` half-open ``(start, end)`` replacement offsets. Returns, for each
    leaked pair, its uncovered occurrences (every start position, repeats and
    variant spellings included). A pair that never occurs in the source maps to
    ``[]`` as a marker; `score_document` rejects such gold values before this.

    >>> uncovered_occurrences("010-1234-5678", [("PHONE", "010-1234-5678")], [(0, 3), (4, 13)])
    {('PHONE', '010-1234-5678'): [(0, 13)]}
    """
    covered = [0] * (len(source) + 1)
    for start, end in spans:
        for i in range(start, end):
            covered[i + 1] = 1
    prefix = list(accumulate(covered))  # prefix[i] = covered characters before offset i
    out: dict[Pair, list[tuple[int, int]]] = {}
    for label, value in sorted(gold):
        occurrences = find_occurrences(source, label, value)
        if not occurrences:
            out[label, value] = []
            continue
        missing = [(o.start, o.end) for o in occurrences
                   if prefix[o.end] - prefix[o.start] < o.end - o.start]
        if missing:
            out[label, value] = missing
    return out


def score_document(record: Mapping, prediction: Mapping | None) -> DocumentScore:
    """Score one document. `prediction` None means "no prediction": empty, unparsed."""
    rid = record["id"]
    source = nfc(record["source_text"])
    gold = _gold_pairs(record)
    output = "" if prediction is None else prediction["output"]
    flag = False if prediction is None else prediction["parse_success"]

    parsed: ParsedOutput = parse_model_output(output, source)
    predicted = frozenset((c.type, c.value) for c in parsed.rows) if flag else frozenset()
    candidates = list(parsed.candidates) if flag else []

    mask = mask_text(source, candidates)
    reversed_mask = mask_text(source, candidates[::-1])
    deterministic = mask == reversed_mask
    round_trip = reassemble_text(mask.masked_text, mask.mapping) == source

    uncovered = uncovered_occurrences(source, gold, ((sp.start, sp.end) for sp in mask.spans))
    if any(not occ for occ in uncovered.values()):
        label = next(lbl for (lbl, _), occ in uncovered.items() if not occ)
        reason = f"a gold {label} value does not occur in source_text"
        raise EvaluationError(f"record {rid}: {reason}", reason=reason)
    leaked = set(uncovered)
    leak_spans = [span for occ in uncovered.values() for span in occ]
    return DocumentScore(
        record_id=rid,
        gold=gold,
        predicted=predicted,
        rows=len(parsed.rows),
        unmatched_rows=len(parsed.unmatched),
        parse_success=bool(flag),
        leaked=frozenset(leaked),
        leak_spans=tuple(sorted(set(leak_spans))),
        deterministic=deterministic,
        round_trip=round_trip,
        mask=mask,
    )


def _rate(num: int, den: int) -> float:
    return num / den if den else 0.0


_NEEDED: Mapping[str, type] = {"id": str, "source_text": str}
_ENTITIES: Mapping[str, type] = {"entities": list}


def _check_inputs(records: list, predictions: list) -> dict[str, Mapping]:
    def fail(source: str, index: int, rid: object, reason: str) -> EvaluationError:
        where = f"{source}[{index}]" if rid is None else (
            f"record {rid}" if source == "records" else f"prediction for record {rid}")
        return EvaluationError(f"{where}: {reason}", source=source, index=index, reason=reason)

    ids: set[str] = set()
    for i, record in enumerate(records):
        # The fields evaluation reads; entities are checked as they are normalized.
        problems = record_problems(record, where="", required=_NEEDED, optional=_ENTITIES,
                                   entities=False)
        rid = record.get("id") if isinstance(record, Mapping) else None
        if problems:
            raise fail("records", i, rid if isinstance(rid, str) else None, problems[0])
        if rid in ids:
            raise fail("records", i, rid, "duplicate record id")
        ids.add(rid)
    try:
        return validate_predictions(predictions, ids)
    except PredictionError as err:
        raise EvaluationError(str(err), source="predictions", index=err.index,
                              reason=err.reason) from None


def evaluate(records: Iterable[Mapping], predictions: Iterable[Mapping]) -> EvaluationResult:
    """Score `predictions` against `records` (see the module docstring for every field).

    >>> rec = {"id": "d1", "source_text": "Call Alpha Beta at 555-0100", "entities": [
    ...     {"type": "PERSON", "value": "Alpha Beta"}, {"type": "PHONE", "value": "555-0100"}]}
    >>> pred = {"id": "d1", "output": "PERSON\\tAlpha", "parse_success": True}
    >>> r = evaluate([rec], [pred])
    >>> r.entity.tp, r.entity.fp, r.entity.fn, r.documents.leak_rate
    (0, 1, 2, 1.0)
    """
    return summarize(score_documents(records, predictions))


def score_documents(records: Iterable[Mapping],
                    predictions: Iterable[Mapping]) -> list[DocumentScore]:
    """`score_document` for every record, in record order, after the checks of `evaluate`
    (``summarize(score_documents(r, p))`` is ``evaluate(r, p)``)."""
    records = list(records)
    predictions = list(predictions)
    by_id = _check_inputs(records, predictions)
    scores = []
    for index, record in enumerate(records):
        try:
            scores.append(score_document(record, by_id.get(record["id"])))
        except EvaluationError as exc:
            exc.source, exc.index = "records", index  # where, for callers that read a file
            raise
    return scores


def summarize(scores: list[DocumentScore]) -> EvaluationResult:
    """Aggregate per-document scores into the result of `evaluate`."""
    counts = {label: [0, 0, 0] for label in LABELS}  # tp, fp, fn
    for s in scores:
        for label, _ in s.gold & s.predicted:
            counts[label][0] += 1
        for label, _ in s.predicted - s.gold:
            counts[label][1] += 1
        for label, _ in s.gold - s.predicted:
            counts[label][2] += 1
    tp = sum(c[0] for c in counts.values())
    fp = sum(c[1] for c in counts.values())
    fn = sum(c[2] for c in counts.values())
    n_docs = len(scores)
    n_gold = sum(len(s.gold) for s in scores)
    n_pred = sum(len(s.predicted) for s in scores)
    return EvaluationResult(
        entity=Scores.from_counts(tp, fp, fn),
        per_type=MappingProxyType({label: Scores.from_counts(*counts[label])
                                   for label in LABELS}),
        documents=DocumentRates(leak_rate=_rate(sum(bool(s.leaked) for s in scores), n_docs)),
        entities=EntityRates(
            leak_rate=_rate(sum(len(s.leaked) for s in scores), n_gold),
            over_redaction_rate=_rate(fp, n_pred),
            hallucination_rate=_rate(sum(s.unmatched_rows for s in scores),
                                     sum(s.rows for s in scores)),
        ),
        parse=ParseRates(success_rate=_rate(sum(s.parse_success for s in scores), n_docs)),
        tokenization=TokenizationRates(
            deterministic_rate=_rate(sum(s.deterministic for s in scores), n_docs),
            round_trip_rate=_rate(sum(s.round_trip for s in scores), n_docs),
        ),
    )


def oracle_predictions(records: Iterable[Mapping]) -> list[dict]:
    """Every record's `target_tsv` fed back as its prediction (a sanity check of the
    machinery, never a model result)."""
    return [make_prediction(r["id"], r["target_tsv"], r["source_text"]) for r in records]


def format_report(result: EvaluationResult, title: str = "evaluation") -> str:
    """A plain-text table of an `evaluate` result (overall, per type, leaks, parse,
    tokenization): what `piilab evaluate` prints. Numbers only, never text."""

    def row(name: str, t: Scores) -> str:
        return (f"{name:<10}{t.precision:>10.3f}{t.recall:>9.3f}{t.f1:>8.3f}"
                f"{t.tp:>7}{t.fp:>7}{t.fn:>7}")

    lines = [
        f"== {title} ==",
        f"{'':<10}{'precision':>10}{'recall':>9}{'f1':>8}{'tp':>7}{'fp':>7}{'fn':>7}",
        row("overall", result.entity),
        *(row(label, result.per_type[label]) for label in LABELS),
    ]
    ents, docs = result.entities, result.documents
    lines += [
        "",
        f"leak rate (documents)      {docs.leak_rate:.3f}",
        f"leak rate (entities)       {ents.leak_rate:.3f}",
        f"over-redaction rate        {ents.over_redaction_rate:.3f}",
        f"hallucination rate         {ents.hallucination_rate:.3f}",
        f"parse success rate         {result.parse.success_rate:.3f}",
        f"deterministic rate         {result.tokenization.deterministic_rate:.3f}",
        f"round-trip rate            {result.tokenization.round_trip_rate:.3f}",
    ]
    return "\n".join(lines)


# --- how sure a score is: the bootstrap over documents --------------------------------


@dataclass(frozen=True)
class DocumentCounts:
    """What one document adds to entity F1 and the leak rates: numbers only, so that a
    list of them can be stored (`to_dict`) and resampled without the text.

    ``tp``, ``fp``, ``fn``: its pairs; ``gold``: its gold pairs; ``leaked``: its gold
    pairs with an uncovered occurrence (the document leaks when ``leaked > 0``).
    """

    tp: int
    fp: int
    fn: int
    gold: int
    leaked: int

    @classmethod
    def from_score(cls, score: DocumentScore) -> DocumentCounts:
        """The counts of a `score_document` result."""
        return cls(tp=len(score.gold & score.predicted), fp=len(score.predicted - score.gold),
                   fn=len(score.gold - score.predicted), gold=len(score.gold),
                   leaked=len(score.leaked))

    def to_dict(self) -> dict[str, int]:
        """``{"tp", "fp", "fn", "gold", "leaked"}``."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping) -> DocumentCounts:
        """The inverse of `to_dict` (an `EvaluationError` names a missing or wrong field)."""
        return _dataclass_from(cls, data, "counts")


def document_counts(records: Iterable[Mapping],
                    predictions: Iterable[Mapping]) -> tuple[DocumentCounts, ...]:
    """Per-document counts of `predictions` on `records`, in record order (the input of
    `bootstrap_counts` and `paired_bootstrap_counts`)."""
    return tuple(DocumentCounts.from_score(s) for s in score_documents(records, predictions))


@dataclass(frozen=True)
class Interval:
    """A point estimate with its bootstrap percentile interval ``[low, high]`` at `level`.

    >>> Interval(0.5, 0.4, 0.6).format()
    '0.500 [0.400, 0.600]'
    """

    estimate: float
    low: float
    high: float
    level: float = 0.95

    def format(self, digits: int = 3) -> str:
        """``estimate [low, high]``: numbers only, the same in every language."""
        return f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def excludes_zero(self) -> bool:
        """True when zero lies outside ``[low, high]``."""
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class Difference(Interval):
    """The difference A - B of one metric between two systems, on the same documents.

    `higher_is_better` says which sign favours A (True for F1, False for a leak rate).
    `verdict` is ``"better"`` (A is better) or ``"worse"`` only when the interval
    excludes zero, and ``"inconclusive"`` otherwise.

    >>> Difference(0.03, -0.01, 0.07, higher_is_better=True).verdict
    'inconclusive'
    >>> Difference(-0.05, -0.09, -0.01, higher_is_better=False).verdict
    'better'
    """

    higher_is_better: bool = True

    @property
    def verdict(self) -> str:
        if not self.excludes_zero():
            return "inconclusive"
        return "better" if (self.low > 0) == self.higher_is_better else "worse"

    def format(self, digits: int = 3) -> str:
        """``+0.030 [-0.010, +0.070]``: a signed difference with its interval."""
        return (f"{self.estimate:+.{digits}f} [{self.low:+.{digits}f}, "
                f"{self.high:+.{digits}f}]")


#: The metrics of `BootstrapIntervals`, with the label `format` prints.
BOOTSTRAP_METRICS: tuple[tuple[str, str], ...] = (
    ("precision", "entity precision"),
    ("recall", "entity recall"),
    ("f1", "entity F1"),
    ("documents_leak_rate", "leak rate (documents)"),
    ("entities_leak_rate", "leak rate (entities)"),
)


@dataclass(frozen=True)
class BootstrapIntervals:
    """Entity precision, recall and F1 and both leak rates of one system, each an
    `Interval`, from `resamples` bootstrap resamples of its `documents` documents drawn
    with `seed`."""

    precision: Interval
    recall: Interval
    f1: Interval
    documents_leak_rate: Interval
    entities_leak_rate: Interval
    documents: int
    resamples: int
    seed: int

    def format(self, digits: int = 3) -> str:
        """One line per metric: label, estimate and interval."""
        pct = f"{self.f1.level:.0%}"
        return "\n".join(f"{label:<22}{getattr(self, key).format(digits)}  ({pct} interval, "
                         f"{self.resamples} resamples of {self.documents} documents)"
                         for key, label in BOOTSTRAP_METRICS)

    def to_dict(self) -> dict:
        """Plain JSON data: each metric's estimate, low, high and level, and the settings."""
        return {**{key: asdict(getattr(self, key)) for key, _ in BOOTSTRAP_METRICS},
                "documents": self.documents, "resamples": self.resamples, "seed": self.seed}


#: The metrics of `PairedComparison`, with the label `format` prints.
PAIRED_METRICS: tuple[tuple[str, str], ...] = (
    ("f1", "entity F1"),
    ("documents_leak_rate", "leak rate (documents)"),
)


@dataclass(frozen=True)
class PairedComparison:
    """System A against system B on the same documents: the differences A - B of entity F1
    and of the document leak rate, each a `Difference` with its verdict for A."""

    f1: Difference
    documents_leak_rate: Difference
    documents: int
    resamples: int
    seed: int

    def format(self, digits: int = 3, names: tuple[str, str] = ("A", "B")) -> str:
        """One line per metric: ``entity F1 A - B  +0.030 [-0.010, +0.070]  inconclusive``."""
        a, b = names
        return "\n".join(
            f"{label:<22}{a} - {b}  {getattr(self, key).format(digits)}  "
            f"{getattr(self, key).verdict}" for key, label in PAIRED_METRICS)

    def to_dict(self) -> dict:
        """Plain JSON data: each difference with its interval and verdict, and the settings."""
        return {**{key: {**asdict(getattr(self, key)), "verdict": getattr(self, key).verdict}
                   for key, _ in PAIRED_METRICS},
                "documents": self.documents, "resamples": self.resamples, "seed": self.seed}


def _percentile(ordered: list[float], q: float) -> float:
    """The `q` quantile of sorted values, interpolated linearly (numpy's default)."""
    position = q * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _check_settings(documents: int, n: int, level: float) -> None:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError("n must be an int")
    if n < 1:
        raise EvaluationError("bootstrap: n must be at least 1", reason="n must be at least 1")
    if not 0 < level < 1:
        raise EvaluationError("bootstrap: level must lie between 0 and 1",
                              reason="level must lie between 0 and 1")
    if documents == 0:
        raise EvaluationError("bootstrap: no documents to resample",
                              reason="no documents to resample")


class _Columns:
    """Per-document counts as columns, summed over a resample in C (`itemgetter`)."""

    def __init__(self, counts: Sequence[DocumentCounts]) -> None:
        self.tp = [c.tp for c in counts]
        self.fp = [c.fp for c in counts]
        self.fn = [c.fn for c in counts]
        self.gold = [c.gold for c in counts]
        self.leaked = [c.leaked for c in counts]
        self.leaking = [int(c.leaked > 0) for c in counts]
        self.documents = len(counts)

    def metrics(self, pick: itemgetter | None) -> tuple[float, ...]:
        """Precision, recall, F1, document and entity leak rate over the picked documents
        (all of them when `pick` is None)."""
        def total(column: list[int]) -> int:
            return sum(pick(column)) if pick is not None else sum(column)

        scores = Scores.from_counts(total(self.tp), total(self.fp), total(self.fn))
        return (scores.precision, scores.recall, scores.f1,
                _rate(total(self.leaking), self.documents),
                _rate(total(self.leaked), total(self.gold)))


def _resamples(documents: int, n: int, seed: int):
    """`n` seeded resamples of ``range(documents)`` with replacement, as itemgetters that
    always return a tuple."""
    rng = random.Random(seed)
    population = range(documents)
    for _ in range(n):
        picks = rng.choices(population, k=documents)
        yield itemgetter(*picks) if documents > 1 else (lambda column, i=picks[0]: (column[i],))


def _interval(estimate: float, values: list[float], level: float) -> tuple[float, float, float]:
    ordered = sorted(values)
    tail = (1 - level) / 2
    return estimate, _percentile(ordered, tail), _percentile(ordered, 1 - tail)


def bootstrap_counts(counts: Sequence[DocumentCounts], *, n: int = 1000, seed: int = 0,
                     level: float = 0.95) -> BootstrapIntervals:
    """Percentile intervals of entity precision, recall and F1 and both leak rates from
    per-document counts.

    Each of the `n` resamples draws ``len(counts)`` documents with replacement
    (`random.Random(seed)`) and recomputes the three metrics from the summed counts; the
    interval is the central `level` share of the resampled values (interpolated between
    neighbours, as numpy's default percentile), the estimate the metric of the documents
    as given.

    >>> docs = [DocumentCounts(tp=1, fp=0, fn=0, gold=1, leaked=0),
    ...         DocumentCounts(tp=0, fp=1, fn=1, gold=1, leaked=1)]
    >>> ci = bootstrap_counts(docs, n=200, seed=0)
    >>> ci.f1.estimate, ci.documents_leak_rate.estimate
    (0.5, 0.5)
    >>> 0.0 <= ci.f1.low <= ci.f1.estimate <= ci.f1.high <= 1.0
    True
    """
    counts = list(counts)
    _check_settings(len(counts), n, level)
    columns = _Columns(counts)
    samples = [columns.metrics(pick) for pick in _resamples(len(counts), n, seed)]
    estimates = columns.metrics(None)
    intervals = {key: Interval(*_interval(estimates[i], [s[i] for s in samples], level), level)
                 for i, (key, _) in enumerate(BOOTSTRAP_METRICS)}
    return BootstrapIntervals(**intervals, documents=len(counts), resamples=n, seed=seed)


def bootstrap_intervals(records: Iterable[Mapping], predictions: Iterable[Mapping], *,
                        n: int = 1000, seed: int = 0,
                        level: float = 0.95) -> BootstrapIntervals:
    """`evaluate`'s entity precision, recall, F1 and leak rates with bootstrap intervals
    over documents.

    The estimates equal those of ``evaluate(records, predictions)``; see
    `bootstrap_counts` for the resampling.

    >>> rec = {"id": "d1", "source_text": "Call Alpha Beta at 555-0100", "entities": [
    ...     {"type": "PERSON", "value": "Alpha Beta"}, {"type": "PHONE", "value": "555-0100"}]}
    >>> pred = {"id": "d1", "output": "PHONE\\t555-0100", "parse_success": True}
    >>> ci = bootstrap_intervals([rec], [pred], n=100, seed=0)
    >>> ci.f1.format(), ci.documents_leak_rate.format()
    ('0.667 [0.667, 0.667]', '1.000 [1.000, 1.000]')
    """
    return bootstrap_counts(document_counts(records, predictions), n=n, seed=seed, level=level)


def paired_bootstrap_counts(counts_a: Sequence[DocumentCounts],
                            counts_b: Sequence[DocumentCounts], *, n: int = 1000,
                            seed: int = 0, level: float = 0.95) -> PairedComparison:
    """Paired bootstrap of two systems' per-document counts on the same documents (in the
    same order): each resample draws one set of documents and scores both systems on it,
    so that what the documents share cancels out of the difference A - B.

    >>> a = [DocumentCounts(1, 0, 0, 1, 0)] * 40 + [DocumentCounts(0, 0, 1, 1, 1)] * 10
    >>> b = [DocumentCounts(0, 0, 1, 1, 1)] * 50
    >>> cmp = paired_bootstrap_counts(a, b, n=200, seed=0)
    >>> cmp.f1.verdict, cmp.documents_leak_rate.verdict
    ('better', 'better')
    """
    counts_a, counts_b = list(counts_a), list(counts_b)
    if len(counts_a) != len(counts_b):
        reason = "the two systems must be scored on the same documents"
        raise EvaluationError(f"paired bootstrap: {reason}", reason=reason)
    if [c.gold for c in counts_a] != [c.gold for c in counts_b]:
        reason = "the two systems' documents have different gold pairs"
        raise EvaluationError(f"paired bootstrap: {reason}", reason=reason)
    _check_settings(len(counts_a), n, level)
    col_a, col_b = _Columns(counts_a), _Columns(counts_b)
    f1, docs = 2, 3  # positions in `_Columns.metrics`

    def differences(pick: itemgetter | None) -> tuple[float, float]:
        a, b = col_a.metrics(pick), col_b.metrics(pick)
        return a[f1] - b[f1], a[docs] - b[docs]

    samples = [differences(pick) for pick in _resamples(len(counts_a), n, seed)]
    estimate = differences(None)
    f1, docs = (Difference(*_interval(estimate[i], [d[i] for d in samples], level), level,
                           higher_is_better=better)
                for i, better in ((0, True), (1, False)))
    return PairedComparison(f1=f1, documents_leak_rate=docs, documents=len(counts_a),
                            resamples=n, seed=seed)


def paired_bootstrap(records: Iterable[Mapping], predictions_a: Iterable[Mapping],
                     predictions_b: Iterable[Mapping], *, n: int = 1000, seed: int = 0,
                     level: float = 0.95) -> PairedComparison:
    """Compare system A with system B on the same `records`: the differences A - B of
    entity F1 and of the document leak rate, with paired bootstrap intervals and a
    verdict for A (``"better"``, ``"worse"`` or ``"inconclusive"``); see
    `paired_bootstrap_counts`.

    >>> rec = {"id": "d1", "source_text": "Call Alpha Beta at 555-0100", "entities": [
    ...     {"type": "PERSON", "value": "Alpha Beta"}, {"type": "PHONE", "value": "555-0100"}]}
    >>> a = [{"id": "d1", "output": "PHONE\\t555-0100", "parse_success": True}]
    >>> b = [{"id": "d1", "output": "", "parse_success": False}]
    >>> paired_bootstrap([rec], a, b, n=100).f1.format()
    '+0.667 [+0.667, +0.667]'
    """
    records = list(records)
    return paired_bootstrap_counts(document_counts(records, predictions_a),
                                   document_counts(records, predictions_b),
                                   n=n, seed=seed, level=level)
