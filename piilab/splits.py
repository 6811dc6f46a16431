"""Leakage audit and family-level split (chapter 05, "Data augmentation workshop").

Two records can leak into each other across splits in more ways than sharing
an id. This module measures four of them and builds a split without any:

* **exact duplicates**: the same source text after NFC normalization;
* **shared families**: the same template family (`template_id`), i.e. the same
  sentence frame with other values poured in;
* **shared skeletons** (near-duplicates): the same *skeleton*, the source with
  every gold PII occurrence replaced by ``{LABEL}`` and every remaining ASCII
  digit run by ``{DIGITS}`` (`skeleton`);
* **groups spanning splits**: unique NFC sources found in two or more splits.

`audit_splits(splits)` counts them for every pair of splits. `family_split`
then joins records into *groups* with a union-find (same family, same
skeleton or same NFC source -> same group), and assigns whole groups to
splits, so the audit of its output is zero in every count. Because whole
groups move together, the split sizes and the ko/en balance can only come as
close to the targets as the group sizes allow; `split_deviation` reports how
close they came, and nothing here pretends otherwise.

What this module deliberately does not do: it does not edit records (only the
``split`` field of the copies `family_split` returns), it does not augment
(`piilab.augment` does that, on the training split, after this split), and a
zero audit is not proof of generalization: values and vocabularies can still
repeat across families. The default corpus shares its templates across its
splits, so its own audit is far from zero and is reported as it is.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from piilab.errors import PiilabError
from piilab.labels import LABEL_PRIORITY, LABELS, nfc, normalize_label
from piilab.matching import find_occurrences
from piilab.records import check_record

__all__ = [
    "DEFAULT_TARGETS",
    "FamilyGroup",
    "SplitError",
    "audit_splits",
    "family_groups",
    "family_split",
    "leak_free",
    "skeleton",
    "split_deviation",
    "stratum",
]

#: Target fractions of `family_split` when none are given.
DEFAULT_TARGETS: dict[str, float] = {"train": 0.8, "validation": 0.1, "test": 0.1}

#: What a digit run left outside every gold occurrence becomes in a skeleton.
DIGITS_MARK = "{DIGITS}"

_DIGIT_RUN = re.compile(r"[0-9]+")  # ASCII digits only, as everywhere in piilab


class SplitError(PiilabError):
    """A record cannot be audited or split (names the record by position and the field)."""


# --------------------------------------------------------------------------------
# The three keys a record is compared by: NFC source, family, skeleton.
# --------------------------------------------------------------------------------


def _field(record: Mapping, name: str, kind: type = str):
    """A required field of `record`; a missing or mistyped one raises `SplitError`."""
    check_record(record, where="", required={name: kind}, entities=False, error=SplitError)
    return record[name]


def _each(function, records: Sequence[Mapping], label: str) -> list:
    """`function` of every record; a `SplitError` names the record as ``<label> N``.

    The position, never the id: an id is data too.
    """
    out = []
    for number, record in enumerate(records, 1):
        try:
            out.append(function(record))
        except SplitError as exc:
            raise SplitError(f"{label} {number}: {exc}") from None
    return out


def skeleton(source_text: str, entities: Iterable[Mapping]) -> str:
    """The source with every gold occurrence -> ``{LABEL}`` and digit runs -> ``{DIGITS}``.

    Gold occurrences are found as everywhere else (`piilab.matching`: literals,
    PERSON and numeric variants, numeric boundaries). Where two occurrences
    overlap, the leftmost and then the longest wins (then `LABELS` order).
    Digits left over (order numbers, amounts, dates that are not PII) are
    replaced run by run. Two records with the same skeleton say the same thing
    about different people: a near-duplicate.

    >>> skeleton("김가상 님, 주문 2024-001 / 김 가 상",
    ...          [{"type": "PERSON", "value": "김가상"}])
    '{PERSON} 님, 주문 {DIGITS}-{DIGITS} / {PERSON}'
    """
    source = nfc(source_text)
    found = []
    for entity in entities:
        # The rule of `piilab.labels.normalize_pair`, but a type outside LABELS is kept
        # (ranked last): a skeleton is a similarity key, not a validation.
        label = normalize_label(str(entity["type"]))
        value = nfc(str(entity["value"])).strip()
        if not value:
            continue
        for occ in find_occurrences(source, label, value):
            found.append((occ.start, -occ.end, LABEL_PRIORITY.get(label, len(LABEL_PRIORITY)),
                          label))
    found.sort()
    pieces: list[str] = []
    cursor = 0
    for start, neg_end, _, label in found:
        if start < cursor:
            continue  # inside an occurrence already replaced
        pieces.append(_DIGIT_RUN.sub(DIGITS_MARK, source[cursor:start]))
        pieces.append("{" + label + "}")
        cursor = -neg_end
    pieces.append(_DIGIT_RUN.sub(DIGITS_MARK, source[cursor:]))
    return "".join(pieces)


@dataclass(frozen=True)
class _Keys:
    """What one record is compared by."""

    source: str
    family: str
    skeleton: str


def _keys(record: Mapping) -> _Keys:
    source = _field(record, "source_text")
    family = _field(record, "template_id")
    entities = _field(record, "entities", list)
    try:
        skel = skeleton(source, entities)
    except (KeyError, TypeError):
        raise SplitError("field 'entities' needs 'type' and 'value'") from None
    return _Keys(nfc(source), family, skel)


# --------------------------------------------------------------------------------
# The audit.
# --------------------------------------------------------------------------------


def audit_splits(splits: Mapping[str, Sequence[Mapping]]) -> dict:
    """Count what two splits share, for every pair of splits in the given order.

    `splits` maps a split name to its records (``id``, ``source_text``,
    ``entities``, ``template_id``). The result (plain data, JSON-ready, no
    source text in it):

    - ``splits.<name>``: ``records``, ``unique_sources``, ``families``,
      ``skeletons`` and ``duplicate_records`` (records whose NFC source occurs
      earlier in the same split);
    - ``pairs["a/b"]``, one entry per pair ``(a, b)`` in the given order:
      ``exact_duplicates``, ``shared_families`` and ``shared_skeletons``, each
      the number of distinct keys (NFC sources, template ids, skeletons)
      present in both splits; ``exact_duplicate_records``,
      ``shared_family_records`` and ``shared_skeleton_records``: how many
      records of each of the two splits carry such a key (``{a: n, b: m}``);
      ``shared_family_ids``: the shared template ids (sorted); and
      ``exact_duplicate_ids``: the ids of the records behind the exact
      duplicates, from both splits (sorted);
    - ``groups_spanning_splits``: unique NFC sources present in two or more
      splits; ``families_spanning_splits`` and ``skeletons_spanning_splits``:
      the same for template ids and skeletons.

    >>> rec = lambda i, text, fam: {"id": i, "source_text": text, "entities": [],
    ...                             "template_id": fam}
    >>> audit = audit_splits({"train": [rec("a", "hi 1", "f")], "test": [rec("b", "hi 2", "f")]})
    >>> audit["pairs"]["train/test"]["shared_skeletons"], audit["groups_spanning_splits"]
    (1, 0)
    """
    keys = {name: _each(_keys, records, f"{name} record") for name, records in splits.items()}
    ids = {name: [str(r.get("id", "?")) for r in records] for name, records in splits.items()}

    per_split = {}
    for name, ks in keys.items():
        sources = [k.source for k in ks]
        per_split[name] = {
            "records": len(ks),
            "unique_sources": len(set(sources)),
            "families": len({k.family for k in ks}),
            "skeletons": len({k.skeleton for k in ks}),
            "duplicate_records": len(sources) - len(set(sources)),
        }

    def key_sets(attr: str) -> dict[str, set[str]]:
        return {name: {getattr(k, attr) for k in ks} for name, ks in keys.items()}

    sources, families, skeletons = key_sets("source"), key_sets("family"), key_sets("skeleton")

    pairs = {}
    for a, b in itertools.combinations(keys, 2):
        shared_sources = sources[a] & sources[b]
        shared_families = families[a] & families[b]
        shared_skeletons = skeletons[a] & skeletons[b]

        def records_with(attr: str, shared: set[str], a: str = a, b: str = b) -> dict[str, int]:
            return {s: sum(getattr(k, attr) in shared for k in keys[s]) for s in (a, b)}

        pairs[f"{a}/{b}"] = {
            "exact_duplicates": len(shared_sources),
            "shared_families": len(shared_families),
            "shared_skeletons": len(shared_skeletons),
            "exact_duplicate_records": records_with("source", shared_sources),
            "shared_family_records": records_with("family", shared_families),
            "shared_skeleton_records": records_with("skeleton", shared_skeletons),
            "shared_family_ids": sorted(shared_families),
            "exact_duplicate_ids": sorted(
                rid for s in (a, b) for rid, k in zip(ids[s], keys[s], strict=True)
                if k.source in shared_sources
            ),
        }

    def spanning(key_sets_: dict[str, set[str]]) -> int:
        seen = Counter(key for ks in key_sets_.values() for key in ks)
        return sum(count >= 2 for count in seen.values())

    return {
        "splits": per_split,
        "pairs": pairs,
        "groups_spanning_splits": spanning(sources),
        "families_spanning_splits": spanning(families),
        "skeletons_spanning_splits": spanning(skeletons),
    }


#: The counts of an audit pair that must all be zero for a leak-free split.
PAIR_COUNTS = ("exact_duplicates", "shared_families", "shared_skeletons")
#: The same for the whole audit.
SPANNING_COUNTS = ("groups_spanning_splits", "families_spanning_splits",
                   "skeletons_spanning_splits")


def leak_free(audit: Mapping) -> bool:
    """True when every cross-split count of an `audit_splits` result is zero.

    Only what the audit measures: a leak-free audit does not mean the splits
    share no names, numbers or phrasings.
    """
    pairs_clean = all(pair[count] == 0 for pair in audit["pairs"].values() for count in PAIR_COUNTS)
    return pairs_clean and all(audit[count] == 0 for count in SPANNING_COUNTS)


# --------------------------------------------------------------------------------
# Groups: families joined by skeletons and exact duplicates (union-find).
# --------------------------------------------------------------------------------


def stratum(record: Mapping) -> str:
    """The balance class of a record: its language and whether it carries PII.

    >>> stratum({"id": "r1", "language": "ko", "entities": []})
    'ko/negative'
    """
    language = _field(record, "language")
    return f"{language}/{'positive' if _field(record, 'entities', list) else 'negative'}"


@dataclass(frozen=True)
class FamilyGroup:
    """Records that must land in one split together.

    `families` are the template ids joined in the group (sorted), `indices` the
    positions of its records in the input, `strata` ``(stratum, count)`` pairs
    (sorted; see `stratum`).
    """

    families: tuple[str, ...]
    indices: tuple[int, ...]
    strata: tuple[tuple[str, int], ...]

    @property
    def size(self) -> int:
        return len(self.indices)

    @property
    def languages(self) -> dict[str, int]:
        """Records per language."""
        out: Counter[str] = Counter()
        for name, n in self.strata:
            out[name.split("/")[0]] += n
        return dict(out)

    @property
    def name(self) -> str:
        """A readable, stable name: the joined template ids."""
        return "+".join(self.families)


class _UnionFind:
    """Disjoint sets over ``0..n-1`` with path halving and union by size."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))
        self.size = [1] * n

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        ri, rj = self.find(i), self.find(j)
        if ri == rj:
            return
        if self.size[ri] < self.size[rj]:
            ri, rj = rj, ri
        self.parent[rj] = ri
        self.size[ri] += self.size[rj]


