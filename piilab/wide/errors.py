"""The wide profile's error, in a module of its own so that every part of `piilab.wide`
(the vocabulary included) can raise it without importing the package."""

from __future__ import annotations

from piilab.errors import PiilabError

__all__ = ["WideCorpusError"]


class WideCorpusError(PiilabError):
    """The wide corpus could not be built or read (never echoes a value)."""
