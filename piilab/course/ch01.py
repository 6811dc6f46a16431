"""Chapter 01 ("Platform architecture") as data: the pipeline's stages and what each one keeps.

`PIPELINE` and `ARTIFACTS` feed the chapter's diagram (`piilab.course.diagram`) and the
answer keys of its exercises (`piilab.course.exercises.ch01`). Their titles and reasons, in both
languages, are page messages (`piilab/course/messages/<lang>.json`, which textlint reads).
"""

from __future__ import annotations

from dataclasses import dataclass

from piilab.course.lang import LANGUAGES, page_messages


def _texts(key: str) -> dict[str, str]:
    """The page message `key` in every language of the course: ``{"en": ..., "ja": ...}``."""
    return {lang: page_messages(lang)[key] for lang in LANGUAGES}


@dataclass(frozen=True)
class Stage:
    """One stage of the pipeline as chapter 01 draws it.

    `raw_pii` is True when the stage reads or writes original PII values (synthetic ones, in
    this course); only a stage that sees masked text alone has it False.
    """

    id: str
    title: dict[str, str]
    api: str
    chapter: str
    raw_pii: bool


#: The stages in pipeline order: generate -> fine-tune -> infer -> parse -> mask ->
#: downstream use -> restore -> evaluate. Titles: `ch01.stage_<id>` in the page messages.
PIPELINE: tuple[Stage, ...] = (
    Stage("generate", _texts("ch01.stage_generate"), "generate_dataset", "02", True),
    Stage("fine-tune", _texts("ch01.stage_fine_tune"), "piilab.sft", "06", True),
    Stage("infer", _texts("ch01.stage_infer"), "piilab.inference", "07", True),
    Stage("parse", _texts("ch01.stage_parse"), "parse_model_output", "03", True),
    Stage("mask", _texts("ch01.stage_mask"), "mask_text", "03", True),
    Stage("downstream", _texts("ch01.stage_downstream"), "any LLM or service", "01", False),
    Stage("restore", _texts("ch01.stage_restore"), "reassemble_text", "03", True),
    Stage("evaluate", _texts("ch01.stage_evaluate"), "evaluate", "04", True),
)

STAGE_IDS: tuple[str, ...] = tuple(stage.id for stage in PIPELINE)


@dataclass(frozen=True)
class Artifact:
    """Something the pipeline stores or passes on, and whether it carries PII values."""

    id: str
    title: dict[str, str]
    sensitive: bool
    why: dict[str, str]


#: What the pipeline produces, in pipeline order, and whether each item must be protected like
#: the source documents themselves. Chapter 01's exercise checks a learner's answer against it.
#: Titles and reasons: `ch01.artifact_<id>` and `ch01.why_<id>` in the page messages.
ARTIFACTS: tuple[Artifact, ...] = tuple(
    Artifact(id, _texts(f"ch01.artifact_{id}"), sensitive, _texts(f"ch01.why_{id}"))
    for id, sensitive in (
        ("training_data", True),
        ("model_weights", True),
        ("model_output", True),
        ("masked_text", False),
        ("mapping", True),
        ("restored_text", True),
        ("metrics", False),
    )
)

ARTIFACT_IDS: tuple[str, ...] = tuple(artifact.id for artifact in ARTIFACTS)
