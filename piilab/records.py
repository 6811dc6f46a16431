"""The record, the course's central data type: its fields, its two derived fields, its checks.

A record is one JSON object per line of a split file (docs/contract.md, section 2)::

    {"id": "train-ko-00001", "split": "train", "language": "ko",
     "source_text": "...", "entities": [{"type": "PERSON", "value": "김가상"}],
     "target_tsv": "PERSON\\t김가상", "template_id": "ko-callnote-1", ...}

`RECORD_FIELDS` are the fields every corpus record has; more metadata fields
(``setting``, ``generator_version``, ``genre``, ``augmented_from``, ...) are
allowed. Two fields are derived from the others, by one rule each:

- ``entities``: unique ``(type, value)`` pairs in order of first literal
  occurrence in the source, ties in `LABELS` order (`entities_in_order`);
- ``target_tsv``: the entities as ``TYPE<TAB>VALUE`` lines, ``""`` for a
  negative document (`target_tsv`).

`new_record` builds a record by those rules (the course generator, the wide
generator and the tests use it). `record_problems` is the one validation: every
reader of records calls it, asking for the fields it needs (`check_record` is
the same check raising the first problem). Its messages name the record (by
the ``where`` the caller gives, e.g. ``data/test.jsonl:3``) and the field or
entity index, never a value. With ``gold=True`` it also checks the annotation
against the source (`gold_problems`): what every generated, augmented or
hand-written record must satisfy.

Standard library only (and the course's own matching rules).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict

from piilab.errors import PiilabError
from piilab.labels import LABEL_PRIORITY, LABELS, nfc
from piilab.matching import find_occurrences

__all__ = [
    "LANGUAGES",
    "RECORD_FIELDS",
    "Entity",
    "Record",
    "RecordError",
    "check_record",
    "entities_in_order",
    "gold_problems",
    "new_record",
    "overlapping_occurrences",
    "record_name",
    "record_problems",
    "target_tsv",
]

#: The languages of the course.
LANGUAGES: tuple[str, ...] = ("ko", "en")

#: The fields every corpus record has, with their JSON types.
RECORD_FIELDS: Mapping[str, type] = {
    "id": str,
    "split": str,
    "language": str,
    "source_text": str,
    "entities": list,
    "target_tsv": str,
    "template_id": str,
}


class Entity(TypedDict):
    """One gold entity: a label of `LABELS` and the value exactly as the source writes it."""

    type: str
    value: str


class Record(TypedDict, total=False):
    """A record (`RECORD_FIELDS`, plus any metadata fields)."""

    id: str
    split: str
    language: str
    source_text: str
    entities: list[Entity]
    target_tsv: str
    template_id: str


class RecordError(PiilabError):
    """A record is malformed: the message names the record and the field, never a value."""


# --------------------------------------------------------------------------------
# Building a record: the two derived fields.
# --------------------------------------------------------------------------------


def entities_in_order(source: str, pairs: Iterable[tuple[str, str]]) -> list[Entity]:
    """Unique ``(type, value)`` pairs as entities, in order of first literal occurrence.

    Ties (one spelling with two types) follow the `LABELS` order.

    >>> entities_in_order("전화 010-0123-4567, 김가상", [("PERSON", "김가상"),
    ...                                               ("PHONE", "010-0123-4567")])
    [{'type': 'PHONE', 'value': '010-0123-4567'}, {'type': 'PERSON', 'value': '김가상'}]
    """
    unique = list(dict.fromkeys(pairs))
    unique.sort(key=lambda p: (source.find(p[1]), LABEL_PRIORITY[p[0]]))
    return [{"type": label, "value": value} for label, value in unique]


def target_tsv(entities: Sequence[Mapping[str, str]]) -> str:
    """The training target: ``TYPE<TAB>VALUE`` lines, ``""`` for a negative document.

    >>> target_tsv([{"type": "PERSON", "value": "김가상"}, {"type": "REL", "value": "어머니"}])
    'PERSON\\t김가상\\nREL\\t어머니'
    """
    return "\n".join(f"{e['type']}\t{e['value']}" for e in entities)


def new_record(*, id: str, split: str, language: str, source_text: str,
               pairs: Iterable[tuple[str, str]], template_id: str, **metadata: Any) -> Record:
    """A record with its derived fields: entities in order, and their target.

    `metadata` fields follow the others, in the order given.

    >>> new_record(id="r1", split="train", language="ko", source_text="김가상 님",
    ...            pairs=[("PERSON", "김가상")], template_id="fam")["target_tsv"]
    'PERSON\\t김가상'
    """
    entities = entities_in_order(source_text, pairs)
    return {"id": id, "split": split, "language": language, "source_text": source_text,
            "entities": entities, "target_tsv": target_tsv(entities),
            "template_id": template_id, **metadata}


def overlapping_occurrences(source: str, entities: Iterable[Mapping[str, str]]) -> list[tuple]:
    """Pairs of gold occurrences (literal or variant) that overlap without being equal.

    Two occurrences are fine when they are disjoint or exactly the same span (two
    spellings found at one place). Anything else would make a perfect oracle
    impossible, so the generators redraw such documents and `gold_problems`
    rejects them.
    """
    spans = sorted({
        (o.start, o.end)
        for e in entities
        for o in find_occurrences(source, e["type"], e["value"])
    })
    bad = []
    for (s1, e1), (s2, e2) in itertools.pairwise(spans):
        if s2 < e1:  # sorted and distinct, so this is a partial overlap or nesting
            bad.append(((s1, e1), (s2, e2)))
    return bad


# --------------------------------------------------------------------------------
# Checking a record: one validation for every reader.
# --------------------------------------------------------------------------------


def record_name(record: object) -> str:
    """How a message names a record the caller cannot place in a file: by its id.

    >>> record_name({"id": "r1"}), record_name({})
    ('record r1', 'a record without a string id')
    """
    rid = record.get("id") if isinstance(record, Mapping) else None
    return f"record {rid}" if isinstance(rid, str) else "a record without a string id"


def record_problems(record: object, *, where: str | None = None,
                    required: Mapping[str, type] = RECORD_FIELDS,
                    optional: Mapping[str, type] | None = None,
                    entities: bool = True, gold: bool = False) -> list[str]:
    """Everything wrong with `record` (an empty list: it is valid), in a fixed order.

    - `required`: fields that must be present with these types (default: all of
      `RECORD_FIELDS`); `optional`: fields checked only when present. A
      ``language`` field must be one of `LANGUAGES`.
    - `entities`: check each entity of a list ``entities`` field: an object with
      exactly string ``type`` and ``value``, a type in `LABELS`, a nonempty value.
    - `gold`: check the annotation against the source (`gold_problems`).

    Each message starts with `where` (``file:line``, or ``records[3]``; by
    default `record_name`), then names the field or entity, never a value.

    >>> record_problems({"id": "r1", "source_text": 5}, required={"source_text": str})
    ["record r1: field 'source_text' must be str"]
    """
    prefix = record_name(record) if where is None else where
    if not isinstance(record, Mapping):
        return [_at(prefix, "a record must be a JSON object")]
    problems: list[str] = []
    fields = [(name, kind, True) for name, kind in required.items()]
    fields += [(name, kind, False) for name, kind in (optional or {}).items()]
    for name, kind, needed in fields:
        if name not in record:
            if needed:
                problems.append(_at(prefix, f"missing field '{name}'"))
        elif not isinstance(record[name], kind) or (kind is int and isinstance(record[name], bool)):
            problems.append(_at(prefix, f"field '{name}' must be {kind.__name__}"))
    if problems:
        return problems
    if "language" in record and record["language"] not in LANGUAGES:
        problems.append(_at(prefix, "field 'language' must be 'ko' or 'en'"))
    if entities and isinstance(record.get("entities"), list):
        for i, ent in enumerate(record["entities"]):
            if not (isinstance(ent, Mapping) and set(ent) == {"type", "value"}
                    and isinstance(ent["type"], str) and isinstance(ent["value"], str)):
                problems.append(_at(prefix, f"entities[{i}] must be an object with string "
                                            "'type' and 'value'"))
            elif ent["type"] not in LABELS:
                # The type is not echoed: a swapped type/value pair would print the value.
                problems.append(_at(prefix, f"entities[{i}] has a type outside LABELS"))
            elif not ent["value"].strip():
                problems.append(_at(prefix, f"entities[{i}] has an empty value"))
    if gold and not problems:
        problems += _gold_problems(record, prefix)
    return problems


def _at(prefix: str, message: str) -> str:
    """`message` after the record's name (none when the caller names the record itself)."""
    return f"{prefix}: {message}" if prefix else message


