"""Checkers for chapter 08 ("Token classification (BIOES)"): tag a sentence by hand.

- `check_bioes_tags(answer)`: the learner writes the BIOES tag of every token of `TAG_TEXT`
  (tokens given by `tag_offsets`) for the spans `TAG_SPANS`. The expected tags are computed
  with `piilab.bioes.spans_to_bioes`, the projection the chapter teaches.

It follows the pattern of `piilab.exercises`: validate the shape of the answer first, then
say what is wrong, in the reader's language, without printing the solution (the message
names the first wrong token and what kind of mistake it is, never the right tag). All data
here is synthetic (an ``example.com`` address, a ``555-01XX`` phone number).
"""

from __future__ import annotations

import re
from typing import Any

from piilab.bioes import OUTSIDE, PREFIXES, spans_to_bioes
from piilab.exercises import CheckResult, _as_string_list, _say
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


def _expected() -> list[str]:
    return spans_to_bioes(tag_offsets(), TAG_SPANS)


def _is_tag(tag: str) -> bool:
    if tag == OUTSIDE:
        return True
    prefix, _, label = tag.partition("-")
    return prefix in PREFIXES and label in LABELS


def check_bioes_tags(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 08, exercise 1: one BIOES tag per token of `TAG_TEXT`, in token order.

    Reports, in this order: a wrong shape; a string that is not a tag; a wrong number of
    tags; then the first wrong token, saying whether it should be tagged at all, whether its
    label or its position prefix (B, I, E, S) is wrong.
    """
    items = _as_string_list(answer, lang, "tags", "タグ")
    if isinstance(items, CheckResult):
        return items
    bad = [item for item in items if not _is_tag(item)]
    if bad:
        return CheckResult(False, _say(
            lang,
            en=f"{bad[0]!r} is not a tag: write 'O' or a prefix B, I, E or S, a hyphen and one "
            "of the nine labels (e.g. 'B-PERSON')",
            ja=f"{bad[0]!r} はタグではありません。'O' か、接頭辞 B・I・E・S とハイフンと "
            "9 つのラベルのどれか(例: 'B-PERSON')を書いてください",
        ))
    offsets = tag_offsets()
    expected = _expected()
    if len(items) != len(expected):
        return CheckResult(False, _say(
            lang,
            en=f"{len(items)} tags for {len(expected)} tokens: write exactly one tag per token",
            ja=f"トークンは {len(expected)} 個ですが、タグが {len(items)} 個あります。"
            "トークンごとにちょうど 1 つのタグを書いてください",
        ))
    wrong = [i for i, (got, want) in enumerate(zip(items, expected, strict=True)) if got != want]
    if not wrong:
        return CheckResult(True, _say(
            lang,
            en=f"correct: {len(expected)} tags, {sum(t != OUTSIDE for t in expected)} of them "
            f"inside {len(TAG_SPANS)} spans",
            ja=f"正解です: {len(expected)} 個のタグのうち {sum(t != OUTSIDE for t in expected)} "
            f"個が {len(TAG_SPANS)} つのスパンの中にあります",
        ))
    index = wrong[0]
    got, want = items[index], expected[index]
    start, end = offsets[index]
    token = TAG_TEXT[start:end]
    where_en = f"token {index} ({token!r})"
    where_ja = f"トークン {index}({token!r})"
    count_en = f" ({len(wrong)} wrong tag(s) in all)"
    count_ja = f"(誤りは全部で {len(wrong)} 個)"
    if want == OUTSIDE:
        message = _say(lang, en=f"{where_en} is not inside any span{count_en}",
                       ja=f"{where_ja} はどのスパンにも含まれません{count_ja}")
    elif got == OUTSIDE:
        message = _say(lang, en=f"{where_en} lies inside a span: it needs a tag{count_en}",
                       ja=f"{where_ja} はスパンの中にあるので、タグが必要です{count_ja}")
    elif got[2:] != want[2:]:
        message = _say(lang, en=f"{where_en} has the wrong label: which span covers it?{count_en}",
                       ja=f"{where_ja} のラベルが違います。どのスパンに含まれていますか?"
                       f"{count_ja}")
    else:
        message = _say(
            lang,
            en=f"{where_en} has the right label but the wrong prefix: is it the first, an inner "
            f"or the last token of its span, or the whole span on its own?{count_en}",
            ja=f"{where_ja} はラベルは合っていますが接頭辞が違います。スパンの最初・途中・"
            f"最後のトークンですか、それとも 1 トークンだけのスパンですか?{count_ja}",
        )
    return CheckResult(False, message)
