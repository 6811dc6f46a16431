"""Checkers for chapter 03 ("Deterministic tokenization"): matching, masking, restoring.

Three exercises of the chapter are checked here:

- `check_match_answers`: for each case of `MATCH_CASES` (a value, its type and a source), does
  the value match the source under the rules of `piilab.matching`?
- `check_masked_text`: predict, by hand, what `piilab.mask_text` makes of `MASK_SOURCE` with
  `MASK_CANDIDATES`.
- `check_restore_function`: write your own restore function; the checker runs it on the cases
  of `restore_cases()` (token-like values, unknown tokens, backslashes, ...).

Every expected answer is computed with `piilab` itself (`has_match`, `mask_text`), so the
checkers can never disagree with the library the chapter teaches. Messages come in English and
Japanese (`_say`), say what is wrong and which rule to reread, and do not print the answer.

Deliberately not here: grading, storing answers, timing the learner's code.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from piilab.exercises import CheckResult, _say
from piilab.matching import has_match
from piilab.tokenization import TOKEN_PATTERN, mask_text

__all__ = [
    "MASK_CANDIDATES",
    "MASK_SOURCE",
    "MATCH_CASES",
    "MatchCase",
    "RestoreCase",
    "check_masked_text",
    "check_match_answers",
    "check_restore_function",
    "restore_cases",
]


# --------------------------------------------------------------------------------------------
# Exercise: match or no match?
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchCase:
    """One question of the matching exercise: does `value` (typed `label`) match `source`?

    `topic` names the rule of SPEC section 4 that decides the case (a key of `_TOPICS`).
    """

    id: str
    label: str
    value: str
    source: str
    topic: str


#: The cases of the matching exercise, in the order the chapter prints them.
MATCH_CASES: tuple[MatchCase, ...] = (
    MatchCase("spaced-name", "PERSON", "김가상", "담당자: 김 가 상", "person"),
    MatchCase("mixed-joiners", "PERSON", "김가상", "담당자: 김 가\t상", "person"),
    MatchCase("long-name", "PERSON", "Alexander", "signed: A l e x a n d e r", "person"),
    MatchCase("phone-spaces", "PHONE", "010-0123-4567", "연락처 010 0123 4567", "numeric"),
    MatchCase("four-separators", "PHONE", "010-0123-4567", "연락처 010 -- 0123 -- 4567",
              "numeric"),
    MatchCase("inside-a-number", "ACCOUNT", "0123", "주문번호 9012345", "boundary"),
    MatchCase("phone-group", "ACCOUNT", "0123", "연락처 010-0123-4567", "boundary"),
    MatchCase("alias", "ACCOUNT", "acct-0123", "계좌 0123", "letters"),
    MatchCase("fullwidth", "PHONE", "010-0123-4567", "연락처 ０１０-０１２３-４５６７",
              "fullwidth"),
)

_TOPICS: dict[str, dict[str, str]] = {
    "person": {
        "en": "PERSON variants (2-6 characters, one joiner used throughout)",
        "ja": "PERSON の変形(2〜6 文字、区切りは全体で同じ 1 種類)",
    },
    "numeric": {
        "en": "numeric variants (same digits, at most 3 separators between two digits)",
        "ja": "数値の変形(同じ数字の並び、数字と数字のあいだの区切りは 3 文字まで)",
    },
    "boundary": {
        "en": "numeric boundaries (look at the character just before and just after)",
        "ja": "数値の境界(直前と直後の 1 文字を見る)",
    },
    "letters": {
        "en": "values with letters (which values get numeric variants at all?)",
        "ja": "文字を含む値(そもそも数値の変形を持つのはどんな値か)",
    },
    "fullwidth": {
        "en": "what counts as a digit",
        "ja": "何を数字とみなすか",
    },
}


def _expected_matches() -> dict[str, bool]:
    """The right answers, computed by `piilab.matching.has_match` (NFC, trimmed values)."""
    answers = {}
    for case in MATCH_CASES:
        source = unicodedata.normalize("NFC", case.source)
        value = unicodedata.normalize("NFC", case.value).strip()
        answers[case.id] = has_match(source, case.label, value)
    return answers


def check_match_answers(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 03, matching exercise: `answer` maps every case id of `MATCH_CASES` to a bool.

    Reports a wrong shape, unknown or missing ids and non-bool values first; then how many
    answers are wrong and which rules to reread, without naming the wrong cases (with yes/no
    answers, naming a wrong case would give its answer away).
    """
    if not isinstance(answer, Mapping):
        return CheckResult(False, _say(
            lang,
            en=f"expected a dict {{case id: True or False}}, got {type(answer).__name__}",
            ja=f"{{ケースの id: True または False}} の dict を期待していますが、"
            f"{type(answer).__name__} が渡されました",
        ))
    ids = [case.id for case in MATCH_CASES]
    unknown = [key for key in answer if key not in ids]
    if unknown:
        return CheckResult(False, _say(
            lang,
            en=f"{unknown[0]!r} is not a case id; the ids are {', '.join(ids)}",
            ja=f"{unknown[0]!r} はケースの id ではありません。id は {', '.join(ids)} です",
        ))
    missing = [key for key in ids if key not in answer]
    if missing:
        return CheckResult(False, _say(
            lang,
            en=f"{len(missing)} case(s) have no answer yet: {', '.join(missing)}",
            ja=f"まだ答えていないケースが {len(missing)} つあります: {', '.join(missing)}",
        ))
    not_bool = [key for key in ids if not isinstance(answer[key], bool)]
    if not_bool:
        return CheckResult(False, _say(
            lang,
            en=f"answer True or False for each case; {not_bool[0]!r} has "
            f"{answer[not_bool[0]]!r}",
            ja=f"各ケースには True か False で答えてください。{not_bool[0]!r} の答えが "
            f"{answer[not_bool[0]]!r} になっています",
        ))
    expected = _expected_matches()
    wrong = [case for case in MATCH_CASES if answer[case.id] != expected[case.id]]
    if wrong:
        topics = list(dict.fromkeys(case.topic for case in wrong))
        language = _say(lang, en="en", ja="ja")
        rules = _say(lang, en="; ", ja=" / ").join(_TOPICS[topic][language] for topic in topics)
        return CheckResult(False, _say(
            lang,
            en=f"{len(wrong)} of {len(ids)} answers are wrong; reread the rules on: {rules}",
            ja=f"{len(ids)} 問中 {len(wrong)} 問が違います。次の規則を読み直してください: {rules}",
        ))
    return CheckResult(True, _say(
        lang,
        en=f"all {len(ids)} answers are right",
        ja=f"{len(ids)} 問すべて正解です",
    ))