def check_record(record: object, *, where: str | None = None,
                 required: Mapping[str, type] = RECORD_FIELDS,
                 optional: Mapping[str, type] | None = None, entities: bool = True,
                 gold: bool = False, error: type[Exception] = RecordError) -> None:
    """`record_problems`, raising the first problem as `error` (default `RecordError`)."""
    problems = record_problems(record, where=where, required=required, optional=optional,
                               entities=entities, gold=gold)
    if problems:
        raise error(problems[0])


#: The fields the gold checks read.
GOLD_FIELDS: Mapping[str, type] = {"source_text": str, "entities": list}


def gold_problems(record: object, where: str | None = None) -> list[str]:
    """Everything wrong with a record's gold annotation (empty list: valid).

    Checks: ``source_text`` is a string and ``entities`` a list; every entity
    has a label from `LABELS` and a nonempty, trimmed, NFC value; pairs are
    unique; each value occurs literally in the source (within numeric
    boundaries); entities are in order of first literal occurrence; no two
    gold occurrences (literal or variant) partly overlap; ``target_tsv`` is the
    entity list written as ``TYPE<TAB>VALUE`` lines. Messages name the record,
    the field and the label, never a value.

    >>> gold_problems({"id": "r1", "source_text": "김가상 님", "target_tsv": "PERSON\\t김가상",
    ...                "entities": [{"type": "PERSON", "value": "김가상"}]})
    []
    """
    return record_problems(record, where=where, required=GOLD_FIELDS, gold=True)


def _gold_problems(record: Mapping, prefix: str) -> list[str]:
    """The gold checks, on a record whose fields and entities have the right shape."""
    source, entities = record["source_text"], record["entities"]
    problems: list[str] = []
    if source != nfc(source):
        problems.append(_at(prefix, "field 'source_text' is not NFC-normalized"))
    pairs: list[tuple[str, str]] = []
    for i, ent in enumerate(entities):
        label, value = ent["type"], ent["value"]
        where = _at(prefix, f"entities[{i}] ({label})")
        if value != value.strip() or value != nfc(value):
            problems.append(f"{where} value is untrimmed or not NFC")
        elif (label, value) in pairs:
            problems.append(f"{where} repeats an earlier pair")
        elif not any(o.literal for o in find_occurrences(source, label, value)):
            problems.append(f"{where} does not occur literally in source_text")
        else:
            pairs.append((label, value))
    if problems:
        return problems
    if entities_in_order(source, pairs) != list(entities):
        problems.append(_at(prefix, "field 'entities' is not in order of first occurrence"))
    if overlapping_occurrences(source, entities):
        problems.append(_at(prefix, "two gold occurrences partly overlap"))
    if record.get("target_tsv") != target_tsv(entities):
        problems.append(_at(prefix, "field 'target_tsv' does not match 'entities'"))
    return problems
