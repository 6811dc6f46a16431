"""The committed quizzes do not give their answers away by form (book/quizzes/).

A learner who has not read the chapter should not be able to score by picking the longest
option, or the option at one position. Per chapter and per language:

- the keyed option is the strictly longest option in at most 40% of the questions, length
  measured as the text a reader sees (markup removed, entities decoded);
- no position holds the keyed option in more than half of the questions.

The helpers are tested on small made-up quizzes, so the limits themselves are checked too.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
QUIZZES = REPO / "book" / "quizzes"
MAX_LONGEST_SHARE = 0.40
MAX_POSITION_SHARE = 0.50
FILES = sorted((p.parent.name, p.stem) for p in QUIZZES.glob("*/*.json"))


def shown_length(text: str) -> int:
    """The length of an option as the reader sees it: tags removed, entities decoded."""
    return len(html.unescape(re.sub(r"<[^>]+>", "", text)).strip())


def keyed_position(question: dict) -> int:
    return next(i for i, a in enumerate(question["answers"]) if a["correct"])


def keyed_is_longest(question: dict) -> bool:
    """True when the correct option is longer than every other option."""
    lengths = [shown_length(a["answer"]) for a in question["answers"]]
    key = keyed_position(question)
    return all(lengths[key] > n for i, n in enumerate(lengths) if i != key)


def longest_share(quiz: list[dict]) -> float:
    return sum(keyed_is_longest(q) for q in quiz) / len(quiz)


def position_share(quiz: list[dict]) -> tuple[int, float]:
    """The most frequent keyed position and its share of the questions."""
    position, count = Counter(keyed_position(q) for q in quiz).most_common(1)[0]
    return position, count / len(quiz)


def _question(lengths: list[int], key: int) -> dict:
    return {"answers": [{"answer": "x" * n, "correct": i == key} for i, n in enumerate(lengths)]}


def test_the_helpers_see_markup_as_the_reader_does():
    assert shown_length("<code>TYPE&lt;TAB&gt;VALUE</code>") == len("TYPE<TAB>VALUE")
    assert keyed_is_longest(_question([3, 9, 4], 1))
    assert not keyed_is_longest(_question([9, 9, 4], 1))  # a tie is no cue
    assert not keyed_is_longest(_question([3, 2, 10], 1))


def test_the_limits_reject_a_quiz_that_gives_itself_away():
    cued = [_question([5, 20, 5], 1) for _ in range(4)] + [_question([9, 5, 5], 2)]
    assert longest_share(cued) > MAX_LONGEST_SHARE
    assert position_share(cued) == (1, 0.8)
    fair = [_question([20, 5, 5], 0), _question([5, 20, 5], 2), _question([5, 5, 20], 0),
            _question([9, 9, 9], 1), _question([5, 9, 5], 2)]
    assert longest_share(fair) <= MAX_LONGEST_SHARE
    assert position_share(fair)[1] <= MAX_POSITION_SHARE


@pytest.mark.parametrize(("lang", "chapter"), FILES)
def test_the_keyed_option_is_not_usually_the_longest(lang, chapter):
    quiz = json.loads((QUIZZES / lang / f"{chapter}.json").read_text(encoding="utf-8"))
    longest = [q["id"] for q in quiz if keyed_is_longest(q)]
    assert longest_share(quiz) <= MAX_LONGEST_SHARE, (
        f"{lang}/{chapter}: the keyed option is the longest in {len(longest)} of {len(quiz)} "
        f"questions ({', '.join(longest)}); shorten the keyed option (the feedback can "
        "explain) or give a distractor the same detail"
    )


@pytest.mark.parametrize(("lang", "chapter"), FILES)
def test_the_keyed_position_is_spread(lang, chapter):
    quiz = json.loads((QUIZZES / lang / f"{chapter}.json").read_text(encoding="utf-8"))
    position, share = position_share(quiz)
    assert share <= MAX_POSITION_SHARE, (
        f"{lang}/{chapter}: option {position + 1} is keyed in {share:.0%} of the questions"
    )


def test_every_quiz_is_checked():
    assert {lang for lang, _ in FILES} == {"en", "ja"}
    assert len(FILES) == 2 * len({chapter for _, chapter in FILES})