def family_groups(records: Sequence[Mapping]) -> list[FamilyGroup]:
    """Join records that share a family, a skeleton or an NFC source (transitively).

    A skeleton shared by two families joins the two families, so neither can
    end up on the other side of a split boundary. Groups are returned largest
    first, then by name.

    >>> rec = lambda text, fam: {"id": fam, "source_text": text, "entities": [],
    ...                          "template_id": fam, "language": "en"}
    >>> [g.name for g in family_groups([rec("a 1", "x"), rec("a 2", "y"), rec("b", "z")])]
    ['x+y', 'z']
    """
    keys = _each(_keys, records, "record")
    strata = _each(stratum, records, "record")
    uf = _UnionFind(len(records))
    # 1. Join every record to the first record that carries the same key.
    for attr in ("family", "skeleton", "source"):
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            uf.union(first.setdefault(getattr(k, attr), i), i)
    # 2. Collect the groups.
    members: dict[int, list[int]] = defaultdict(list)
    for i in range(len(records)):
        members[uf.find(i)].append(i)
    groups = [
        FamilyGroup(
            families=tuple(sorted({keys[i].family for i in idx})),
            indices=tuple(idx),
            strata=tuple(sorted(Counter(strata[i] for i in idx).items())),
        )
        for idx in members.values()
    ]
    groups.sort(key=lambda g: (-g.size, g.name))
    return groups


