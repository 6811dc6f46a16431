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

Errors are `EvaluationError` (a `ValueError`); messages name the record id and
the reason, never an entity value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from itertools import accumulate
from types import MappingProxyType

from piilab.errors import PiilabError
from piilab.labels import LABELS, PairError, gold_pairs, nfc
from piilab.masking import MaskResult, mask_text, reassemble_text
from piilab.matching import find_occurrences
from piilab.parsing import ParsedOutput, parse_model_output
from piilab.predictions import PredictionError, make_prediction, validate_predictions
from piilab.records import record_problems

__all__ = [
    "DocumentRates",
    "DocumentScore",
    "EntityRates",
    "EvaluationError",
    "EvaluationResult",
    "ParseRates",
    "Scores",
    "TokenizationRates",
    "evaluate",
    "format_report",
    "oracle_predictions",
    "score_document",
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
    return summarize(scores)


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
