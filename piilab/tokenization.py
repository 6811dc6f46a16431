"""The masker under its first name: `piilab.tokenization` is `piilab.masking`.

Chapter 03 ("Deterministic tokenization") imports the masker from here, under the name
docs/contract.md (section 5) gives it; the code lives in `piilab.masking`, and these are the
same objects. This alias stays for the book and its notebooks: library code imports
`piilab.masking`.

>>> from piilab import masking
>>> mask_text is masking.mask_text
True
"""

from __future__ import annotations

from piilab.masking import *  # noqa: F403  (the same objects, under the old module name)
from piilab.masking import __all__  # noqa: F401
