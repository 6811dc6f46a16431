"""Training-only data augmentation with a split-partitioned value pool (chapter 05).

After the family split (`piilab.splits.family_split`), the training records can
be multiplied by three operations, applied in this order to a copy of a record:

1. **value substitution** (``substitute``): every gold value of a label in
   `SUBSTITUTABLE` is replaced, at each of its occurrences (literal or
   variant, spelled the same way), by a value drawn from the *training* part
   of a value pool;
2. **spaced names** (``spaced_name``): one literal mention of a Korean name is
   written with spaces between its syllables (``김가상`` -> ``김 가 상``), the
   variant a masker must still catch; if no unspaced mention is left, the
   spaced spelling becomes the gold value;
3. **mention perturbation** (``separator``): the separators of one numeric
   value change everywhere it is written literally (``010-0123-4567`` ->
   ``010 0123 4567``), and the new spelling becomes the gold value.

Substitution applies to every copy; the other two to about half of the copies
each (`SPACED_NAME_RATE`, `SEPARATOR_RATE`), where the record allows them.

The value pool (`build_value_pools`) is drawn once, with the generator's own
value functions (so every number stays invalid by construction and every
e-mail on a reserved domain), and partitioned by a SHA-256 of each value
(`value_split`): a value belongs to exactly one split's pool, so values put
into training records can never be the ones held back for evaluation sets
built the same way, and values found in the given held-out records can be
excluded outright.

Every augmented record is checked like a corpus record (`gold_problems`):
each gold value occurs literally in its source, no two gold occurrences
partly overlap, the entity list is unique pairs in order of first literal
occurrence and ``target_tsv`` matches it. When a spelling changes, the gold
value *is* the new literal spelling. A record gets a new id
(``<id>-aug<k>``), keeps its family (``template_id``) and names its origin in
``augmented_from``; ``augmentation`` lists the operations applied (labels
only, never values). Everything is deterministic given the seed.

What this module deliberately does not do: touch validation or test records
(augment only the training split, after the split), make text more realistic
(an augmented record keeps its template; Korean particles after a substituted
name are not re-chosen), or keep cross-field consistency beyond one rule: an
RRN and a date of birth in the same document are left alone, because the RRN
starts with the birth date. (An English e-mail address built from the person's
name keeps the old name after substitution.)
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from piilab import templates as T
from piilab.errors import PiilabError
from piilab.generator import VALUE_GENERATORS
from piilab.labels import nfc
from piilab.matching import (
    PERSON_JOINERS,
    PERSON_VARIANT_SIZES,
    digit_groups,
    digit_sequence,
    find_occurrences,
    has_match,
    is_numeric_value,
    is_numeric_variant,
)
from piilab.pools import partition
from piilab.records import entities_in_order, gold_problems, record_problems, target_tsv
from piilab.safe_values import seeded_random
from piilab.splits import DEFAULT_TARGETS

__all__ = [
    "OPERATIONS",
    "SUBSTITUTABLE",
    "AugmentError",
    "ValuePool",
    "augment_record",
    "augment_records",
    "build_value_pools",
    "value_split",
]

#: The operations, in the order they are applied to a copy.
OPERATIONS: tuple[str, ...] = ("substitute", "spaced_name", "separator")

#: Labels whose values are substituted. REL is a small closed class of words
#: (substituting it changes the meaning of the sentence, not the person).
SUBSTITUTABLE: tuple[str, ...] = ("EMAIL", "RRN", "CARD", "ACCOUNT", "PHONE", "DOB", "ADDRESS",
                                  "PERSON")

#: How often a copy also gets a spaced name / a separator change (when it can).
SPACED_NAME_RATE = 0.5
SEPARATOR_RATE = 0.5

#: Values drawn per label and language for the pool (before partitioning).
POOL_DRAWS = 600

#: Separators a numeric mention may be rewritten with.
NEW_SEPARATORS: tuple[str, ...] = (" ", "-", ".", "")

#: Tries to find a substitute that keeps the record valid, per value.
MAX_TRIES = 20

_HANGUL = re.compile(r"[가-힣]+")


class AugmentError(PiilabError):
    """Augmentation cannot proceed (names the record id and reason, never a value)."""


def _rng(*parts: object) -> random.Random:
    return seeded_random("piilab-augment", *parts)


# Gold checks: what every record (generated, augmented or hand-written) must satisfy
# lives in `piilab.records` (`gold_problems`, `target_tsv`, imported from there).


# --------------------------------------------------------------------------------
# The value pool, partitioned by a stable hash of each value.
# --------------------------------------------------------------------------------


def pool_key(value: str) -> str:
    """What `value_split` hashes: the value as the matching rules see it.

    Spellings that match each other (docs/contract.md, section 4) share a key, so one number
    written two ways, or a name with and without spaces, cannot land in two
    pools: digits only for a numeric value, whitespace removed otherwise.

    >>> pool_key("010-0123-4567") == pool_key("010 0123 4567")
    True
    """
    value = nfc(value).strip()
    if is_numeric_value(value):
        return "#" + digit_sequence(value)
    return "".join(ch for ch in value if not ch.isspace())


def value_split(value: str, fractions: Mapping[str, float] = DEFAULT_TARGETS) -> str:
    """The split whose pool `value` belongs to, from a SHA-256 of its `pool_key`.

    The first 8 bytes of the digest, read as a number in ``[0, 1)``, fall into
    one of the consecutive intervals the `fractions` (normalized, in order)
    cut; the same value always lands in the same split, on every machine.

    >>> value_split("김가상") == value_split("김가상")
    True
    """
    total = float(sum(fractions.values()))
    if total <= 0 or any(w < 0 for w in fractions.values()):
        raise AugmentError("pool fractions must be non-negative and not all zero")
    return partition(pool_key(value), fractions, digest="sha256", salt="piilab-pool:")


@dataclass(frozen=True)
class ValuePool:
    """The substitute values of one split: ``(label, language) -> values`` (read-only)."""

    split: str
    values: Mapping[tuple[str, str], tuple[str, ...]]

    def candidates(self, label: str, language: str, shape: str | None = None) -> tuple[str, ...]:
        """The values of one label and language; with `shape`, only those of that shape.

        A shape is a numeric value's layout with every digit written as 9
        (``"999-9999-9999"``); non-numeric values have the shape ``""``.
        """
        if shape is None:
            return self.values.get((label, language), ())
        return self._by_shape().get((label, language, shape), ())

    def _by_shape(self) -> dict[tuple[str, str, str], tuple[str, ...]]:
        # Built on first use and cached on the (frozen) instance: a pure function of `values`.
        index = self.__dict__.get("_shape_index")
        if index is None:
            grouped: dict[tuple[str, str, str], list[str]] = {}
            for (label, language), values in self.values.items():
                for value in values:
                    grouped.setdefault((label, language, _shape(value)), []).append(value)
            index = {key: tuple(values) for key, values in grouped.items()}
            object.__setattr__(self, "_shape_index", index)
        return index

    def all_values(self) -> frozenset[str]:
        return frozenset(v for values in self.values.values() for v in values)


def _pool_universe(label: str, language: str) -> list[str]:
    """Every candidate value of one label and language, in a fixed order."""
    if label == "PERSON" and language == "ko":
        return [s + g for s in T.KO_SURNAMES for g in T.KO_GIVEN]
    if label == "PERSON":
        return [f"{f} {last}" for f in T.EN_FIRST for last in T.EN_LAST]
    drawn = []
    for i in range(POOL_DRAWS):
        rng = _rng("pool", label, language, i)
        drawn.append(VALUE_GENERATORS[label](rng, language, {"template_id": ""}))
    return list(dict.fromkeys(drawn))


def build_value_pools(fractions: Mapping[str, float] = DEFAULT_TARGETS, *,
                      exclude: Iterable[str] = ()) -> dict[str, ValuePool]:
    """One `ValuePool` per split in `fractions`; the pools are disjoint.

    Candidates: all Korean and English names the generator's vocabularies
    can form, and `POOL_DRAWS` draws per language of every other label in
    `SUBSTITUTABLE` made by the generator's own value functions (with a fixed
    seed: the pool does not depend on the augmentation seed). Each value goes
    to ``value_split(value, fractions)``. Values in `exclude` (compared by
    `pool_key`, so every spelling of them; for instance the gold values of the
    validation and test records) are left out of every pool.
    """
    excluded = {pool_key(v) for v in exclude}
    pools: dict[str, dict[tuple[str, str], list[str]]] = {name: {} for name in fractions}
    for label in SUBSTITUTABLE:
        for language in ("ko", "en"):
            for value in _pool_universe(label, language):
                if pool_key(value) in excluded:
                    continue
                pools[value_split(value, fractions)].setdefault((label, language), []).append(value)
    return {name: ValuePool(name, {k: tuple(v) for k, v in by_key.items()})
            for name, by_key in pools.items()}


# --------------------------------------------------------------------------------
# The three operations, each on (source, pairs) -> (source, pairs) or None.
# --------------------------------------------------------------------------------

Pairs = list[tuple[str, str]]


def _shape(value: str) -> str:
    """A numeric value's layout with every digit as 9 (``010-0123`` -> ``999-9999``)."""
    return re.sub(r"[0-9]", "9", value) if is_numeric_value(value) else ""


