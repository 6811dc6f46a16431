"""The leakage audit: what two splits share (`piilab.splits`, chapter 05).

`audit_splits(splits)` returns a `SplitAudit`: counts only, never a source text or a
value. Read it by attribute (``audit.pairs["train/test"].shared_skeletons``); its
`SplitAudit.to_dict` form is the JSON that ``piilab audit --json`` writes. The audit also
reads as that dict (``audit["pairs"]["train/test"]["shared_skeletons"]``), because the
behaviour contract states it as a dict (docs/contract.md, section 7).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from piilab.splits.keys import _each, _keys

__all__ = [
    "PAIR_COUNTS",
    "SPANNING_COUNTS",
    "PairAudit",
    "SplitAudit",
    "SplitCounts",
    "audit_splits",
    "leak_free",
]

#: The counts of an audit pair that must all be zero for a leak-free split.
PAIR_COUNTS = ("exact_duplicates", "shared_families", "shared_skeletons")
#: The same for the whole audit.
SPANNING_COUNTS = ("groups_spanning_splits", "families_spanning_splits",
                   "skeletons_spanning_splits")


@dataclass(frozen=True)
class SplitCounts:
    """One split on its own: ``records``, ``unique_sources`` (NFC), ``families``,
    ``skeletons`` and ``duplicate_records`` (records whose NFC source occurs earlier in
    the same split)."""

    records: int
    unique_sources: int
    families: int
    skeletons: int
    duplicate_records: int


@dataclass(frozen=True)
class PairAudit:
    """What two splits ``a/b`` share.

    ``exact_duplicates``, ``shared_families`` and ``shared_skeletons``: the number of
    distinct keys (NFC sources, template ids, skeletons) present in both splits;
    ``exact_duplicate_records``, ``shared_family_records`` and
    ``shared_skeleton_records``: how many records of each of the two splits carry such a
    key (``{a: n, b: m}``); ``shared_family_ids``: the shared template ids (sorted);
    ``exact_duplicate_ids``: the ids of the records behind the exact duplicates, from
    both splits (sorted).
    """

    exact_duplicates: int
    shared_families: int
    shared_skeletons: int
    exact_duplicate_records: Mapping[str, int]
    shared_family_records: Mapping[str, int]
    shared_skeleton_records: Mapping[str, int]
    shared_family_ids: tuple[str, ...]
    exact_duplicate_ids: tuple[str, ...]


@dataclass(frozen=True)
class SplitAudit(Mapping):
    """The result of `audit_splits` (counts only, no source text).

    ``splits``: a `SplitCounts` per split; ``pairs``: a `PairAudit` per pair ``"a/b"``,
    in the given order; ``groups_spanning_splits``: unique NFC sources present in two or
    more splits; ``families_spanning_splits`` and ``skeletons_spanning_splits``: the same
    for template ids and skeletons.

    `to_dict` gives the plain, JSON-ready form. The audit is also a read-only mapping over
    that form (``audit["pairs"]``), the dict the contract describes.
    """

    splits: Mapping[str, SplitCounts]
    pairs: Mapping[str, PairAudit]
    groups_spanning_splits: int
    families_spanning_splits: int
    skeletons_spanning_splits: int

    def to_dict(self) -> dict[str, Any]:
        """The audit as plain data (dicts, lists, ints), ready for `json.dumps`."""
        def pair(p: PairAudit) -> dict[str, Any]:
            out = asdict(p)
            out["exact_duplicate_records"] = dict(p.exact_duplicate_records)
            out["shared_family_records"] = dict(p.shared_family_records)
            out["shared_skeleton_records"] = dict(p.shared_skeleton_records)
            out["shared_family_ids"] = list(p.shared_family_ids)
            out["exact_duplicate_ids"] = list(p.exact_duplicate_ids)
            return out

        return {
            "splits": {name: asdict(counts) for name, counts in self.splits.items()},
            "pairs": {name: pair(p) for name, p in self.pairs.items()},
            "groups_spanning_splits": self.groups_spanning_splits,
            "families_spanning_splits": self.families_spanning_splits,
            "skeletons_spanning_splits": self.skeletons_spanning_splits,
        }

    # The mapping view: the keys of `to_dict`, each read from it.
    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(("splits", "pairs", *SPANNING_COUNTS))

    def __len__(self) -> int:
        return 2 + len(SPANNING_COUNTS)

    @property
    def leak_free(self) -> bool:
        """True when every cross-split count is zero (see `leak_free`)."""
        pairs_clean = all(getattr(pair, count) == 0 for pair in self.pairs.values()
                          for count in PAIR_COUNTS)
        return pairs_clean and all(getattr(self, count) == 0 for count in SPANNING_COUNTS)


def audit_splits(splits: Mapping[str, Sequence[Mapping]]) -> SplitAudit:
    """Count what two splits share, for every pair of splits in the given order.

    `splits` maps a split name to its records (``id``, ``source_text``,
    ``entities``, ``template_id``). The result is a `SplitAudit` (no source text in
    it): a `SplitCounts` per split, a `PairAudit` per pair ``"a/b"`` and the three
    counts of keys spanning two or more splits.

    >>> rec = lambda i, text, fam: {"id": i, "source_text": text, "entities": [],
    ...                             "template_id": fam}
    >>> audit = audit_splits({"train": [rec("a", "hi 1", "f")], "test": [rec("b", "hi 2", "f")]})
    >>> audit.pairs["train/test"].shared_skeletons, audit.groups_spanning_splits
    (1, 0)
    """
    keys = {name: _each(_keys, records, f"{name} record") for name, records in splits.items()}
    ids = {name: [str(r.get("id", "?")) for r in records] for name, records in splits.items()}

    per_split = {}
    for name, ks in keys.items():
        sources = [k.source for k in ks]
        per_split[name] = SplitCounts(
            records=len(ks),
            unique_sources=len(set(sources)),
            families=len({k.family for k in ks}),
            skeletons=len({k.skeleton for k in ks}),
            duplicate_records=len(sources) - len(set(sources)),
        )

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

        pairs[f"{a}/{b}"] = PairAudit(
            exact_duplicates=len(shared_sources),
            shared_families=len(shared_families),
            shared_skeletons=len(shared_skeletons),
            exact_duplicate_records=records_with("source", shared_sources),
            shared_family_records=records_with("family", shared_families),
            shared_skeleton_records=records_with("skeleton", shared_skeletons),
            shared_family_ids=tuple(sorted(shared_families)),
            exact_duplicate_ids=tuple(sorted(
                rid for s in (a, b) for rid, k in zip(ids[s], keys[s], strict=True)
                if k.source in shared_sources
            )),
        )

    def spanning(key_sets_: dict[str, set[str]]) -> int:
        seen = Counter(key for ks in key_sets_.values() for key in ks)
        return sum(count >= 2 for count in seen.values())

    return SplitAudit(
        splits=per_split,
        pairs=pairs,
        groups_spanning_splits=spanning(sources),
        families_spanning_splits=spanning(families),
        skeletons_spanning_splits=spanning(skeletons),
    )


def leak_free(audit: SplitAudit | Mapping) -> bool:
    """True when every cross-split count of an audit is zero: a `SplitAudit`, or its
    `SplitAudit.to_dict` form read back from JSON.

    Only what the audit measures: a leak-free audit does not mean the splits
    share no names, numbers or phrasings.
    """
    if isinstance(audit, SplitAudit):
        return audit.leak_free
    pairs_clean = all(pair[count] == 0 for pair in audit["pairs"].values() for count in PAIR_COUNTS)
    return pairs_clean and all(audit[count] == 0 for count in SPANNING_COUNTS)