# --------------------------------------------------------------------------------
# The family split.
# --------------------------------------------------------------------------------


def _normalized_targets(targets: Mapping[str, float]) -> dict[str, float]:
    if not targets:
        raise SplitError("targets must name at least one split")
    if any(not isinstance(w, int | float) or not math.isfinite(w) or w < 0
           for w in targets.values()):
        raise SplitError("target weights must be finite, non-negative numbers")
    total = float(sum(targets.values()))
    if total <= 0:
        raise SplitError("target weights must not all be zero")
    return {name: w / total for name, w in targets.items()}


def _tiebreak(seed: int, name: str) -> str:
    """A stable pseudo-random order for groups of equal size (no `hash()`)."""
    return hashlib.sha256(f"piilab-split:{seed}:{name}".encode()).hexdigest()


#: What a label missing from a split costs in `family_split`, in squared records:
#: as much as being 20 records off a target.
MISSING_LABEL_COST = 400.0


def family_split(records: Iterable[Mapping], targets: Mapping[str, float] | None = None, *,
                 seed: int = 0) -> dict[str, list[dict]]:
    """Assign whole groups (`family_groups`) to splits; returns ``{split: [records]}``.

    `targets` maps split names to weights (fractions or counts; they are
    normalized), default `DEFAULT_TARGETS` (80/10/10). What the assignment
    minimizes, the *distance*:

    - per split and stratum (language x positive/negative document, see
      `stratum`), the squared difference between its records and its target
      ``fraction(split) * records(stratum)``. So each split keeps the
      corpus's size share, ko/en mix and share of negative documents as
      closely as the groups allow (without the negative strata, the small
      splits fill up with the PII-free notice families, which happen to be
      the right size);
    - plus `MISSING_LABEL_COST` for every label that occurs in the records
      but in none of a split's (for splits with a nonzero target): with only
      a handful of families in a small split, a label could vanish from it.

    The assignment, deterministic for a given `seed`:

    1. Groups, largest first (equal sizes in an order drawn from `seed`), each
       go to the split where they lower the distance most (the classic greedy
       for balanced partitions).
    2. Local search: apply the best move of one group, or swap of two groups
       between splits, while one lowers the distance; stop when none does.

    The result holds copies of the records in input order with ``split`` set
    to their new split (ids and everything else unchanged), and a key for
    every split in `targets`, empty or not. `split_deviation` reports how far
    the result landed from the targets.
    """
    records = list(records)
    fractions = _normalized_targets(DEFAULT_TARGETS if targets is None else targets)
    names = list(fractions)
    groups = family_groups(records)
    # Per group: records per stratum, and records carrying each label.
    strata = [dict(g.strata) for g in groups]
    labels = [dict(Counter(label for i in g.indices
                           for label in {e["type"] for e in records[i]["entities"]}))
              for g in groups]
    totals: Counter[str] = Counter()
    for vector in strata:
        totals.update(vector)
    goal = {(s, t): fractions[s] * totals[t] for s in names for t in totals}
    counts: Counter[tuple[str, str]] = Counter()  # (split, stratum or label) -> records
    where: dict[int, str] = {}

    def change(split: str, add: Sequence[int], remove: Sequence[int]) -> float:
        """How the distance changes when groups `add` join `split` and `remove` leave it."""
        total = 0.0
        for t in {t for g in (*add, *remove) for t in strata[g]}:
            before = counts[split, t] - goal[split, t]
            after = (before + sum(strata[g].get(t, 0) for g in add)
                     - sum(strata[g].get(t, 0) for g in remove))
            total += after**2 - before**2
        if fractions[split] > 0:
            for label in {lb for g in (*add, *remove) for lb in labels[g]}:
                before = counts[split, label]
                after = (before + sum(labels[g].get(label, 0) for g in add)
                         - sum(labels[g].get(label, 0) for g in remove))
                total += MISSING_LABEL_COST * ((after == 0) - (before == 0))
        return total

    def move(g: int, src: str | None, dst: str) -> None:
        for key, n in (*strata[g].items(), *labels[g].items()):
            if src is not None:
                counts[src, key] -= n
            counts[dst, key] += n
        where[g] = dst

    # 1. Greedy, largest group first; a group goes where it helps most (ties: first split).
    order = sorted(range(len(groups)),
                   key=lambda g: (-groups[g].size, _tiebreak(seed, groups[g].name)))
    for g in order:
        move(g, None, min(names, key=lambda s: change(s, (g,), ())))

    # 2. Local search: the best single move or swap, while one lowers the distance.
    while True:
        best_gain, best_steps = 1e-9, ()
        for g in order:
            for dst in names:
                if dst != where[g]:
                    gain = -(change(where[g], (), (g,)) + change(dst, (g,), ()))
                    if gain > best_gain:
                        best_gain, best_steps = gain, ((g, where[g], dst),)
        for g, h in itertools.combinations(order, 2):
            sg, sh = where[g], where[h]
            if sg != sh:
                gain = -(change(sg, (h,), (g,)) + change(sh, (g,), (h,)))
                if gain > best_gain:
                    best_gain, best_steps = gain, ((g, sg, sh), (h, sh, sg))
        if not best_steps:
            break
        for g, src, dst in best_steps:
            move(g, src, dst)

    split_of = {i: where[g] for g in range(len(groups)) for i in groups[g].indices}
    out: dict[str, list[dict]] = {name: [] for name in names}
    for i, record in enumerate(records):
        out[split_of[i]].append({**record, "split": split_of[i]})
    return out


