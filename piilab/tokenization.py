"""The masker under its first name: `piilab.tokenization` is `piilab.masking`.

Chapter 03 ("Deterministic tokenization") and SPEC section 5 import the masker
from here; the code lives in `piilab.masking`, and these are the same objects.

>>> from piilab import masking
>>> mask_text is masking.mask_text
True
"""

from __future__ import annotations

from piilab.masking import *  # noqa: F403  (the same objects, under the old module name)
from piilab.masking import __all__  # noqa: F401
