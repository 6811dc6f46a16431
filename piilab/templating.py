"""The one template engine of the three generators (chapters 02 and 09).

The course generator (`piilab.generator`, templates in `piilab.templates`), the wide
generator (`piilab.wide`) and the finance generator (`piilab.finance.templates`) write
their documents from small templates: text with pieces in braces. This module owns the
grammar of those braces, the parser (`compile`) and the renderer (`render`); each
generator keeps its own tables (which labels, which decoys, how a value is drawn) and
hands them in as arguments.

The grammar, one brace at a time:

* ``{PERSON}``, ``{PHONE2}``, ``{CARD_NUMBER_1}``: a **slot**, a label and an optional
  number (written straight after the label or after an underscore). What the number
  means is the generator's choice: the course and wide generators repeat one value per
  slot key (``PHONE2`` is a second phone number), the finance generator draws a fresh
  value for a bare label and repeats one for a numbered one;
* ``{PERSON@spaced}``: the slot's value written with a space between its characters,
  the PERSON variant of `piilab.matching` (``김 가 상``): text a masker must still catch
  (`spaced`);
* ``{@ORDER}``: a **decoy** of that kind, number-like text that is not PII (label O);
* ``{a|b|c}``: a **choice** of phrasings, one picked at random;
* ``{:}``, ``{-}``: a **mark** the generator fills in (the wide layouts' separator and
  bullet), accepted only where the generator names its marks.

Anything else in braces is refused with a `TemplateError` that says where, never what:
templates are code, but the rule that errors do not echo what they reject holds here too.

The engine takes the value and decoy functions as arguments (as seqeval's metrics engine
takes its counting function), so it imports none of the generators: they import it.

>>> pieces = compile("{PERSON}: {PHONE} ({@ORDER}) {hi|hello}", labels={"PERSON", "PHONE"},
...                  decoys={"ORDER"})
>>> [p.kind for p in pieces]
['slot', 'text', 'slot', 'text', 'decoy', 'text', 'choice']
>>> import random
>>> parts = render(pieces, random.Random(0), value=lambda p: {"PERSON": "김가상"}.get(p.key, "010"),
...                decoy=lambda kind: "ORD-1")
>>> join(parts)[0]
'김가상: 010 (ORD-1) hello'
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from piilab.errors import PiilabError
from piilab.matching import person_variants

__all__ = ["BRACES", "SLOT", "Piece", "TemplateError", "compile", "join", "render", "spaced"]

#: One piece in braces (no nesting).
BRACES = re.compile(r"\{([^{}]*)\}")
#: A slot: label (capitals and underscores), optional number, optional ``@spaced``.
SLOT = re.compile(r"^(?P<label>[A-Z][A-Z_]*?)(?:_?(?P<number>[0-9]+))?(?:@(?P<form>spaced))?$")

TEXT, SLOT_PIECE, DECOY, CHOICE, MARK = "text", "slot", "decoy", "choice", "mark"


class TemplateError(PiilabError):
    """A template, or a file of templates, is malformed (names the template and the place,
    never the text in the braces)."""


@dataclass(frozen=True)
class Piece:
    """One piece of a compiled template.

    `kind` is ``text``, ``slot``, ``decoy``, ``choice`` or ``mark``; `text` holds literal
    text (or the mark); `label` the slot's label as written (a generator may map it, as
    the wide one maps ``GIVEN`` to PERSON) or the decoy's kind; `number` the slot's
    number as written (``""`` when there is none).
    """

    kind: str
    text: str = ""
    label: str = ""
    number: str = ""
    spaced: bool = False
    options: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The slot key: label and number (``PHONE2``; ``PERSON`` for ``{PERSON@spaced}``)."""
        return self.label + self.number


def compile(text: str, *, labels: Collection[str], decoys: Collection[str],
            marks: Collection[str] = (), where: str = "template") -> tuple[Piece, ...]:
    """Split `text` into pieces; `labels`, `decoys` and `marks` are what its braces may name.

    >>> compile("{X}", labels={"PERSON"}, decoys=(), where="template t-1")
    Traceback (most recent call last):
    ...
    piilab.templating.TemplateError: template t-1: the slot at character 0 names no label
    """
    pieces: list[Piece] = []
    position = 0
    for match in BRACES.finditer(text):
        if match.start() > position:
            pieces.append(Piece(TEXT, text=text[position:match.start()]))
        body = match.group(1)
        if body in marks:
            pieces.append(Piece(MARK, text=body))
        elif "|" in body:
            pieces.append(Piece(CHOICE, options=tuple(body.split("|"))))
        elif body.startswith("@"):
            if body[1:] not in decoys:
                raise TemplateError(f"{where}: the decoy at character {match.start()} "
                                    "names no decoy kind")
            pieces.append(Piece(DECOY, label=body[1:]))
        else:
            slot = SLOT.match(body)
            if slot is None or slot.group("label") not in labels:
                raise TemplateError(f"{where}: the slot at character {match.start()} "
                                    "names no label")
            pieces.append(Piece(SLOT_PIECE, label=slot.group("label"),
                                number=slot.group("number") or "",
                                spaced=bool(slot.group("form"))))
        position = match.end()
    if position < len(text):
        pieces.append(Piece(TEXT, text=text[position:]))
    return tuple(pieces)


def spaced(value: str) -> str:
    """`value` with one space between its characters (``김가상`` -> ``김 가 상``).

    It is the space-joined variant of `piilab.matching.person_variants`, the one rule of
    which spellings of a name a masker finds. That rule gives variants to names of 2-6
    characters; a longer name, which no masker would find spaced, is written as it is.

    >>> spaced("김가상"), spaced("Ana Li"), spaced("Minjun Kim")
    ('김 가 상', 'A n a L i', 'Minjun Kim')
    """
    variants = person_variants(value)
    return variants[1] if variants else value


def render(pieces: Sequence[Piece], rng: random.Random, *,
           value: Callable[[Piece], str], decoy: Callable[[str], str],
           mark: Callable[[str], str] | None = None) -> list[tuple[Piece, str]]:
    """Each piece with its text, in template order.

    `value(piece)` gives a slot's value (the generator decides when to draw and when to
    repeat), `decoy(kind)` a decoy's text and `mark(mark)` a mark's. Choices are drawn
    from `rng` where they stand; a ``@spaced`` slot is written with `spaced`.
    """
    out: list[tuple[Piece, str]] = []
    for piece in pieces:
        if piece.kind == TEXT:
            text = piece.text
        elif piece.kind == CHOICE:
            text = rng.choice(piece.options)
        elif piece.kind == DECOY:
            text = decoy(piece.label)
        elif piece.kind == MARK:
            if mark is None:
                raise TemplateError("a template holds a mark but its generator names none")
            text = mark(piece.text)
        else:
            text = value(piece)
            if piece.spaced:
                text = spaced(text)
        out.append((piece, text))
    return out


def join(parts: Sequence[tuple[Piece, str]]) -> tuple[str, list[tuple[int, int, Piece]]]:
    """The rendered text and the span ``(start, end, piece)`` of every slot in it."""
    texts: list[str] = []
    spans: list[tuple[int, int, Piece]] = []
    cursor = 0
    for piece, text in parts:
        if piece.kind == SLOT_PIECE:
            spans.append((cursor, cursor + len(text), piece))
        texts.append(text)
        cursor += len(text)
    return "".join(texts), spans