def _compact(value: str) -> str:
    return "".join(value.split())


def _respell(label: str, old: str, new: str, text: str) -> str | None:
    """How `new` is written where `old` was written as `text` (None: it cannot be)."""
    if text == old:
        return new
    if label == "PERSON":
        for joiner in PERSON_JOINERS:
            if joiner.join(_compact(old)) == text:
                # The new name must have variants too, or this mention would not match it.
                fits = len(_compact(new)) in PERSON_VARIANT_SIZES
                return joiner.join(_compact(new)) if fits else None
    if is_numeric_value(old) and is_numeric_variant(text):
        digits = iter(digit_sequence(new))
        try:
            return re.sub(r"[0-9]", lambda _: next(digits), text)
        except StopIteration:
            return None
    return None


def _replace_occurrences(source: str, label: str, old: str, new: str) -> str | None:
    """`source` with every occurrence of `old` respelled as `new` (None: impossible)."""
    chosen: list[tuple[int, int]] = []
    for occ in sorted(find_occurrences(source, label, old), key=lambda o: (o.start, -o.end)):
        if not chosen or occ.start >= chosen[-1][1]:
            chosen.append((occ.start, occ.end))
    if not chosen:
        return None
    out = source
    for start, end in reversed(chosen):
        spelled = _respell(label, old, new, source[start:end])
        if spelled is None:
            return None
        out = out[:start] + spelled + out[end:]
    return out


