"""The finance token-classification dataset: 18 labels, o200k tokens, built and verified offline.

Chapter 09 ("A token-classification dataset for finance") teaches this
package; its contract is section 10 of docs/contract.md, and
``reference/finance-dataset-card.md`` is the card it reproduces. It sits beside
`piilab.ner` (chapter 08) and shares `piilab.bioes` (the tag scheme) and
`piilab.taxonomy` (the 18 finance labels, 73 BIOES classes) with it. One module per job,
in the order of the chapter:

- `piilab.finance.values`: a value generator per label, invalid by
  construction, and the MD5 partition of values into split pools;
- `piilab.finance.templates`: the authored templates (``templates.json``),
  decoys (type-1 hard negatives) and label-confusion families (type 2);
- `piilab.finance.tokens`: o200k tokens, how they are written, their offsets;
- `piilab.finance.build`: the three sources, the rows, the build checks, the
  files (`build_rows`, `write_build`; ``piilab finance build``);
- `piilab.finance.card`: the dataset card, generated from the rows;
- `piilab.finance.verify`: every rule proved again by separate code
  (``piilab finance verify``);
- `piilab.finance.evaluate`: a small token classifier and its span-level
  scores, with the RRN/FRN and card/account confusions.

Importing the package needs only the standard library; o200k needs
`bpe-openai`, the files need `pyarrow` (``pip install 'piilab[finance]'``),
and the classifier needs torch (the ``train`` extra).

>>> from piilab.finance import build_rows
>>> build = build_rows(40, seed=42)
>>> {split: len(rows) for split, rows in build.rows.items()}
{'train': 32, 'validation': 8}
"""

from __future__ import annotations

from piilab.finance.build import (
    COLUMNS,
    DEFAULT_ROWS,
    DEFAULT_SEED,
    BuildError,
    FinanceBuild,
    build_rows,
    finance_classes,
    write_build,
)
from piilab.finance.verify import VerifyReport, verify_build

__all__ = [
    "COLUMNS",
    "DEFAULT_ROWS",
    "DEFAULT_SEED",
    "BuildError",
    "FinanceBuild",
    "VerifyReport",
    "build_rows",
    "finance_classes",
    "verify_build",
    "write_build",
]
