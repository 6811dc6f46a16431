"""Checkers for the book's hands-on exercises: one small function per auto-checked exercise.

A learner writes an answer in a notebook cell and calls the checker; it returns a
`CheckResult` whose `ok` says whether the answer is right and whose `message` says what is
wrong, in the reader's language, without simply printing the solution. The result shows
itself as one line in a notebook, and `bool(result)` is `result.ok`.

Checkers are grouped by chapter. To add one for a later chapter: write a function named
`check_<what>(answer, *, lang=None)` that validates the shape of `answer` first, compares
it with the expected value (kept next to the checker, or computed from `piilab`), and builds
every message with `_say(lang, en=..., ja=...)`; then add a test in `tests/test_quiz.py`
(right answer, typical wrong answers).

Deliberately not here: grading, storing answers, or anything a chapter should compute itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from piilab.book import ARTIFACT_IDS, ARTIFACTS, STAGE_IDS, page_language
from piilab.labels import LABELS, is_label, normalize_label


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


def _say(lang: str | None, *, en: str, ja: str) -> str:
    """Pick the message for `lang` (default: the running notebook's language)."""
    return ja if (lang or page_language()) == "ja" else en


def _not_a_list(answer: Any, lang: str | None, what_en: str, what_ja: str) -> CheckResult | None:
    """A failed CheckResult when `answer` is not a list-like answer, else None.

    A string, bytes or a mapping is refused as a whole rather than iterated. The
    message reads "expected a list of <what_en>, got <type>" (Japanese: `what_ja`).
    """
    if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Iterable):
        return CheckResult(False, _say(
            lang,
            en=f"expected a list of {what_en}, got {type(answer).__name__}",
            ja=f"{what_ja}のリストを期待していますが、{type(answer).__name__} が渡されました",
        ))
    return None


def _as_string_list(
    answer: Any, lang: str | None, what_en: str, what_ja: str
) -> list[str] | CheckResult:
    """`answer` as a list of strings, or a failed CheckResult explaining the expected shape."""
    refused = _not_a_list(answer, lang, f"{what_en} (strings)", f"{what_ja}(文字列)")
    if refused is not None:
        return refused
    items = list(answer)
    bad = [item for item in items if not isinstance(item, str)]
    if bad:
        return CheckResult(False, _say(
            lang,
            en=f"every item must be a string; {bad[0]!r} is a {type(bad[0]).__name__}",
            ja=f"要素はすべて文字列にしてください。{bad[0]!r} は {type(bad[0]).__name__} です",
        ))
    return items


# --------------------------------------------------------------------------------------------
# Chapter 00: Welcome
# --------------------------------------------------------------------------------------------

#: The message of chapter 00's first exercise (synthetic: example.com, a 555-01XX number).
WELCOME_MESSAGE = (
    "Hi, this is Jamie Park (jamie.park@example.com). Please call me on 555-0142 "
    "about my mother's account; her birthday is 1958-11-03."
)
_WELCOME_LABELS = ("EMAIL", "PHONE", "DOB", "PERSON", "REL")


def check_label_list(
    answer: Any, expected: Iterable[str], *, ordered: bool = True, lang: str | None = None
) -> CheckResult:
    """Compare a learner's list of labels with `expected`.

    Reports, in this order: a wrong shape; strings that are not labels (with the normalized
    spelling when only case or spaces are off); repeated labels; missing labels (how many);
    extra labels (which); and, with `ordered`, a wrong order (labels go in the type-priority
    order of `piilab.LABELS`).
    """
    items = _as_string_list(answer, lang, "labels", "ラベル")
    if isinstance(items, CheckResult):
        return items
    expected = list(expected)
    not_labels = [item for item in items if item not in LABELS]
    if not_labels:
        item = not_labels[0]
        if is_label(item):
            return CheckResult(False, _say(
                lang,
                en=f"{item!r} is written {normalize_label(item)!r} in piilab.LABELS "
                "(labels are uppercase, without spaces)",
                ja=f"{item!r} は piilab.LABELS では {normalize_label(item)!r} と書きます"
                "(ラベルは大文字で、空白を含みません)",
            ))
        return CheckResult(False, _say(
            lang,
            en=f"{item!r} is not one of the nine labels; see piilab.LABELS",
            ja=f"{item!r} は 9 つのラベルのどれでもありません。piilab.LABELS を見てください",
        ))
    repeated = sorted({item for item in items if items.count(item) > 1}, key=LABELS.index)
    if repeated:
        return CheckResult(False, _say(
            lang,
            en=f"{repeated[0]} appears more than once: list each label once",
            ja=f"{repeated[0]} が 2 回以上出てきます。各ラベルは 1 回だけ書いてください",
        ))
    missing = [label for label in expected if label not in items]
    extra = [label for label in items if label not in expected]
    if extra:
        return CheckResult(False, _say(
            lang,
            en=f"{', '.join(extra)}: nothing of that kind is in the text",
            ja=f"{', '.join(extra)}: その種類の PII はテキストにありません",
        ))
    if missing:
        return CheckResult(False, _say(
            lang,
            en=f"{len(missing)} label(s) missing: read the text again, word by word",
            ja=f"ラベルが {len(missing)} つ足りません。"
            "テキストをもう一度、語ごとに読んでみてください",
        ))
    if ordered and items != expected:
        return CheckResult(False, _say(
            lang,
            en="the right labels, in the wrong order: sort them in the order of piilab.LABELS "
            "(type priority)",
            ja="ラベルは合っていますが順序が違います。"
            "piilab.LABELS の順(型の優先順位)に並べてください",
        ))
    return CheckResult(True, _say(
        lang,
        en=f"correct: {', '.join(expected)}",
        ja=f"正解です: {', '.join(expected)}",
    ))


