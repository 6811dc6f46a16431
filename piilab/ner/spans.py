"""Gold spans of a course record: every occurrence of every gold value (chapter 08, step 1).

Part of `piilab.ner` (see its docstring for the whole pipeline). The records
list values, not offsets. A value's gold spans are *every* occurrence of it or
of a permitted variant in the NFC source (`piilab.matching.find_occurrences`),
the same occurrences the leak metric checks. Identical spans are merged; when
one span is an occurrence of values of two labels, the label first in `LABELS`
wins (the masker's rule for one spelling with several types). Occurrences that
overlap without being identical cannot be expressed in BIOES (one label per
token): `NERDataError`. The generator guarantees there are none.

It also holds the two error types of the package. What it does not do: look at
tokens (that is `piilab.bioes` and `piilab.ner.export`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from piilab.bioes import EntitySpan
from piilab.errors import PiilabError
from piilab.labels import LABEL_PRIORITY, PairError, gold_pairs, nfc
from piilab.matching import find_occurrences
from piilab.records import check_record

__all__ = ["MisalignedRecordError", "NERDataError", "gold_spans"]


class NERDataError(PiilabError):
    """A record cannot be exported or trained as token classification.

    Messages name the record id, offsets and the reason, never a value.
    """


class MisalignedRecordError(NERDataError):
    """A gold span of the record starts or ends inside a token of this tokenizer."""


_NEEDED: Mapping[str, type] = {"source_text": str}
_ENTITIES: Mapping[str, type] = {"entities": list}


def _record_id(record: Mapping) -> str:
    return str(record.get("id", "?"))


def _gold_pairs(record: Mapping) -> list[tuple[str, str]]:
    """The record's normalized ``(TYPE, VALUE)`` pairs (`piilab.labels.gold_pairs`), in entity
    order, deduplicated."""
    try:
        return list(dict.fromkeys(pair for _, pair in gold_pairs(record)))
    except PairError as err:
        # The reason never echoes the type: a swapped type/value pair would print the value.
        raise NERDataError(f"record {_record_id(record)}: {err.reason}") from None


def gold_spans(record: Mapping) -> list[EntitySpan]:
    """Every gold occurrence of the record, as sorted ``(start, end, label)`` spans.

    Offsets index the NFC ``source_text``. Rules (module docstring, step 1):
    every occurrence of each value or permitted variant; identical spans merge;
    one span with two labels keeps the label earlier in `LABELS`; a gold value
    without an occurrence, or two occurrences that overlap without being
    identical, raise `NERDataError` naming the record and the offsets.

    >>> record = {"id": "d1", "source_text": "김가상님, 김 가 상님 (010-1234-5678)",
    ...           "entities": [{"type": "PERSON", "value": "김가상"},
    ...                        {"type": "PHONE", "value": "010-1234-5678"}]}
    >>> gold_spans(record)  # doctest: +NORMALIZE_WHITESPACE
    [EntitySpan(start=0, end=3, label='PERSON'), EntitySpan(start=6, end=11, label='PERSON'),
     EntitySpan(start=14, end=27, label='PHONE')]
    """
    rid = _record_id(record)
    # The fields read here; entities are checked as `_gold_pairs` normalizes them.
    check_record(record, where=f"record {rid}", required=_NEEDED, optional=_ENTITIES,
                 entities=False, error=NERDataError)
    source = nfc(record["source_text"])
    label_at: dict[tuple[int, int], str] = {}
    for label, value in _gold_pairs(record):
        occurrences = find_occurrences(source, label, value)
        if not occurrences:
            raise NERDataError(f"record {rid}: a gold {label} value does not occur in source_text")
        for occurrence in occurrences:
            key = (occurrence.start, occurrence.end)
            known = label_at.get(key)
            if known is None or LABEL_PRIORITY[label] < LABEL_PRIORITY[known]:
                label_at[key] = label
    spans = sorted(EntitySpan(start, end, label) for (start, end), label in label_at.items())
    for first, second in itertools.pairwise(spans):
        if second.start < first.end:
            raise NERDataError(
                f"record {rid}: gold occurrences ({first.start}, {first.end}) and "
                f"({second.start}, {second.end}) overlap; BIOES gives each token one label")
    return spans

