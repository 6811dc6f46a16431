"""The one base class of every error `piilab` raises on purpose: `PiilabError`.

The rule, written once here instead of in every module: **the message of a
`PiilabError` is safe to show.** It names what went wrong and where: the
operation, a path the user gave, a ``file:line`` of the record at fault, a
field name, a label, an offset, a count, a limit. It never quotes a value read
from an input: no source text, no PII value, no completion, no mapping entry,
and no record id (an id is data too; records are named by ``file:line``, or by
their position when they came from memory).

Because every message keeps that rule, the command line prints any
`PiilabError` as it is, on one line (``piilab: error: <message>``, exit status
2), and needs no per-command conversion; any other exception is described by
its class and code location only (`piilab.cli.error_message`).

Which errors are `PiilabError`: every error about an input (a file, a record, a field,
a setting, a label set, an argument's value) is raised as a subclass of it, one per
module or job (`piilab.records.RecordError`, `piilab.splits.SplitError`, ...), so that
library code raises no bare ``ValueError`` or ``KeyError``. ``TypeError`` stays for a
wrong argument *type* (a string where a list of labels is expected, a slow tokenizer
where offsets are needed): that is a bug in the calling code, not bad input, and Python
reports it the same way. A private exception used as control flow inside one module
(``_Misaligned``) is never raised out and need not derive from the base.

`PiilabError` is a `ValueError`: most of these errors are about bad input, and
code that caught ``ValueError`` before the common base existed still does. A lookup
error that callers may catch as a ``KeyError`` derives from both
(`piilab.taxonomy.UnknownLabelError`).
Errors about the environment rather than the input (a model that cannot be
fetched, a build whose own checks fail, a missing font) also derive from
`RuntimeError`, so that ``except RuntimeError`` keeps working for them.

Standard library only; every module of the package may import it.
"""

from __future__ import annotations

__all__ = ["PiilabError"]


class PiilabError(ValueError):
    """An error whose message is safe to show (see the module docstring for the rule)."""
