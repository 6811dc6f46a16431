"""The family split: whole groups assigned to splits, and how far it landed from its
targets (`piilab.splits`, chapter 05).

`assign` is the optimiser on its own (plain counts in, one split per group out);
`family_split` joins it to the groups of `piilab.splits.groups`.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from piilab.labels import LABELS
from piilab.splits.groups import family_groups, stratum
from piilab.splits.keys import SplitError, _field

__all__ = ["DEFAULT_TARGETS", "MISSING_LABEL_COST", "assign", "family_split",
           "split_deviation"]

#: Target fractions of `family_split` when none are given.
DEFAULT_TARGETS: dict[str, float] = {"train": 0.8, "validation": 0.1, "test": 0.1}

#: What a label missing from a split costs in `family_split`, in squared records:
#: as much as being 20 records off a target.
MISSING_LABEL_COST = 400.0


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


def assign(strata: Sequence[Mapping[str, int]], labels: Sequence[Mapping[str, int]],
           fractions: Mapping[str, float], order: Sequence[int]) -> list[str]:
    """The split of each group: ``strata[g]`` counts group g's records per stratum,
    ``labels[g]`` its records per label, `fractions` the target share of each split
    (summing to 1) and `order` the groups, largest first. See `family_split` for the
    distance it minimizes and its two steps.

    >>> assign([{"s": 3}, {"s": 1}], [{}, {}], {"a": 0.75, "b": 0.25}, [0, 1])
    ['a', 'b']
    """
    names = list(fractions)
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
    return [where[g] for g in range(len(strata))]


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

    The assignment (`assign`), deterministic for a given `seed`:

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
    groups = family_groups(records)
    # Per group: records per stratum, and records carrying each label.
    strata = [dict(g.strata) for g in groups]
    labels = [dict(Counter(label for i in g.indices
                           for label in {e["type"] for e in records[i]["entities"]}))
              for g in groups]
    order = sorted(range(len(groups)),
                   key=lambda g: (-groups[g].size, _tiebreak(seed, groups[g].name)))
    chosen = assign(strata, labels, fractions, order)
    split_of = {i: chosen[g] for g in range(len(groups)) for i in groups[g].indices}
    out: dict[str, list[dict]] = {name: [] for name in fractions}
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