def _valid(source: str, pairs: Pairs) -> bool:
    entities = entities_in_order(source, pairs)
    record = {"id": "", "source_text": source, "entities": entities,
              "target_tsv": target_tsv(entities)}
    return not gold_problems(record)


def _substitute(source: str, pairs: Pairs, language: str, pool: ValuePool,
                rng: random.Random) -> tuple[str, Pairs, list[str]]:
    labels = {label for label, _ in pairs}
    coupled = {"RRN", "DOB"} <= labels  # an RRN starts with the birth date: keep both
    todo = [i for i, (label, _) in enumerate(pairs)
            if label in SUBSTITUTABLE and not (coupled and label in {"RRN", "DOB"})]

    def replace(source: str, pairs: Pairs, index: int, check: bool) -> tuple[str, Pairs] | None:
        label, old = pairs[index]
        taken = {value for _, value in pairs}
        options = [v for v in pool.candidates(label, language, _shape(old)) if v not in taken]
        for new in rng.sample(options, min(MAX_TRIES, len(options))):
            if has_match(source, label, new):
                continue  # already written somewhere: it would merge with that text
            changed = _replace_occurrences(source, label, old, new)
            trial = [*pairs[:index], (label, new), *pairs[index + 1:]]
            if changed is not None and (not check or _valid(changed, trial)):
                return changed, trial
        return None

    # Fast path: substitute everything, then check the result once (it almost
    # always passes). Otherwise redo it value by value, checking each step.
    for check_each in (False, True):
        current, current_pairs, applied = source, list(pairs), []
        for index in todo:
            step = replace(current, current_pairs, index, check_each)
            if step is not None:
                current, current_pairs = step
                applied.append(f"substitute:{pairs[index][0]}")
        if check_each or _valid(current, current_pairs):
            return current, current_pairs, applied
    raise AssertionError("unreachable")  # pragma: no cover


def _spaced_name(source: str, pairs: Pairs, rng: random.Random) -> tuple[str, Pairs] | None:
    names = [(i, v) for i, (label, v) in enumerate(pairs)
             if label == "PERSON" and _HANGUL.fullmatch(v) and len(v) in PERSON_VARIANT_SIZES]
    if not names:
        return None
    index, name = rng.choice(names)
    literals = [o for o in find_occurrences(source, "PERSON", name) if o.literal]
    if not literals:
        return None
    occ = rng.choice(literals)
    spaced = " ".join(name)
    changed = source[:occ.start] + spaced + source[occ.end:]
    # The unspaced spelling may now be gone: then the spaced one is the gold value.
    still_literal = any(o.literal for o in find_occurrences(changed, "PERSON", name))
    trial = list(pairs)
    trial[index] = ("PERSON", name if still_literal else spaced)
    return (changed, trial) if _valid(changed, trial) else None


def _separator(source: str, pairs: Pairs, rng: random.Random) -> tuple[str, Pairs, str] | None:
    # Values like 010-0123-4567: digit groups joined by separators (a digit run).
    numeric = [(i, label, v) for i, (label, v) in enumerate(pairs)
               if is_numeric_variant(v) and len(digit_groups(v)) >= 2]
    if not numeric:
        return None
    index, label, old = rng.choice(numeric)
    groups = digit_groups(old)
    options = [sep.join(groups) for sep in NEW_SEPARATORS if sep.join(groups) != old]
    new = rng.choice(options)
    if any(v == new for _, v in pairs):
        return None
    # Only the literal mentions change spelling; variant mentions stay variants.
    spans = [(o.start, o.end) for o in find_occurrences(source, label, old) if o.literal]
    changed = source
    for start, end in reversed(spans):
        changed = changed[:start] + new + changed[end:]
    trial = list(pairs)
    trial[index] = (label, new)
    return (changed, trial, label) if _valid(changed, trial) else None


