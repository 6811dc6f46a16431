"""The one template engine (`piilab.templating`) and the three generators that use it."""

from __future__ import annotations

import doctest
import random

import pytest

from piilab import templating as TP
from piilab.errors import PiilabError
from piilab.matching import person_variants


def test_doctests():
    assert doctest.testmod(TP).failed == 0


def test_one_grammar_parses_the_slots_of_all_three_generators():
    labels = {"PERSON", "PHONE", "CARD_NUMBER"}
    pieces = TP.compile("{PERSON}{PHONE2}{CARD_NUMBER_1}{CARD_NUMBER}{PERSON@spaced}",
                        labels=labels, decoys=())
    assert [(p.label, p.number, p.spaced) for p in pieces] == [
        ("PERSON", "", False), ("PHONE", "2", False), ("CARD_NUMBER", "1", False),
        ("CARD_NUMBER", "", False), ("PERSON", "", True)]
    assert [p.key for p in pieces] == ["PERSON", "PHONE2", "CARD_NUMBER1", "CARD_NUMBER",
                                       "PERSON"]


def test_choices_decoys_marks_and_text():
    pieces = TP.compile("a{:}b{x|y}{@ORDER}{-}", labels=(), decoys={"ORDER"},
                        marks={":", "-"})
    assert [p.kind for p in pieces] == ["text", "mark", "text", "choice", "decoy", "mark"]
    parts = TP.render(pieces, random.Random(1), value=lambda p: "", decoy=lambda k: "<" + k + ">",
                      mark=lambda m: {":": ": ", "-": "* "}[m])
    text, spans = TP.join(parts)
    assert text.startswith("a: b") and text.endswith("<ORDER>* ") and spans == []


@pytest.mark.parametrize("body", ["{NOPE}", "{@NOPE}", "{:}", "{person}", "{PERSON@bold}"])
def test_anything_else_in_braces_is_refused_without_echoing_it(body):
    with pytest.raises(TP.TemplateError) as caught:
        TP.compile(f"text {body}", labels={"PERSON"}, decoys={"ORDER"}, where="template t")
    message = str(caught.value)
    assert message.startswith("template t: ") and "character 5" in message
    assert body not in message and body.strip("{}@") not in message.split(": ", 1)[1]
    assert issubclass(TP.TemplateError, PiilabError)


def test_a_mark_without_a_mark_function_is_an_error():
    pieces = TP.compile("{:}", labels=(), decoys=(), marks={":"})
    with pytest.raises(TP.TemplateError):
        TP.render(pieces, random.Random(0), value=str, decoy=str)


def test_spans_point_at_the_slot_values():
    pieces = TP.compile("name {PERSON}, tel {PHONE}.", labels={"PERSON", "PHONE"}, decoys=())
    values = {"PERSON": "김가상", "PHONE": "010-0000-0000"}
    text, spans = TP.join(TP.render(pieces, random.Random(0), value=lambda p: values[p.key],
                                    decoy=str))
    assert [(text[s:e], p.label) for s, e, p in spans] == [("김가상", "PERSON"),
                                                           ("010-0000-0000", "PHONE")]


def test_spaced_is_the_matchers_variant():
    for name in ("김가상", "남궁민수", "Ana Li"):
        assert TP.spaced(name) == person_variants(name)[1]
    # A name the masker finds no spaced variant of is written as it is.
    assert person_variants("Minjun Kim") == () and TP.spaced("Minjun Kim") == "Minjun Kim"


def test_the_three_generators_compile_with_the_engine():
    from piilab import generator
    from piilab.finance import templates as finance_templates
    from piilab.wide import genres

    assert all(isinstance(p, TP.Piece) for ps in generator._COMPILED.values() for p in ps)
    assert finance_templates.Piece is TP.Piece
    assert finance_templates.TemplateError is TP.TemplateError
    line = genres._compiled("{-}{PERSON@spaced}{:}{GIVEN2} {@ORDER} {a|b}")
    assert [p.kind for p in line] == ["mark", "slot", "mark", "slot", "text", "decoy", "text",
                                      "choice"]
