"""Checkers for chapter 08 ("Token classification (BIOES)"): tag a sentence by hand.

- `check_bioes_tags(answer)`: the learner writes the BIOES tag of every token of `TAG_TEXT`
  (tokens given by `tag_offsets`) for the spans `TAG_SPANS`. The expected tags are computed
  with `piilab.bioes.spans_to_bioes`, the projection the chapter teaches.

It follows the pattern of `piilab.course.exercises`: validate the shape of the answer first, then
say what is wrong, in the reader's language, without printing the solution (the message
names the first wrong token and what kind of mistake it is, never the right tag). All data
here is synthetic (an ``example.com`` address, a ``555-01XX`` phone number).
"""

from __future__ import annotations

import re
from typing import Any

from piilab.bioes import spans_to_bioes
from piilab.course.exercises import CheckResult, _as_string_list, _check_tags
from piilab.labels import LABELS

__all__ = ["TAG_SPANS", "TAG_TEXT", "check_bioes_tags", "tag_offsets"]

#: The sentence of exercise 1.
TAG_TEXT = "Dear Mom, call Jo Park at 555-0142 or jo.park@example.com"

#: Its gold spans, ``(start, end, label)``.
TAG_SPANS: tuple[tuple[int, int, str], ...] = (
    (5, 8, "REL"),
    (15, 22, "PERSON"),
    (26, 34, "PHONE"),
    (38, 57, "EMAIL"),
)

#: A simple word-and-punctuation tokenization (offsets leave spaces out).
_TOKEN = re.compile(r"\w+|[^\w\s]")


def tag_offsets() -> list[tuple[int, int]]:
    """The ``(start, end)`` offsets of the tokens of `TAG_TEXT`."""
    return [match.span() for match in _TOKEN.finditer(TAG_TEXT)]


#: The messages of this exercise (`piilab.course.exercises._check_tags`).
KEYS = {
    "not_a_tag": "ch08.not_a_tag", "wrong_count": "ch08.wrong_count",
    "tags_correct": "ch08.tags_correct", "token_outside": "ch08.token_outside",
    "token_inside": "ch08.token_inside", "wrong_label": "ch08.wrong_label",
    "wrong_prefix": "ch08.wrong_prefix",
}


def _expected() -> list[str]:
    return spans_to_bioes(tag_offsets(), TAG_SPANS)


def check_bioes_tags(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 08, exercise 1: one BIOES tag per token of `TAG_TEXT`, in token order.

    Reports, in this order: a wrong shape; a string that is not a tag; a wrong number of
    tags; then the first wrong token, saying whether it should be tagged at all, whether its
    label or its position prefix (B, I, E, S) is wrong.
    """
    items = _as_string_list(answer, lang, "ch08.what_tags")
    if isinstance(items, CheckResult):
        return items
    return _check_tags(items, lang=lang, text=TAG_TEXT, offsets=tag_offsets(),
                       expected=_expected(), labels=LABELS, spans=len(TAG_SPANS), keys=KEYS)
