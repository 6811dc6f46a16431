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

`PiilabError` is a `ValueError`: most of these errors are about bad input, and
code that caught ``ValueError`` before the common base existed still does.
Errors about the environment rather than the input (a model that cannot be
fetched, a build whose own checks fail, a missing font) also derive from
`RuntimeError`, so that ``except RuntimeError`` keeps working for them.

Standard library only; every module of the package may import it.
"""

from __future__ import annotations

__all__ = ["PiilabError"]


class PiilabError(ValueError):
    """An error whose message is safe to show (see the module docstring for the rule)."""
