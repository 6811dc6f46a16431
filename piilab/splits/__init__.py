"""Leakage audit and family-level split (chapter 05, "Data augmentation workshop").

Two records can leak into each other across splits in more ways than sharing
an id. This package measures four of them and builds a split without any:

* **exact duplicates**: the same source text after NFC normalization;
* **shared families**: the same template family (`template_id`), i.e. the same
  sentence frame with other values poured in;
* **shared skeletons** (near-duplicates): the same *skeleton*, the source with
  every gold PII occurrence replaced by ``{LABEL}`` and every remaining ASCII
  digit run by ``{DIGITS}`` (`skeleton`);
* **groups spanning splits**: unique NFC sources found in two or more splits.

`audit_splits(splits)` counts them for every pair of splits and returns a
`SplitAudit`. `family_split` then joins records into *groups* with a union-find
(same family, same skeleton or same NFC source -> same group), and assigns
whole groups to splits, so the audit of its output is zero in every count.
Because whole groups move together, the split sizes and the ko/en balance can
only come as close to the targets as the group sizes allow; `split_deviation`
reports how close they came, and nothing here pretends otherwise.

Four modules, one job each, all names re-exported here (import them from
``piilab.splits``):

* `piilab.splits.keys`: the keys records are compared by (`skeleton`) and `SplitError`;
* `piilab.splits.audit`: `audit_splits`, `SplitAudit`, `leak_free`;
* `piilab.splits.groups`: `stratum`, `FamilyGroup`, `family_groups`;
* `piilab.splits.assign`: `assign` (the optimiser), `family_split`, `split_deviation`.

What this package deliberately does not do: it does not edit records (only the
``split`` field of the copies `family_split` returns), it does not augment
(`piilab.augment` does that, on the training split, after this split), and a
zero audit is not proof of generalization: values and vocabularies can still
repeat across families. The default corpus shares its templates across its
splits, so its own audit is far from zero and is reported as it is.
"""

from __future__ import annotations

from piilab.splits.assign import (
    DEFAULT_TARGETS,
    MISSING_LABEL_COST,
    assign,
    family_split,
    split_deviation,
)
from piilab.splits.audit import (
    PAIR_COUNTS,
    SPANNING_COUNTS,
    PairAudit,
    SplitAudit,
    SplitCounts,
    audit_splits,
    leak_free,
)
from piilab.splits.groups import FamilyGroup, family_groups, stratum
from piilab.splits.keys import DIGITS_MARK, SplitError, skeleton

__all__ = [
    "DEFAULT_TARGETS",
    "DIGITS_MARK",
    "MISSING_LABEL_COST",
    "PAIR_COUNTS",
    "SPANNING_COUNTS",
    "FamilyGroup",
    "PairAudit",
    "SplitAudit",
    "SplitCounts",
    "SplitError",
    "assign",
    "audit_splits",
    "family_groups",
    "family_split",
    "leak_free",
    "skeleton",
    "split_deviation",
    "stratum",
]
