"""Chapter 01 ("Platform architecture") as data: the pipeline's stages and what each one keeps.

`PIPELINE` and `ARTIFACTS` feed the chapter's diagram (`piilab.course.diagram`) and the
answer keys of its exercises (`piilab.course.exercises.ch01`).
"""

from __future__ import annotations

from dataclasses import dataclass


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
#: downstream use -> restore -> evaluate.
PIPELINE: tuple[Stage, ...] = (
    Stage("generate", {"en": "generate", "ja": "生成"}, "generate_dataset", "02", True),
    Stage("fine-tune", {"en": "fine-tune", "ja": "ファインチューニング"}, "piilab.sft", "06", True),
    Stage("infer", {"en": "infer", "ja": "推論"}, "piilab.inference", "07", True),
    Stage("parse", {"en": "parse", "ja": "パース"}, "parse_model_output", "03", True),
    Stage("mask", {"en": "mask", "ja": "マスキング"}, "mask_text", "03", True),
    Stage(
        "downstream", {"en": "downstream use", "ja": "下流での利用"}, "any LLM or service", "01",
        False,
    ),
    Stage("restore", {"en": "restore", "ja": "復元"}, "reassemble_text", "03", True),
    Stage("evaluate", {"en": "evaluate", "ja": "評価"}, "evaluate", "04", True),
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
ARTIFACTS: tuple[Artifact, ...] = (
    Artifact(
        "training_data", {"en": "training data (data/*.jsonl)", "ja": "学習データ (data/*.jsonl)"},
        True,
        {
            "en": "each record holds the source text and its gold PII values",
            "ja": "各レコードに原文と正解の PII 値がそのまま入っている",
        },
    ),
    Artifact(
        "model_weights", {"en": "fine-tuned model weights", "ja": "ファインチューニング済みの重み"},
        True,
        {
            "en": "a model can memorise and reproduce training values, so treat it like its data",
            "ja": "モデルは学習した値を記憶して再現しうるので、学習データと同じ扱いにする",
        },
    ),
    Artifact(
        "model_output", {"en": "raw model output (TYPE<TAB>VALUE rows)",
                         "ja": "モデルの生出力 (TYPE<TAB>VALUE の行)"},
        True,
        {
            "en": "every row repeats a PII value from the document",
            "ja": "どの行も文書中の PII 値をそのまま繰り返している",
        },
    ),
    Artifact(
        "masked_text", {"en": "masked text", "ja": "マスク済みテキスト"},
        False,
        {
            "en": "it carries tokens such as [PERSON_1] instead of the values: this is what may "
            "leave (still check it for context that identifies someone)",
            "ja": "値の代わりに [PERSON_1] のようなトークンが入っている。外に出してよいのはこれだけ"
            "(ただし文脈から個人が特定できないかは別途確認する)",
        },
    ),
    Artifact(
        "mapping", {"en": "the mapping (token -> value)", "ja": "対応表 (トークン -> 値)"},
        True,
        {
            "en": "it lists every original value next to its token: masked text + mapping = source",
            "ja": "すべての元の値がトークンと並んで入っている。マスク済みテキスト + 対応表 = 原文",
        },
    ),
    Artifact(
        "restored_text", {"en": "restored downstream result", "ja": "復元した下流の結果"},
        True,
        {
            "en": "restoring puts the original values back in",
            "ja": "復元で元の値が戻っている",
        },
    ),
    Artifact(
        "metrics", {"en": "evaluation metrics (counts and rates)", "ja": "評価指標 (件数と率)"},
        False,
        {
            "en": "counts and rates carry no values, which is why only they go to logs and "
            "experiment tracking",
            "ja": "件数と率には値が含まれない。だからログや実験管理に送るのはこれだけにする",
        },
    ),
)

ARTIFACT_IDS: tuple[str, ...] = tuple(artifact.id for artifact in ARTIFACTS)
