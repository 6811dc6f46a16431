"""The message catalogs of the exercise checkers (`piilab/course/exercises/messages/*.json`).

Both catalogs have the same keys, each key has the same format fields in both languages, every
template formats, every key the checker modules name exists and every key of the catalogs is
used. The modules are scanned with `ast`: a key is a string literal shaped like
``ch03.restore_raised`` or ``common.not_a_list`` (in a `_say` call, a helper's key argument,
or a table of keys such as ``_TOPICS``).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from string import Formatter

import pytest

from piilab.course import exercises
from piilab.course.exercises import CheckResult, _as_string_list, _not_a_list, _say, messages

PACKAGE = Path(exercises.__file__).resolve().parent
SOURCES = sorted(PACKAGE.glob("*.py"))
KEY = re.compile(r"^(common|ch\d\d)\.[a-z0-9_]+$")
#: The helpers that take a message key, and the position of the key among their arguments.
KEY_ARGUMENT = {"_say": 1, "_not_a_list": 2, "_as_string_list": 2}


def _fields(template: str) -> set[str]:
    """The names of the format fields of `template` (``{count}``, ``{item!r}`` -> count, item)."""
    return {name for _, name, _, _ in Formatter().parse(template) if name is not None}


def _trees() -> dict[str, ast.Module]:
    return {path.name: ast.parse(path.read_text(encoding="utf-8")) for path in SOURCES}


def _keys_in_sources() -> dict[str, set[str]]:
    """Every key-shaped string literal of the checker modules, with the files that name it."""
    found: dict[str, set[str]] = {}
    for name, tree in _trees().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and KEY.match(node.value):
                found.setdefault(node.value, set()).add(name)
    return found


def _literal_keys(node: ast.expr) -> set[str] | None:
    """The keys a key argument can be: a literal, or a conditional between literals."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        body, orelse = _literal_keys(node.body), _literal_keys(node.orelse)
        if body is not None and orelse is not None:
            return body | orelse
    return None


def _key_calls():
    """(file, line, helper, possible keys or None, keyword names, has **kwargs) per call."""
    for name, tree in _trees().items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in KEY_ARGUMENT):
                continue
            position = KEY_ARGUMENT[node.func.id]
            if len(node.args) <= position:
                continue  # a definition's recursive call or a keyword-only use: not here
            keywords = {k.arg for k in node.keywords if k.arg is not None}
            spread = any(k.arg is None for k in node.keywords)
            yield (name, node.lineno, node.func.id, _literal_keys(node.args[position]),
                   keywords, spread)


# ---------------------------------------------------------------------------- the catalogs


def test_both_catalogs_are_flat_objects_of_strings_with_the_same_keys():
    en, ja = messages("en"), messages("ja")
    assert en and set(en) == set(ja)
    for key in en:
        assert KEY.match(key), f"{key}: keys are <chapter or common>.<snake_case>"


def test_the_catalog_files_are_sorted_by_chapter_and_identical_in_order():
    orders = [list(json.loads((PACKAGE / "messages" / f"{lang}.json").read_text("utf-8")))
              for lang in ("en", "ja")]
    assert orders[0] == orders[1]
    chapters = [key.split(".")[0] for key in orders[0]]
    assert chapters == sorted(chapters, key=lambda c: (c != "common", c))


@pytest.mark.parametrize("key", sorted(messages("en")))
def test_each_key_has_the_same_fields_in_both_languages_and_formats(key):
    en, ja = messages("en")[key], messages("ja")[key]
    assert _fields(en) == _fields(ja), key
    for template in (en, ja):
        assert "\n" not in template, f"{key}: one paragraph per message"
        for name in _fields(template):
            assert name.isidentifier(), f"{key}: use plain named fields, not {{{name}}}"
        values = dict.fromkeys(_fields(template), 1)  # 1 formats with !r, :.1% and plain
        assert template.format(**values).strip() or key.endswith("_separator"), key


def test_the_japanese_catalog_is_in_japanese():
    for key, text in messages("ja").items():
        if not key.endswith("_separator"):
            assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text), key


# ---------------------------------------------------------------------------- the sources


def test_every_key_the_checkers_name_is_in_both_catalogs():
    used = _keys_in_sources()
    for lang in ("en", "ja"):
        missing = sorted(set(used) - set(messages(lang)))
        assert not missing, f"messages/{lang}.json lacks {missing}"


def test_every_catalog_key_is_used_by_a_checker():
    unused = sorted(set(messages("en")) - set(_keys_in_sources()))
    assert not unused, f"keys no checker uses: {unused}"


def test_no_checker_builds_a_message_inline():
    for name, tree in _trees().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in KEY_ARGUMENT:
                names = {k.arg for k in node.keywords}
                assert not names & {"en", "ja", "what_en", "what_ja"}, (name, node.lineno)


def test_each_call_gives_exactly_the_fields_of_its_message():
    checked = 0
    for name, line, helper, keys, keywords, spread in _key_calls():
        assert keys is not None or helper == "_say", (name, line, "a helper's key is a literal")
        if keys is None or spread:
            continue
        if helper == "_as_string_list":
            assert not keywords
        needed = set()
        for key in keys:
            fields = _fields(messages("en")[key])
            assert fields <= keywords, f"{name}:{line}: {key} needs {sorted(fields - keywords)}"
            needed |= fields
        assert keywords == needed, f"{name}:{line}: unused fields {sorted(keywords - needed)}"
        checked += 1
    assert checked > 100


# ---------------------------------------------------------------------------- _say and helpers


def test_say_picks_the_language_and_formats():
    assert _say("en", "common.not_a_list", what="labels", type="str") == (
        "expected a list of labels, got str")
    assert _say("ja", "common.not_a_list", what="ラベル", type="str") == (
        "ラベルのリストを渡してください(渡されたのは str です)")
    assert _say("ko", "ch05.no_split_names") == "none"  # any other language: English


def test_say_follows_the_page_language(monkeypatch):
    monkeypatch.setenv("PIILAB_LANG", "ja")
    assert _say(None, "ch05.no_split_names") == "なし"
    monkeypatch.setenv("PIILAB_LANG", "en")
    assert _say(None, "ch05.no_split_names") == "none"


def test_a_missing_key_or_field_raises_a_key_error_naming_the_key():
    with pytest.raises(KeyError, match=r"ch99\.nothing"):
        _say("en", "ch99.nothing")
    with pytest.raises(KeyError, match=r"ch00\.labels_missing.*count"):
        _say("ja", "ch00.labels_missing")


def test_the_shape_helpers_take_keys():
    refused = _not_a_list("EMAIL", "en", "ch00.what_labels")
    assert isinstance(refused, CheckResult) and not refused.ok
    assert refused.message == "expected a list of labels, got str"
    assert _not_a_list(["EMAIL"], "en", "ch00.what_labels") is None
    assert _as_string_list(("a", "b"), "ja", "ch00.what_labels") == ["a", "b"]
    bad = _as_string_list(["a", 1], "ja", "ch00.what_labels")
    assert isinstance(bad, CheckResult)
    assert bad.message == "要素はすべて文字列にしてください。1 は int です"
    prompt = _as_string_list(None, "ja", "ch00.what_labels")
    assert prompt.message == "ラベル(文字列)のリストを渡してください(渡されたのは NoneType です)"


def test_the_catalogs_are_package_data():
    text = (PACKAGE.parent.parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert "course/exercises/messages/*.json" in text