def check_welcome_labels(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 00, exercise 1: the labels present in `WELCOME_MESSAGE`, in type-priority order."""
    return check_label_list(answer, _WELCOME_LABELS, ordered=True, lang=lang)


# --------------------------------------------------------------------------------------------
# Chapter 01: Platform architecture
# --------------------------------------------------------------------------------------------


def check_pipeline_order(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 01, exercise 1: the stage ids of `piilab.book.PIPELINE`, in pipeline order.

    Names the first position that is wrong, so the learner can fix the order step by step.
    """
    items = _as_string_list(answer, lang, "stage ids", "段階の id")
    if isinstance(items, CheckResult):
        return items
    unknown = [item for item in items if item not in STAGE_IDS]
    if unknown:
        return CheckResult(False, _say(
            lang,
            en=f"{unknown[0]!r} is not a stage id; the ids are {', '.join(sorted(STAGE_IDS))}",
            ja=f"{unknown[0]!r} は段階の id ではありません。"
            f"id は {', '.join(sorted(STAGE_IDS))} です",
        ))
    if sorted(items) != sorted(STAGE_IDS):
        missing = sorted(set(STAGE_IDS) - set(items))
        if missing:
            return CheckResult(False, _say(
                lang,
                en=f"{len(missing)} stage(s) missing: {', '.join(missing)}",
                ja=f"段階が {len(missing)} つ抜けています: {', '.join(missing)}",
            ))
        return CheckResult(False, _say(
            lang,
            en="a stage appears twice: each stage runs once",
            ja="同じ段階が 2 回出てきます。各段階は 1 回ずつです",
        ))
    for position, (got, want) in enumerate(zip(items, STAGE_IDS, strict=True), start=1):
        if got != want:
            return CheckResult(False, _say(
                lang,
                en=f"the first {position - 1} stage(s) are right; stage {position} is not {got!r}: "
                f"what must exist before {got!r} can run?",
                ja=f"最初の {position - 1} 段階は正しいです。"
                f"{position} 番目は {got!r} ではありません。"
                f"{got!r} を実行する前に何が必要でしょうか?",
            ) if position > 1 else _say(
                lang,
                en=f"{got!r} cannot come first: what does it need as input?",
                ja=f"{got!r} は最初には来られません。入力として何が必要でしょうか?",
            ))
    return CheckResult(True, _say(
        lang,
        en="correct: " + " -> ".join(STAGE_IDS),
        ja="正解です: " + " -> ".join(STAGE_IDS),
    ))


def check_sensitive_artifacts(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 01, exercise 2: the ids of the `piilab.book.ARTIFACTS` that carry PII values.

    Order does not matter. For the first misclassified artifact the message says why it is
    (or is not) sensitive.
    """
    items = _as_string_list(answer, lang, "artifact ids", "成果物の id")
    if isinstance(items, CheckResult):
        return items
    unknown = [item for item in items if item not in ARTIFACT_IDS]
    if unknown:
        return CheckResult(False, _say(
            lang,
            en=f"{unknown[0]!r} is not an artifact id; the ids are {', '.join(ARTIFACT_IDS)}",
            ja=f"{unknown[0]!r} は成果物の id ではありません。id は {', '.join(ARTIFACT_IDS)} です",
        ))
    chosen = set(items)
    language = lang or page_language()
    for artifact in ARTIFACTS:  # pipeline order: report the earliest mistake
        if artifact.sensitive and artifact.id not in chosen:
            return CheckResult(False, _say(
                lang,
                en=f"{artifact.id} is sensitive: {artifact.why['en']}",
                ja=f"{artifact.id} は機密です: {artifact.why['ja']}",
            ))
        if not artifact.sensitive and artifact.id in chosen:
            return CheckResult(False, _say(
                lang,
                en=f"{artifact.id} carries no PII values: {artifact.why['en']}",
                ja=f"{artifact.id} には PII の値は含まれません: {artifact.why['ja']}",
            ))
    safe = [a.title[language] for a in ARTIFACTS if not a.sensitive]
    return CheckResult(True, _say(
        lang,
        en=f"correct: everything except {' and '.join(safe)} must be protected like the source",
        ja=f"正解です: {'と'.join(safe)}以外は、すべて原文と同じように保護が必要です",
    ))
