"""Chapter 01 ("Platform architecture"): the pipeline's order, and what must be protected."""

from __future__ import annotations

from typing import Any

from piilab.course.ch01 import ARTIFACT_IDS, ARTIFACTS, STAGE_IDS
from piilab.course.exercises import CheckResult, _as_string_list, _say
from piilab.course.lang import page_language


def check_pipeline_order(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 01, exercise 1: the stage ids of `piilab.course.ch01.PIPELINE`, in pipeline order.

    Names the first position that is wrong, so the learner can fix the order step by step.
    """
    items = _as_string_list(answer, lang, "ch01.what_stage_ids")
    if isinstance(items, CheckResult):
        return items
    unknown = [item for item in items if item not in STAGE_IDS]
    if unknown:
        return CheckResult(False, _say(
            lang, "ch01.not_a_stage", item=unknown[0], ids=", ".join(sorted(STAGE_IDS))
        ))
    if sorted(items) != sorted(STAGE_IDS):
        missing = sorted(set(STAGE_IDS) - set(items))
        if missing:
            return CheckResult(False, _say(
                lang, "ch01.stages_missing", count=len(missing), stages=", ".join(missing)
            ))
        return CheckResult(False, _say(lang, "ch01.stage_repeated"))
    for position, (got, want) in enumerate(zip(items, STAGE_IDS, strict=True), start=1):
        if got != want:
            return CheckResult(False, _say(
                lang, "ch01.stage_wrong", right=position - 1, position=position, got=got
            ) if position > 1 else _say(lang, "ch01.stage_not_first", got=got))
    arrow = _say(lang, "ch01.pipeline_separator")
    return CheckResult(True, _say(lang, "ch01.pipeline_correct", pipeline=arrow.join(STAGE_IDS)))


def check_sensitive_artifacts(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 01, exercise 2: the ids of the `piilab.course.ch01.ARTIFACTS` that carry PII values.

    Order does not matter. For the first misclassified artifact the message says why it is
    (or is not) sensitive.
    """
    items = _as_string_list(answer, lang, "ch01.what_artifact_ids")
    if isinstance(items, CheckResult):
        return items
    unknown = [item for item in items if item not in ARTIFACT_IDS]
    if unknown:
        return CheckResult(False, _say(
            lang, "ch01.not_an_artifact", item=unknown[0], ids=", ".join(ARTIFACT_IDS)
        ))
    chosen = set(items)
    language = "ja" if (lang or page_language()) == "ja" else "en"
    for artifact in ARTIFACTS:  # pipeline order: report the earliest mistake
        if artifact.sensitive and artifact.id not in chosen:
            return CheckResult(False, _say(
                lang, "ch01.artifact_sensitive", artifact=artifact.id, why=artifact.why[language]
            ))
        if not artifact.sensitive and artifact.id in chosen:
            return CheckResult(False, _say(
                lang, "ch01.artifact_not_sensitive", artifact=artifact.id,
                why=artifact.why[language],
            ))
    safe = _say(lang, "ch01.artifact_joiner").join(
        a.title[language] for a in ARTIFACTS if not a.sensitive
    )
    return CheckResult(True, _say(lang, "ch01.artifacts_correct", safe=safe))