# --------------------------------------------------------------------------------------------
# Exercise: predict the masked text
# --------------------------------------------------------------------------------------------

#: The document of the prediction exercise (synthetic: a 555-01XX number, example.com).
MASK_SOURCE = (
    "[PHONE_1] is the old number. Call 이가상 on 555-0142 or 555 0142, not 1555-0142. "
    "이 가 상 replied from lee@example.com."
)

#: What a model listed for `MASK_SOURCE`. One row is a mistake: a spelling of the phone
#: number predicted as an account number.
MASK_CANDIDATES: tuple[tuple[str, str], ...] = (
    ("PERSON", "이가상"),
    ("PHONE", "555-0142"),
    ("ACCOUNT", "555 0142"),
    ("EMAIL", "lee@example.com"),
)

_PLACEHOLDER = "\x00"  # stands for a token in a skeleton (no text contains it)


def _skeleton(text: str) -> str:
    """`text` with every token-like `[TYPE_n]` replaced by one placeholder character."""
    return TOKEN_PATTERN.sub(_PLACEHOLDER, text)


def _text_before(text: str, skeleton_index: int) -> str:
    """The part of `text` whose skeleton is `_skeleton(text)[:skeleton_index]`."""
    position = 0
    remaining = skeleton_index
    for match in TOKEN_PATTERN.finditer(text):
        gap = match.start() - position
        if remaining <= gap:
            break
        remaining -= gap + 1
        position = match.end()
        if remaining == 0:
            return text[:position]
    return text[: position + remaining]


