"""Chapter 08's checker: BIOES tags written by hand (`piilab.course.exercises.ch08`)."""

from __future__ import annotations

import pytest

from piilab.bioes import bioes_to_spans, spans_to_bioes
from piilab.course.exercises.ch08 import TAG_SPANS, TAG_TEXT, check_bioes_tags, tag_offsets

RIGHT = spans_to_bioes(tag_offsets(), TAG_SPANS)


def _both(answer):
    return check_bioes_tags(answer, lang="en"), check_bioes_tags(answer, lang="ja")


def test_the_exercise_spans_are_aligned_and_use_every_prefix():
    assert bioes_to_spans(tag_offsets(), RIGHT) == sorted(TAG_SPANS)
    assert {tag[0] for tag in RIGHT} == {"O", "B", "I", "E", "S"}
    assert [TAG_TEXT[s:e] for s, e, _ in TAG_SPANS] == [
        "Mom", "Jo Park", "555-0142", "jo.park@example.com"]


def test_the_right_tags_pass_in_both_languages():
    en, ja = _both(list(RIGHT))
    assert en and ja
    assert str(en).startswith("✓ correct") and str(ja).startswith("✓ 正解です")
    assert check_bioes_tags(tuple(RIGHT))


def _with(index, tag):
    answer = list(RIGHT)
    answer[index] = tag
    return answer


def _index(tag):
    return RIGHT.index(tag)


@pytest.mark.parametrize(
    ("answer", "en_part", "ja_part"),
    [
        ("O O O", "expected a list of tags", "のリストを渡してください"),
        ([1, 2], "must be a string", "文字列"),
        (["O"] * 3, "3 tags for", "タグが 3 個"),
        (_with(0, "B-NAME"), "'B-NAME' is not a tag", "タグではありません"),
        (_with(0, "b-PERSON"), "is not a tag", "タグではありません"),
        (_with(0, "S-PERSON"), "token 0 ('Dear') is not inside any span", "どのスパンにも"),
        (_with(_index("S-REL"), "O"), "it needs a tag", "タグが必要"),
        (_with(_index("S-REL"), "S-PERSON"), "wrong label", "ラベルが違います"),
        (_with(_index("S-REL"), "B-REL"), "wrong prefix", "接頭辞が違います"),
        (_with(_index("E-PERSON"), "I-PERSON"), "wrong prefix", "接頭辞が違います"),
    ],
)
def test_wrong_answers_say_what_is_wrong(answer, en_part, ja_part):
    en, ja = _both(answer)
    assert not en and not ja
    assert en_part in en.message
    assert ja_part in ja.message


def test_messages_name_the_first_wrong_token_and_count_the_rest_without_the_solution():
    answer = ["O"] * len(RIGHT)
    en, ja = _both(answer)
    first = next(i for i, tag in enumerate(RIGHT) if tag != "O")
    wrong = sum(tag != "O" for tag in RIGHT)
    assert f"token {first} " in en.message and f"({wrong} wrong tag(s) in all)" in en.message
    assert f"誤りは全部で {wrong} 個" in ja.message
    for message in (en.message, ja.message):
        assert not any(tag in message for tag in set(RIGHT) - {"O"})
