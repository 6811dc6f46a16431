"""The committed quizzes do not give their answers away by form (book/quizzes/).

A learner who has not read the chapter should not be able to score by picking the longest
option, or the option at one position. Per chapter and per language:

- the keyed option is the strictly longest option in at most 40% of the questions, length
  measured as the text a reader sees (markup removed, entities decoded), and the strictly
  shortest in at most 40% too (a reverse cue is still a cue);
- no position holds the keyed option in more than half of the questions;
- wording gives nothing away: for each family of cue words (hedges such as "only" or だけ,
  absolutes such as "never" or 決して), picking the one option of a question that uses a word of
  the family finds the keyed option in at most half (rounded up) of the questions where that
  strategy can be used.

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
#: Words a test-wise reader looks for, per language and family (lowercased text).
CUE_WORDS = {
    "en": {
        "hedge": r"\b(only|may|can|usually|most|some|nothing more)\b",
        "absolute": r"\b(always|never|every|all|nothing|none|cannot|any)\b",
    },
    "ja": {
        "hedge": r"だけ|ことがある|場合がある|多く|ほとんど",
        "absolute": r"必ず|決して|すべて|常に|どれも|一切|全部|何も",
    },
}
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


def keyed_is_shortest(question: dict) -> bool:
    """True when the correct option is shorter than every other option."""
    lengths = [shown_length(a["answer"]) for a in question["answers"]]
    key = keyed_position(question)
    return all(lengths[key] < n for i, n in enumerate(lengths) if i != key)


def longest_share(quiz: list[dict]) -> float:
    return sum(keyed_is_longest(q) for q in quiz) / len(quiz)


def shortest_share(quiz: list[dict]) -> float:
    return sum(keyed_is_shortest(q) for q in quiz) / len(quiz)


def wording_cue(quiz: list[dict], pattern: str) -> tuple[int, int, list[str]]:
    """(questions where exactly one option matches `pattern`, how many of those keyed it, ids).

    That is what a reader scores by picking the one option with a cue word.
    """
    usable, hits, ids = 0, 0, []
    for question in quiz:
        texts = [html.unescape(re.sub(r"<[^>]+>", "", a["answer"])).lower()
                 for a in question["answers"]]
        matching = [i for i, text in enumerate(texts) if re.search(pattern, text)]
        if len(matching) == 1:
            usable += 1
            if matching[0] == keyed_position(question):
                hits += 1
                ids.append(question["id"])
    return usable, hits, ids


def wording_gives_away(usable: int, hits: int) -> bool:
    return hits > (usable + 1) // 2


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
    reverse = [_question([5, 20, 20], 0) for _ in range(3)] + [_question([20, 9, 5], 1)] * 2
    assert shortest_share(reverse) > MAX_LONGEST_SHARE
    assert shortest_share(fair) <= MAX_LONGEST_SHARE


def _worded(texts: list[str], key: int) -> dict:
    return {"id": f"q{key}", "answers": [{"answer": t, "correct": i == key}
                                         for i, t in enumerate(texts)]}


def test_the_wording_helper_finds_a_word_that_only_keyed_options_use():
    hedge = CUE_WORDS["en"]["hedge"]
    cued = [_worded(["It only moves", "It moves", "It stops"], 0),
            _worded(["It stops", "It only <b>moves</b>", "It moves"], 1),
            _worded(["It stops", "It moves", "It only stays"], 2)]
    assert wording_cue(cued, hedge) == (3, 3, ["q0", "q1", "q2"])
    assert wording_gives_away(3, 3) and wording_gives_away(2, 2)
    assert not wording_gives_away(3, 2) and not wording_gives_away(1, 1)
    shared = [_worded(["It only moves", "It only stops", "It moves"], 0)]  # two options: no cue
    assert wording_cue(shared, hedge) == (0, 0, [])
    absolute_ja = CUE_WORDS["ja"]["absolute"]
    assert wording_cue([_worded(["必ず止まる", "動く"], 1)], absolute_ja) == (1, 0, [])


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
def test_the_keyed_option_is_not_usually_the_shortest(lang, chapter):
    quiz = json.loads((QUIZZES / lang / f"{chapter}.json").read_text(encoding="utf-8"))
    shortest = [q["id"] for q in quiz if keyed_is_shortest(q)]
    assert shortest_share(quiz) <= MAX_LONGEST_SHARE, (
        f"{lang}/{chapter}: the keyed option is the shortest in {len(shortest)} of {len(quiz)} "
        f"questions ({', '.join(shortest)}); give the keyed option the detail the distractors have"
    )


@pytest.mark.parametrize(("lang", "chapter"), FILES)
@pytest.mark.parametrize("family", ["hedge", "absolute"])
def test_cue_words_do_not_point_at_the_keyed_option(lang, chapter, family):
    quiz = json.loads((QUIZZES / lang / f"{chapter}.json").read_text(encoding="utf-8"))
    usable, hits, ids = wording_cue(quiz, CUE_WORDS[lang][family])
    assert not wording_gives_away(usable, hits), (
        f"{lang}/{chapter}: the only option with a {family} word is the keyed one in {hits} of "
        f"{usable} questions ({', '.join(ids)}); word a distractor the same way or reword the key"
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
