"""Groups of records that must stay in one split: families joined by skeletons and exact
duplicates, with a union-find (`piilab.splits`, chapter 05)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from piilab.splits.keys import _each, _field, _keys

__all__ = ["FamilyGroup", "family_groups", "stratum"]


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
