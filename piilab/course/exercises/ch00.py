"""Chapter 00 ("Welcome"): which labels a short message holds."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from piilab.course.exercises import CheckResult, _as_string_list, _say
from piilab.labels import LABELS, is_label, normalize_label

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
    items = _as_string_list(answer, lang, "ch00.what_labels")
    if isinstance(items, CheckResult):
        return items
    expected = list(expected)
    not_labels = [item for item in items if item not in LABELS]
    if not_labels:
        item = not_labels[0]
        if is_label(item):
            return CheckResult(False, _say(
                lang, "ch00.label_misspelled", item=item, label=normalize_label(item)
            ))
        return CheckResult(False, _say(lang, "ch00.not_a_label", item=item))
    repeated = sorted({item for item in items if items.count(item) > 1}, key=LABELS.index)
    if repeated:
        return CheckResult(False, _say(lang, "ch00.label_repeated", label=repeated[0]))
    missing = [label for label in expected if label not in items]
    extra = [label for label in items if label not in expected]
    if extra:
        return CheckResult(False, _say(lang, "ch00.labels_extra", labels=", ".join(extra)))
    if missing:
        return CheckResult(False, _say(lang, "ch00.labels_missing", count=len(missing)))
    if ordered and items != expected:
        return CheckResult(False, _say(lang, "ch00.labels_wrong_order"))
    return CheckResult(True, _say(lang, "ch00.labels_correct", labels=", ".join(expected)))


def check_welcome_labels(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 00, exercise 1: the labels present in `WELCOME_MESSAGE`, in type-priority order."""
    return check_label_list(answer, _WELCOME_LABELS, ordered=True, lang=lang)


