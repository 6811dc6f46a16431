"""Value pools: which split a value belongs to, from a stable hash of its key (chapters 05, 09).

A value that may appear in one split only (a substitute name in augmented
training records, a fresh value of the finance dataset) is assigned by
`partition`: the digest of the value's *key* (the caller's normalized form, so
that two spellings of one value get one key) is read as a number in ``[0, 1)``,
and the consecutive intervals that the split shares cut decide. The same key
lands in the same split on every machine and under any ``PYTHONHASHSEED``.

The digest is a parameter (`DIGEST_BYTES` says how much of it is read):

* ``sha256`` (8 bytes): the augmentation pool (`piilab.augment.value_split`);
* ``md5`` (4 bytes): the finance dataset, whose card specifies an MD5
  partition (`piilab.finance.values.pool_split`). MD5 is used as a spread-out
  hash here, not for security.

What it deliberately does not do: normalize. The key is the caller's: the
augmenter keys a value as the matching rules see it (digits only for a
number), the finance builder case-folds and drops separators.

>>> partition("010-1234-5678", {"train": 0.8, "validation": 0.2}) in {"train", "validation"}
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from piilab.errors import PiilabError

__all__ = ["DIGEST_BYTES", "PartitionError", "hash_point", "partition"]

#: The digests a partition may use, and how many leading bytes of each it reads.
DIGEST_BYTES: Mapping[str, int] = {"md5": 4, "sha256": 8}


class PartitionError(PiilabError):
    """The split shares or the digest are unusable (names the problem, never a key)."""


def hash_point(key: str, *, digest: str = "sha256", salt: str = "") -> float:
    """Where `key` falls in ``[0, 1)``: the first `DIGEST_BYTES` bytes of the digest of
    ``salt + key`` (UTF-8), read big-endian as a fraction.

    >>> 0 <= hash_point("김가상") < 1
    True
    """
    if digest not in DIGEST_BYTES:
        raise PartitionError(f"digest must be one of {', '.join(DIGEST_BYTES)}")
    size = DIGEST_BYTES[digest]
    raw = hashlib.new(digest, (salt + key).encode("utf-8"), usedforsecurity=False).digest()
    return int.from_bytes(raw[:size], "big") / 2 ** (8 * size)


def partition(key: str, shares: Mapping[str, float] | Sequence[tuple[str, float]], *,
              digest: str = "sha256", salt: str = "") -> str:
    """The split whose pool holds `key`.

    `shares` are ``split -> weight`` (a mapping or ``(split, weight)`` pairs), in
    order; weights are normalized by their sum, so the first split owns the
    first part of ``[0, 1)``. A point at the very top (rounding) goes to the
    last split.

    >>> partition("x", {"only": 1.0})
    'only'
    """
    items = list(shares.items()) if isinstance(shares, Mapping) else list(shares)
    total = float(sum(weight for _, weight in items))
    if not items or total <= 0 or any(weight < 0 for _, weight in items):
        raise PartitionError("split shares must be non-negative and not all zero")
    point = hash_point(key, digest=digest, salt=salt) * total
    upper = 0.0
    for split, weight in items:
        upper += weight
        if point < upper:
            return split
    return items[-1][0]
