"""Checkers for the book's hands-on exercises: one small function per auto-checked exercise.

A learner writes an answer in a notebook cell and calls the checker; it returns a
`CheckResult` whose `ok` says whether the answer is right and whose `message` says what is
wrong, in the reader's language, without simply printing the solution. The result shows
itself as one line in a notebook, and `bool(result)` is `result.ok`.

Checkers are grouped by chapter, one module each (`ch00` ... `ch08`), and hold the checking
logic only. Their messages live in one catalog per language, `messages/en.json` and
`messages/ja.json`: a flat object, key -> `str.format` template (``{count}``, ``{item!r}``).
Keys start with the chapter (``ch03.restore_raised``) or ``common.``; both catalogs have the
same keys, and each key has the same fields in both. A missing key or field raises a KeyError
that names the key. `tools/extract_ja_text.py` hands the Japanese catalog to textlint
(``make textlint``), like the quizzes.

To add a checker for a later chapter:

1. In the chapter's module, write a function named `check_<what>(answer, *, lang=None)` that
   validates the shape of `answer` first and compares it with the expected value (kept next
   to the checker, or computed from `piilab`). Compute every value a message shows first,
   then build the message with `_say(lang, "chNN.key", name=value, ...)`; never pass the
   expected answer or a PII value the learner has not written into a message.
2. Add each key, with the same fields, to both `messages/en.json` and `messages/ja.json`.
3. Add a test in `tests/test_exercises_chNN.py` (right answer, typical wrong answers, both
   languages). `tests/test_exercise_messages.py` checks that the keys the modules use and
   the keys of both catalogs are the same, and that the fields match.

This module holds only what the chapters share: `CheckResult`, the catalogs (`messages`),
`_say`, and the shape checks `_not_a_list` and `_as_string_list`.

Deliberately not here: grading, storing answers, or anything a chapter should compute itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from piilab.course.lang import LANGUAGES, LanguageError, MessageKeyError, page_language
from piilab.errors import PiilabError


@dataclass(frozen=True)
class CheckResult:
    """The verdict of a checker: `ok`, and a message for the learner."""

    ok: bool
    message: str

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return ("✓ " if self.ok else "✗ ") + self.message

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython display
        printer.text(str(self))


class ExerciseError(PiilabError):
    """An exercise helper called with something the exercise does not cover."""


@cache
def messages(language: str) -> Mapping[str, str]:
    """The checker messages of `language` ("en" or "ja"): key -> `str.format` template.

    Read once from ``messages/<language>.json`` (package data); the mapping is read-only.
    """
    if language not in LANGUAGES:
        raise LanguageError(f"no checker messages for that language; the languages are "
                            f"{', '.join(LANGUAGES)}")
    path = resources.files(__name__).joinpath("messages", f"{language}.json")
    catalog = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(catalog, dict) or not all(
        isinstance(key, str) and isinstance(text, str) for key, text in catalog.items()
    ):
        raise LanguageError(f"messages/{language}.json must be one object of strings")
    return MappingProxyType(catalog)


def _say(lang: str | None, key: str, /, **fields: Any) -> str:
    """The message `key` in `lang` (default: the running notebook's language), formatted
    with `fields`.

    Raises KeyError naming the key when a catalog lacks it, or when the template needs a
    field that `fields` does not give.
    """
    language = "ja" if (lang or page_language()) == "ja" else "en"
    try:
        template = messages(language)[key]
    except KeyError:
        raise MessageKeyError(f"no checker message {key!r} in messages/{language}.json"
                              ) from None
    try:
        return template.format(**fields)
    except KeyError as missing:
        raise MessageKeyError(f"checker message {key!r} (messages/{language}.json) needs "
                              f"the field {missing.args[0]!r}") from None


def _not_a_list(answer: Any, lang: str | None, what: str, /, **fields: Any) -> CheckResult | None:
    """A failed CheckResult when `answer` is not a list-like answer, else None.

    A string, bytes or a mapping is refused as a whole rather than iterated. The message is
    ``common.not_a_list`` ("expected a list of <what>, got <type>"), where `what` is the key
    of a noun phrase, formatted with `fields`.
    """
    if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Iterable):
        return CheckResult(False, _say(
            lang, "common.not_a_list", what=_say(lang, what, **fields), type=type(answer).__name__
        ))
    return None


def _as_string_list(answer: Any, lang: str | None, what: str) -> list[str] | CheckResult:
    """`answer` as a list of strings, or a failed CheckResult explaining the expected shape.

    `what` is the key of the noun phrase for the items ("labels"), as for `_not_a_list`.
    """
    refused = _not_a_list(answer, lang, "common.strings_of", what=_say(lang, what))
    if refused is not None:
        return refused
    items = list(answer)
    bad = [item for item in items if not isinstance(item, str)]
    if bad:
        return CheckResult(False, _say(
            lang, "common.item_not_a_string", item=bad[0], type=type(bad[0]).__name__
        ))
    return items


def _check_tags(items: list[str], *, lang: str | None, text: str,
                offsets: Sequence[tuple[int, int]], expected: Sequence[str],
                labels: Iterable[str], spans: int, keys: Mapping[str, str]) -> CheckResult:
    """Compare a learner's BIOES tags (already a list of strings) with `expected`.

    `offsets` locate each token in `text`; `labels` are the allowed entity labels; `spans`
    is the number of gold spans (for the success message). `keys` name the chapter's
    messages: ``not_a_tag``, ``wrong_count``, ``tags_correct``, ``token_outside``,
    ``token_inside``, ``wrong_label``, ``wrong_prefix``, and optionally ``space_outside`` and
    ``space_inside`` (a hint for a token that is only whitespace). Reports, in this order: a
    string that is not a tag; a wrong number of tags; the first wrong token, saying whether
    it should be tagged at all, or whether its label or its position prefix is wrong.
    """
    from piilab.bioes import OUTSIDE, PREFIXES

    allowed = set(labels)

    def is_tag(tag: str) -> bool:
        prefix, _, label = tag.partition("-")
        return tag == OUTSIDE or (prefix in PREFIXES and label in allowed)

    bad = [item for item in items if not is_tag(item)]
    if bad:
        return CheckResult(False, _say(lang, keys["not_a_tag"], item=bad[0]))
    if len(items) != len(expected):
        return CheckResult(False, _say(
            lang, keys["wrong_count"], tags=len(items), tokens=len(expected)))
    wrong = [i for i, (got, want) in enumerate(zip(items, expected, strict=True)) if got != want]
    if not wrong:
        return CheckResult(True, _say(
            lang, keys["tags_correct"], tags=len(expected),
            inside=sum(t != OUTSIDE for t in expected), spans=spans))
    index = wrong[0]
    got, want = items[index], expected[index]
    start, end = offsets[index]
    token = text[start:end]
    if want == OUTSIDE or got == OUTSIDE:
        where = "outside" if want == OUTSIDE else "inside"
        if token.isspace() and f"space_{where}" in keys:
            return CheckResult(False, _say(lang, keys[f"space_{where}"], index=index,
                                           wrong=len(wrong)))
        key = keys[f"token_{where}"]
    elif got[2:] != want[2:]:
        key = keys["wrong_label"]
    else:
        key = keys["wrong_prefix"]
    return CheckResult(False, _say(lang, key, index=index, token=token, wrong=len(wrong)))