def _context(text: str, width: int = 24) -> str:
    """The end of `text` (about `width` characters, cut after a space where possible)."""
    if len(text) <= width:
        return text
    tail = text[-width:]
    space = tail.find(" ")
    if 0 <= space < len(tail) - 1:
        tail = tail[space + 1 :]
    return "…" + tail


def check_masked_text(
    answer: Any,
    source: str = MASK_SOURCE,
    candidates: Any = MASK_CANDIDATES,
    *,
    lang: str | None = None,
) -> CheckResult:
    """Compare a hand-written prediction with `mask_text(source, candidates).masked_text`.

    The diagnosis looks at the text between tokens first (is something left visible that the
    masker replaces, or masked that it leaves alone?), then at the tokens one by one (type,
    number, names that already occur in the source). It quotes only text that the learner's
    answer and the masked text share, never the part still to be found.
    """
    if not isinstance(answer, str):
        return CheckResult(False, _say(
            lang,
            en=f"expected the masked text as a string, got {type(answer).__name__}",
            ja=f"マスク済みテキストを文字列で期待していますが、{type(answer).__name__} "
            "が渡されました",
        ))
    if not answer.strip():
        return CheckResult(False, _say(
            lang,
            en="your answer is empty: write the whole masked text, from the first character "
            "to the last",
            ja="答えが空です。マスク済みテキストを最初の文字から最後の文字まで書いてください",
        ))
    expected = mask_text(source, candidates).masked_text
    answer = unicodedata.normalize("NFC", answer)
    if answer == expected:
        return CheckResult(True, _say(
            lang,
            en="correct: that is exactly what mask_text produces",
            ja="正解です。mask_text の出力とまったく同じです",
        ))
    if answer.strip() == expected:
        return CheckResult(False, _say(
            lang,
            en="almost: remove the extra whitespace at the start or end",
            ja="あと少しです。先頭か末尾の余分な空白を取り除いてください",
        ))

    # 1. The text between tokens.
    mine, theirs = _skeleton(answer), _skeleton(expected)
    if mine != theirs:
        index = next(
            (i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b),
            min(len(mine), len(theirs)),
        )
        before = _text_before(answer, index)
        shared = repr(_context(before)) if before else None
        after_en = f"after {shared}" if shared else "at the very start"
        after_ja = f"{shared} の直後" if shared else "冒頭"
        if index == len(mine):
            return CheckResult(False, _say(
                lang,
                en=f"your text stops too early: the masked text goes on {after_en}",
                ja=f"テキストが途中で終わっています。{after_ja}にも続きがあります",
            ))
        if index == len(theirs):
            return CheckResult(False, _say(
                lang,
                en=f"your text is too long: the masked text ends with {shared}",
                ja=f"テキストが長すぎます。マスク済みテキストは {shared} で終わります",
            ))
        if theirs[index] == _PLACEHOLDER:
            return CheckResult(False, _say(
                lang,
                en=f"{after_en} the masker puts a token, but your text shows the source "
                "characters: which rule (variant, literal) makes them a match?",
                ja=f"{after_ja}にはトークンが入るはずですが、提出された答えでは原文の"
                "文字が見えたままです。どの規則(変形、そのままの一致)で一致するのか考えて"
                "みてください",
            ))
        if mine[index] == _PLACEHOLDER:
            return CheckResult(False, _say(
                lang,
                en=f"{after_en} you put a token, but the masker leaves the source text "
                "there as it is: check the numeric boundaries, and remember that text that "
                "merely looks like a token is not a candidate",
                ja=f"{after_ja}にトークンを置いていますが、マスキングはそこの原文を"
                "そのまま残します。数値の境界を確かめてください。また、トークンのように見える"
                "だけの文字列は候補ではありません",
            ))
        return CheckResult(False, _say(
            lang,
            en=f"{after_en} your text differs from the source text: copy the text "
            "between the tokens exactly",
            ja=f"{after_ja}で、原文と文字が食い違っています。トークンのあいだの文字は"
            "原文どおりに写してください",
        ))

    # 2. Same places, so the same number of tokens: compare them one by one.
    in_source = set(TOKEN_PATTERN.findall(unicodedata.normalize("NFC", source)))
    mine_tokens, their_tokens = TOKEN_PATTERN.findall(answer), TOKEN_PATTERN.findall(expected)
    for number, (got, want) in enumerate(zip(mine_tokens, their_tokens, strict=True), start=1):
        if got == want:
            continue
        if want in in_source and got not in in_source:
            return CheckResult(False, _say(
                lang,
                en=f"token #{number} of your text: at this place the source already holds a "
                "token-like marker, and the masker leaves it as it is",
                ja=f"提出された答えの {number} 番目のトークン: この位置には原文にもともと"
                "トークンのような文字列があり、マスキングはそれをそのまま残します",
            ))
        if got in in_source:
            return CheckResult(False, _say(
                lang,
                en=f"token #{number} of your text, {got}, already occurs in the source: the "
                "masker never uses such a name for a value, it skips to the next number",
                ja=f"提出された答えの {number} 番目のトークン {got} は原文にすでに現れています。"
                "マスキングはそういう名前を値には使わず、次の番号に進みます",
            ))
        if got[1 : got.rindex("_")] != want[1 : want.rindex("_")]:
            return CheckResult(False, _say(
                lang,
                en=f"token #{number} of your text has the wrong type: when several rows can "
                "produce one spelling, a literal prediction beats a variant of another "
                "prediction, and then the order of LABELS decides",
                ja=f"提出された答えの {number} 番目のトークンは型が違います。ひとつの綴りを"
                "複数の行が生み出せるときは、そのままの予測が別の予測の変形に勝ち、"
                "その次に LABELS の順序で決まります",
            ))
        return CheckResult(False, _say(
            lang,
            en=f"token #{number} of your text has the right type but the wrong number: tokens "
            "are numbered per type in source order, one number per distinct spelling, and "
            "names that already occur in the source are skipped",
            ja=f"提出された答えの {number} 番目のトークンは、型は合っていますが番号が違います。"
            "番号は型ごとに原文の順に振られ、異なる綴りごとに 1 つ、原文にすでにある名前は"
            "飛ばされます",
        ))
    # Unreachable in practice: equal skeletons and equal tokens make equal texts.
    return CheckResult(False, _say(
        lang, en="not quite: compare again", ja="もう一度比べてみてください"
    ))


