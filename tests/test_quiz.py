"""`piilab.course.quiz` (load, validate, show) and `piilab.course.exercises` (the checkers)."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path

import pytest

from piilab.course import exercises
from piilab.course.ch01 import ARTIFACTS, STAGE_IDS
from piilab.course.exercises import ch00, ch01
from piilab.course.quiz import QuizError, answer_key, load_quiz, show_quiz, validate_quiz
from piilab.labels import LABELS

REPO = Path(__file__).resolve().parent.parent
BOOK_EXTRA = "needs the book extra: pip install -e '.[book]'"


@pytest.fixture
def jsonschema_installed():
    """`validate_quiz` (and so `load_quiz`, `show_quiz`) checks the schema with jsonschema."""
    pytest.importorskip("jsonschema", reason=BOOK_EXTRA)


@pytest.fixture
def jupyterquiz_installed(jsonschema_installed):
    """`show_quiz` displays the quiz with jupyterquiz."""
    pytest.importorskip("jupyterquiz", reason=BOOK_EXTRA)


needs_jsonschema = pytest.mark.usefixtures("jsonschema_installed")
needs_jupyterquiz = pytest.mark.usefixtures("jupyterquiz_installed")


def _question(qid: str = "q-one", correct: int = 0, n: int = 3) -> dict:
    return {
        "id": qid,
        "question": f"Question {qid}?",
        "type": "multiple_choice",
        "answers": [
            {"answer": f"answer {i}", "correct": i == correct, "feedback": f"because {i}"}
            for i in range(n)
        ],
    }


def _quiz(n: int = 5) -> list[dict]:
    return [_question(f"q-{i}") for i in range(n)]


# ---------------------------------------------------------------------------- validation


@needs_jsonschema
def test_a_well_formed_quiz_validates():
    validate_quiz(_quiz())


@needs_jsonschema
def test_load_quiz_reads_and_validates_a_file(tmp_path):
    path = tmp_path / "00_x.json"
    path.write_text(json.dumps(_quiz(6), ensure_ascii=False), encoding="utf-8")
    assert [q["id"] for q in load_quiz(path)] == [f"q-{i}" for i in range(6)]


def test_invalid_json_names_the_file_and_position(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('[{"id": "a",]', encoding="utf-8")
    with pytest.raises(QuizError, match=r"broken\.json: not valid JSON \(line 1"):
        load_quiz(path)


@needs_jsonschema
def test_missing_feedback_names_the_file_and_the_question():
    quiz = _quiz()
    del quiz[2]["answers"][1]["feedback"]
    with pytest.raises(QuizError) as error:
        validate_quiz(quiz, source="book/quizzes/en/01_x.json")
    message = str(error.value)
    assert "book/quizzes/en/01_x.json" in message
    assert "question #3 ('q-2') answers[1]" in message
    assert "'feedback' is a required property" in message


@needs_jsonschema
@pytest.mark.parametrize("correct_flags", [(False, False, False), (True, True, False)])
def test_exactly_one_answer_is_correct(correct_flags):
    quiz = _quiz()
    for answer, flag in zip(quiz[0]["answers"], correct_flags, strict=True):
        answer["correct"] = flag
    with pytest.raises(QuizError, match=r"question #1 \('q-0'\) answers: needs exactly one answer"):
        validate_quiz(quiz)


@needs_jsonschema
def test_question_count_is_five_to_eight():
    with pytest.raises(QuizError, match=r"is too short"):
        validate_quiz(_quiz(4))
    with pytest.raises(QuizError, match=r"is too long"):
        validate_quiz(_quiz(9))


@needs_jsonschema
def test_duplicate_ids_are_rejected():
    quiz = _quiz()
    quiz[4]["id"] = "q-1"
    with pytest.raises(QuizError, match=r"question #5 \('q-1'\): id repeats question #2"):
        validate_quiz(quiz)


@needs_jsonschema
def test_unknown_fields_and_types_are_rejected():
    quiz = _quiz()
    quiz[0]["type"] = "numeric"
    quiz[1]["hint"] = "extra"
    with pytest.raises(QuizError) as error:
        validate_quiz(quiz)
    assert "question #1 ('q-0') type" in str(error.value)
    assert "'hint' was unexpected" in str(error.value)


@needs_jsonschema
@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("The <think> block", "tag <think> is not allowed"),
        ("a < b", "bare '<'"),
        ("salt & pepper", "bare '&'"),
        ("costs $5", "'$' starts LaTeX"),
    ],
)
def test_markup_that_jupyterquiz_would_misread_is_rejected(text, problem):
    quiz = _quiz()
    quiz[3]["answers"][2]["feedback"] = text
    where = r"question #4 \('q-3'\): answers\[2\]\.feedback: .*"
    with pytest.raises(QuizError, match=where + re.escape(problem)):
        validate_quiz(quiz)


@needs_jsonschema
def test_allowed_markup_passes():
    quiz = _quiz()
    quiz[0]["question"] = "What does <code>TYPE&lt;TAB&gt;VALUE</code> mean? <b>Think</b>"
    validate_quiz(quiz)


def test_answer_key_is_count_and_position_of_the_correct_answer():
    quiz = [_question("a", correct=2, n=4), _question("b", correct=0, n=2)]
    assert answer_key(quiz) == {"a": (4, 2), "b": (2, 0)}


def test_a_changed_correct_answer_changes_the_key():
    english = _quiz()
    japanese = copy.deepcopy(english)
    japanese[1]["answers"][0]["correct"] = False
    japanese[1]["answers"][1]["correct"] = True
    assert answer_key(english) != answer_key(japanese)


# ---------------------------------------------------------------------------- show_quiz


def _captured_quiz(monkeypatch, path) -> list:
    shown: list = []
    import jupyterquiz.dynamic.display as display_module

    monkeypatch.setattr(display_module, "display", lambda obj: shown.append(obj))
    show_quiz(path)
    return shown


@needs_jupyterquiz
def test_show_quiz_emits_the_container_and_the_script(monkeypatch):
    path = REPO / "book" / "quizzes" / "en" / "00_welcome.json"
    shown = _captured_quiz(monkeypatch, path)
    html, script = shown[0].data, shown[1].data
    container_id = html.split('id="', 1)[1].split('"', 1)[0]
    assert f"questions{container_id}" in script
    first_question = load_quiz(path)[0]["question"]
    assert json.dumps(first_question)[1:-1] in script
    assert 'data-shuffleanswers="True"' in html


@needs_jupyterquiz
def test_show_quiz_is_deterministic_and_leaves_the_random_state_alone(monkeypatch):
    path = REPO / "book" / "quizzes" / "ja" / "01_architecture.json"
    random.seed(1234)
    expected_next = random.random()
    random.seed(1234)
    first = _captured_quiz(monkeypatch, path)
    assert random.random() == expected_next
    second = _captured_quiz(monkeypatch, path)
    assert first[0].data == second[0].data and first[1].data == second[1].data


@needs_jupyterquiz
def test_show_quiz_refuses_an_invalid_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(QuizError, match=r"bad\.json"):
        show_quiz(path)


# ---------------------------------------------------------------------------- exercise checkers


def test_check_result_reads_as_one_line_and_is_truthy_when_ok():
    ok, wrong = exercises.CheckResult(True, "fine"), exercises.CheckResult(False, "not yet")
    assert bool(ok) and not bool(wrong)
    assert str(ok) == "✓ fine" and str(wrong) == "✗ not yet"


def test_welcome_labels_accepts_the_right_answer_in_both_languages():
    answer = [label for label in LABELS if label in {"EMAIL", "PHONE", "DOB", "PERSON", "REL"}]
    assert ch00.check_welcome_labels(answer, lang="en").ok
    result = ch00.check_welcome_labels(answer, lang="ja")
    assert result.ok and result.message.startswith("正解")


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        ("EMAIL", "expected a list"),
        ([1, 2], "must be a string"),
        (["email", "PHONE"], "'email' is written 'EMAIL'"),
        (["NAME"], "not one of the nine labels"),
        (["EMAIL", "EMAIL"], "EMAIL appears more than once"),
        (["EMAIL", "PHONE", "DOB", "PERSON", "REL", "CARD"], "CARD: nothing of that kind"),
        (["EMAIL", "PHONE", "PERSON"], "2 label(s) missing"),
        (["PERSON", "EMAIL", "PHONE", "DOB", "REL"], "wrong order"),
    ],
)
def test_welcome_labels_says_what_is_wrong(answer, hint):
    result = ch00.check_welcome_labels(answer, lang="en")
    assert not result.ok
    assert hint in result.message


def test_welcome_labels_does_not_reveal_missing_labels_by_name():
    message = ch00.check_welcome_labels(["EMAIL"], lang="en").message
    assert not any(label in message for label in ("PHONE", "DOB", "PERSON", "REL"))


def test_welcome_message_contains_what_the_checker_expects():
    assert "@example.com" in ch00.WELCOME_MESSAGE
    assert "555-01" in ch00.WELCOME_MESSAGE
    assert "mother" in ch00.WELCOME_MESSAGE


def test_pipeline_order_accepts_the_pipeline():
    assert ch01.check_pipeline_order(list(STAGE_IDS), lang="en").ok


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (["generate", "train"], "'train' is not a stage id"),
        (["generate", "infer"], "6 stage(s) missing"),
        ([*STAGE_IDS, "mask"], "appears twice"),
        (["infer", *[s for s in STAGE_IDS if s != "infer"]], "'infer' cannot come first"),
        (["generate", "fine-tune", "parse", "infer", "mask", "downstream", "restore", "evaluate"],
         "the first 2 stage(s) are right; stage 3 is not 'parse'"),
    ],
)
def test_pipeline_order_points_at_the_first_mistake(answer, hint):
    result = ch01.check_pipeline_order(answer, lang="en")
    assert not result.ok
    assert hint in result.message


def test_pipeline_order_speaks_japanese_on_request():
    result = ch01.check_pipeline_order(["generate"], lang="ja")
    assert "段階が" in result.message


def test_the_correct_pipeline_is_drawn_with_the_arrows_of_each_language():
    english = ch01.check_pipeline_order(list(STAGE_IDS), lang="en").message
    japanese = ch01.check_pipeline_order(list(STAGE_IDS), lang="ja").message
    assert " -> ".join(STAGE_IDS) in english
    assert " → ".join(STAGE_IDS) in japanese and "->" not in japanese


def test_sensitive_artifacts_accepts_the_sensitive_ones_in_any_order():
    sensitive = [a.id for a in ARTIFACTS if a.sensitive]
    assert ch01.check_sensitive_artifacts(list(reversed(sensitive)), lang="en").ok
    assert {"masked_text", "metrics"} == {a.id for a in ARTIFACTS if not a.sensitive}


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (["training_data", "mapping"], "model_weights is sensitive"),
        (
            ["training_data", "model_weights", "model_output", "masked_text", "mapping",
             "restored_text"],
            "masked_text carries no PII values",
        ),
        (["mapping", "logs"], "'logs' is not an artifact id"),
    ],
)
def test_sensitive_artifacts_explains_the_first_misclassified_artifact(answer, hint):
    result = ch01.check_sensitive_artifacts(answer, lang="en")
    assert not result.ok
    assert hint in result.message