def split_deviation(splits: Mapping[str, Sequence[Mapping]],
                    targets: Mapping[str, float] | None = None) -> dict:
    """How far split sizes, languages and strata are from the target fractions.

    Returns ``{"targets": {split: fraction}, "splits": {split: {...}},
    "max_fraction_deviation": float}``. Per split: ``records``,
    ``target_records`` (its fraction x all records), ``deviation`` (records
    minus target), ``fraction``, ``target_fraction``, and the same three
    counts (``records``, ``target_records``, ``deviation``) per language under
    ``languages`` and per `stratum` under ``strata``. A split named in
    `targets` but absent from `splits` counts as empty; a split absent from
    `targets` has target 0. ``labels`` counts the records carrying each label,
    so that a label missing from a small split is visible.

    >>> rec = {"language": "ko", "entities": []}
    >>> report = split_deviation({"a": [rec] * 3, "b": [rec]}, {"a": 0.5, "b": 0.5})
    >>> report["splits"]["a"]["deviation"], report["max_fraction_deviation"]
    (1.0, 0.25)
    """
    fractions = _normalized_targets(DEFAULT_TARGETS if targets is None else targets)
    names = list(dict.fromkeys([*fractions, *splits]))
    every = [r for s in names for r in splits.get(s, ())]
    total = len(every)

    def counts_against(records: Sequence[Mapping], key, fraction: float) -> dict:
        have = Counter(key(r) for r in records)
        return {
            k: {"records": have.get(k, 0), "target_records": fraction * n,
                "deviation": have.get(k, 0) - fraction * n}
            for k, n in sorted(Counter(key(r) for r in every).items())
        }

    report = {}
    for s in names:
        records = splits.get(s, ())
        fraction = fractions.get(s, 0.0)
        report[s] = {
            "records": len(records),
            "target_records": fraction * total,
            "deviation": len(records) - fraction * total,
            "fraction": len(records) / total if total else 0.0,
            "target_fraction": fraction,
            "languages": counts_against(records, lambda r: _field(r, "language"), fraction),
            "strata": counts_against(records, stratum, fraction),
            "labels": {label: sum(any(e.get("type") == label for e in r.get("entities", ()))
                                  for r in records) for label in LABELS},
        }
    worst = max((abs(v["fraction"] - v["target_fraction"]) for v in report.values()), default=0.0)
    return {"targets": fractions, "splits": report, "max_fraction_deviation": worst}