# --------------------------------------------------------------------------------------------
# Exercise: write a restore function
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RestoreCase:
    """One test of a restore function: `restore(masked, mapping)` must return `expected`."""

    id: str
    masked: str
    mapping: dict[str, str]
    expected: str
    hint: dict[str, str]


def restore_cases() -> tuple[RestoreCase, ...]:
    """The cases `check_restore_function` runs, simplest first (built with `mask_text`)."""
    cases = []
    for case_id, source, candidates, hint in (
        (
            "worked-example",
            "김가상 / 김 가 상 / [PERSON_1]",
            [("PERSON", "김가상")],
            {
                "en": "replace each known token by its value; leave everything else as it is",
                "ja": "対応表にあるトークンを値に置き換え、それ以外はそのまま残します",
            },
        ),
        (
            "several-types",
            "고객 김가상 님(010-0123-4567), 메일 kim@example.com, 다시 김가상 님",
            [("PERSON", "김가상"), ("PHONE", "010-0123-4567"), ("EMAIL", "kim@example.com")],
            {
                "en": "a token may occur several times; every occurrence comes back",
                "ja": "同じトークンが何度も出てくることがあります。すべての出現箇所を戻します",
            },
        ),
    ):
        result = mask_text(source, candidates)
        cases.append(RestoreCase(case_id, result.masked_text, dict(result.mapping),
                                 unicodedata.normalize("NFC", source), hint))
    cases += [
        RestoreCase(
            "unknown-tokens",
            "TODO: call [PERSON_1]; ask [PERSON_9] and [FOO_2] later.",
            {"[PERSON_1]": "김가상"},
            "TODO: call 김가상; ask [PERSON_9] and [FOO_2] later.",
            {
                "en": "a token that is not in the mapping (a downstream service may invent one) "
                "stays as it is",
                "ja": "対応表にないトークン(下流のサービスが作り出すこともあります)は"
                "そのまま残します",
            },
        ),
        RestoreCase(
            "adjacent-tokens",
            "[[PERSON_1]][PERSON_2]",
            {"[PERSON_1]": "김가상", "[PERSON_2]": "이가상"},
            "[김가상]이가상",
            {
                "en": "tokens can touch each other and other brackets; a token is exactly "
                "'[' + TYPE + '_' + number + ']'",
                "ja": "トークンは互いに、またほかの角かっこと隣り合うことがあります。トークンは"
                "ちょうど '[' + 型 + '_' + 番号 + ']' の形です",
            },
        ),
        RestoreCase(
            "one-pass",
            "[PERSON_1] / [PERSON_2]",
            {"[PERSON_1]": "[PERSON_2]", "[PERSON_2]": "김가상"},
            "[PERSON_2] / 김가상",
            {
                "en": "restore in one pass: a value that looks like a token is final and is "
                "never read again as a token",
                "ja": "復元は 1 回の走査で行います。トークンのように見える値もそれで確定で、"
                "もう一度トークンとして読まれることはありません",
            },
        ),
        RestoreCase(
            "backslash",
            "mail [EMAIL_1], memo [PERSON_1]",
            {"[EMAIL_1]": "kim\\1@example.com", "[PERSON_1]": "김\\g<0>가상"},
            "mail kim\\1@example.com, memo 김\\g<0>가상",
            {
                "en": "values are plain text: with re.sub, pass a function as the replacement, "
                "not a string (a string replacement reads backslashes)",
                "ja": "値はただのテキストです。re.sub を使うなら置換には文字列ではなく関数を"
                "渡します(文字列の置換ではバックスラッシュが解釈されます)",
            },
        ),
        RestoreCase(
            "empty-mapping",
            "nothing to restore in [PERSON_1]",
            {},
            "nothing to restore in [PERSON_1]",
            {
                "en": "with an empty mapping the text comes back unchanged",
                "ja": "対応表が空なら、テキストはそのまま返ります",
            },
        ),
    ]
    return tuple(cases)