# --------------------------------------------------------------------------------
# Putting it together.
# --------------------------------------------------------------------------------


def augment_record(record: Mapping, rng: random.Random, pool: ValuePool, new_id: str,
                   operations: Sequence[str] = OPERATIONS) -> dict | None:
    """One augmented copy of `record`, or None when nothing could change.

    Negative documents (no entities) are never augmented: they have no value
    to vary. The copy keeps every field of `record` except ``id`` (`new_id`),
    ``source_text``, ``entities`` and ``target_tsv``, and adds
    ``augmented_from`` (the original id) and ``augmentation`` (the operations
    applied, e.g. ``["substitute:PERSON", "spaced_name"]``).
    """
    _check_operations(operations)
    _check_input(record)
    return _augment(record, rng, pool, new_id, operations)


def _check_operations(operations: Sequence[str]) -> None:
    unknown = set(operations) - set(OPERATIONS)
    if unknown:
        raise AugmentError(f"unknown augmentation operation(s): {', '.join(sorted(unknown))}")


def _check_input(record: Mapping) -> None:
    problems = record_problems(record, required=_AUGMENTED_FIELDS, gold=True)
    if problems:
        raise AugmentError(f"cannot augment a record with invalid gold: {problems[0]}"
                           + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))


#: What augmentation reads of a record (besides copying the rest).
_AUGMENTED_FIELDS: Mapping[str, type] = {"source_text": str, "entities": list, "language": str}


def _augment(record: Mapping, rng: random.Random, pool: ValuePool, new_id: str,
             operations: Sequence[str]) -> dict | None:
    rid = record["id"]
    source = record["source_text"]
    pairs: Pairs = [(e["type"], e["value"]) for e in record["entities"]]
    if not pairs:
        return None
    applied: list[str] = []
    if "substitute" in operations:
        source, pairs, done = _substitute(source, pairs, record["language"], pool, rng)
        applied += done
    if "spaced_name" in operations and record["language"] == "ko" \
            and rng.random() < SPACED_NAME_RATE:
        spaced = _spaced_name(source, pairs, rng)
        if spaced:
            source, pairs = spaced
            applied.append("spaced_name")
    if "separator" in operations and rng.random() < SEPARATOR_RATE:
        perturbed = _separator(source, pairs, rng)
        if perturbed:
            source, pairs, label = perturbed
            applied.append(f"separator:{label}")
    if source == record["source_text"]:
        return None
    entities = entities_in_order(source, pairs)
    return {
        **record,
        "id": new_id,
        "source_text": source,
        "entities": entities,
        "target_tsv": target_tsv(entities),
        "augmented_from": rid,
        "augmentation": applied,
    }


def augment_records(records: Sequence[Mapping], copies: int = 1, *, seed: int = 0,
                    operations: Sequence[str] = OPERATIONS, pool: ValuePool | None = None,
                    exclude_values: Iterable[str] = ()) -> list[dict]:
    """Up to `copies` augmented copies of every record (the new records only).

    Call it on the training split only, after `piilab.splits.family_split`.
    `pool` defaults to the ``train`` pool of ``build_value_pools(exclude=
    exclude_values)``; pass the gold values of the held-out splits as
    `exclude_values` so no held-out value is written into training data.
    Copy *k* of record *r* uses its own random generator seeded from
    ``(seed, r["id"], k)``, so the result does not depend on record order or
    on `PYTHONHASHSEED`. A copy whose source equals a source already present
    (an input record or an earlier copy) is dropped; so are copies where no
    operation applied. New ids are ``<id>-aug<k>``; one that collides with an
    existing id raises `AugmentError`.
    """
    if copies < 0:
        raise AugmentError("copies must be zero or more")
    _check_operations(operations)
    for record in records:
        _check_input(record)
    if copies == 0:
        return []
    if pool is None:
        pool = build_value_pools(exclude=exclude_values)["train"]
    ids = {r.get("id") for r in records}
    seen_sources = {nfc(r["source_text"]) for r in records}
    out: list[dict] = []
    for record, k in itertools.product(records, range(1, copies + 1)):
        new_id = f"{record['id']}-aug{k}"
        if new_id in ids:
            raise AugmentError(f"record {record['id']}: augmented id {new_id} already exists")
        copy = _augment(record, _rng(seed, record["id"], k), pool, new_id, operations)
        if copy is None or nfc(copy["source_text"]) in seen_sources:
            continue
        seen_sources.add(nfc(copy["source_text"]))
        ids.add(new_id)
        out.append(copy)
    return out