def check_restore_function(
    restore: Callable[[str, dict[str, str]], str], *, lang: str | None = None
) -> CheckResult:
    """Run `restore(masked_text, mapping)` on every case of `restore_cases()`.

    Stops at the first failing case and names it, with its input, what came back, what was
    expected and the rule behind it. Also fails when `restore` raises, returns something other
    than a string, or changes the mapping it was given.
    """
    if not callable(restore):
        return CheckResult(False, _say(
            lang,
            en=f"expected a function restore(masked_text, mapping), got "
            f"{type(restore).__name__}",
            ja=f"関数 restore(masked_text, mapping) を期待していますが、"
            f"{type(restore).__name__} が渡されました",
        ))
    cases = restore_cases()
    for number, case in enumerate(cases, start=1):
        mapping = dict(case.mapping)
        where_en = f"case {number} ({case.id}): restore({case.masked!r}, {case.mapping!r})"
        where_ja = f"ケース {number} ({case.id}): restore({case.masked!r}, {case.mapping!r})"
        try:
            got = restore(case.masked, mapping)
        except Exception as exc:  # the learner's code: report any error, do not crash
            return CheckResult(False, _say(
                lang,
                en=f"{where_en} raised {type(exc).__name__}: {exc}",
                ja=f"{where_ja} で {type(exc).__name__} が発生しました: {exc}",
            ))
        if mapping != case.mapping:
            return CheckResult(False, _say(
                lang,
                en=f"{where_en} changed the mapping: a restore function only reads it",
                ja=f"{where_ja} が対応表を書き換えました。復元の関数は対応表を読むだけにします",
            ))
        if not isinstance(got, str):
            return CheckResult(False, _say(
                lang,
                en=f"{where_en} returned {type(got).__name__}, not a string",
                ja=f"{where_ja} の戻り値が文字列ではなく {type(got).__name__} です",
            ))
        if got != case.expected:
            return CheckResult(False, _say(
                lang,
                en=f"{where_en} returned {got!r}, expected {case.expected!r}; "
                f"{case.hint['en']}",
                ja=f"{where_ja} の結果は {got!r} ですが、期待される結果は {case.expected!r} "
                f"です。{case.hint['ja']}",
            ))
    return CheckResult(True, _say(
        lang,
        en=f"all {len(cases)} cases pass",
        ja=f"{len(cases)} ケースすべて合格です",
    ))
