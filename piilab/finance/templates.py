"""The finance templates: statically authored text with slots, decoys and hard negatives.

Chapter 09 teaches this module. The templates live in ``templates.json`` next
to it (text a reader sees is data, not code), grouped into **families**: a
family is one situation in one domain (card, bank, insurance, securities,
customer service) and language, written in one to three phrasings. The family
id is the row's *cluster*: it is part of every row's ``uid``, so a split by
family can be redone from the exported rows alone.

A template is text with three kinds of braces (the grammar of all three generators,
`piilab.templating`; finance templates use these three):

* ``{LABEL}``: a fresh value of that label for this occurrence
  (`piilab.finance.values.draw`, from the row's split pool);
* ``{LABEL_n}``: value number ``n`` of that label in this row, the same value
  wherever ``{LABEL_n}`` appears (a name repeated in a letter);
* ``{@KIND}``: a **decoy**, text that looks like an identifier but is not PII
  under the taxonomy (an amount, an order or policy number, a product code,
  a card approval number, a company switchboard, a branch, an interest rate),
  left unlabelled (``O``): the type-1 hard negatives.

A family's ``hard_negative`` says what it is built to teach: ``type1`` (decoys
next to real identifiers), ``type2-rrn-frn`` or ``type2-card-account`` (the
two labels of a confusion pair in one row, with overlapping shapes: in a
``type2-card-account`` row both numbers are written in one shared shape, see
`piilab.finance.values.SHARED_SHAPES`, so only the words around them tell
them apart).

What it deliberately does not do: vary phrasing beyond the authored
templates (the card's "synthetic distribution shift" limitation), or call a
language model. Decoys are never 13 digits or longer and never RRN-shaped, so
no decoy can pass for a card or registration number.
"""

from __future__ import annotations

import functools
import json
import random
from dataclasses import dataclass
from importlib import resources

from piilab import safe_values as SV
from piilab.finance import values as V
from piilab.templating import Piece, TemplateError
from piilab.templating import compile as compile_template
from piilab.templating import join as join_parts
from piilab.templating import render as render_template

__all__ = [
    "DECOY_KINDS",
    "HARD_NEGATIVE_TYPES",
    "Family",
    "Rendered",
    "TemplateError",
    "families",
    "render",
]

TEMPLATES_FILE = "templates.json"

#: What a family may be built to teach (None: nothing in particular).
HARD_NEGATIVE_TYPES: tuple[str, ...] = ("type1", "type2-rrn-frn", "type2-card-account")

#: The pairs of labels each type-2 family must hold.
TYPE2_PAIRS: dict[str, tuple[str, str]] = {
    "type2-rrn-frn": ("RRN", "FRN"),
    "type2-card-account": ("CARD_NUMBER", "ACCOUNT_NUMBER"),
}



# --------------------------------------------------------------------------------
# Decoys (label O)
# --------------------------------------------------------------------------------


#: The switchboard prefixes these templates draw (a subset of
#: `piilab.safe_values.KO_SWITCHBOARD_PREFIXES`; the course generator draws another one).
KO_SWITCHBOARD_DRAW: tuple[str, ...] = ("1588", "1544", "1566", "1600", "1899")
#: Product-code prefixes of these templates.
PRODUCT_PREFIXES: tuple[str, ...] = ("SKU", "PRD", "FX")


def _decoy(kind: str, rng: random.Random, language: str) -> str:
    if kind == "AMOUNT":
        return SV.amount(rng, language, below=9000)
    if kind == "ORDER":
        return SV.order_number(rng)
    if kind == "PRODUCT":
        return SV.product_code(rng, PRODUCT_PREFIXES)
    if kind == "POLICY":  # identifies a contract, not a person: O (taxonomy, GENERIC_ID)
        prefix, year = rng.choice(("POL", "PL", "LN")), rng.randrange(2015, 2027)
        return f"{prefix}-{year}-{SV.digits(rng, 6)}"
    if kind == "APPROVAL":
        return SV.digits(rng, 8)
    if kind == "SWITCHBOARD":
        return SV.switchboard(rng, language, KO_SWITCHBOARD_DRAW)
    if kind == "BRANCH":
        if language == "ko":
            branch = rng.choice(("강남", "여의도", "종로", "서면", "판교"))
            return f"{branch}지점({SV.digits(rng, 3)})"
        return f"branch {SV.digits(rng, 4)}"
    if kind == "RATE":
        return f"연 {rng.randrange(2, 15)}.{rng.randrange(100):02d}%"
    raise TemplateError("a decoy names no decoy kind of the finance templates")


#: The decoy kinds a template may name as ``{@KIND}``.
DECOY_KINDS: tuple[str, ...] = ("AMOUNT", "ORDER", "PRODUCT", "POLICY", "APPROVAL",
                                "SWITCHBOARD", "BRANCH", "RATE")


# --------------------------------------------------------------------------------
# Families
# --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """A template family: the cluster of the rows it makes."""

    id: str
    domain: str
    language: str
    hard_negative: str | None
    weight: float
    templates: tuple[tuple[Piece, ...], ...]

    @property
    def labels(self) -> frozenset[str]:
        """Every label some template of the family holds."""
        return frozenset(p.label for t in self.templates for p in t if p.kind == "slot")


def _compile(text: str, family: str, labels: tuple[str, ...]) -> tuple[Piece, ...]:
    """The pieces of one template (`piilab.templating`, the grammar of all three generators)."""
    return compile_template(text, labels=labels, decoys=DECOY_KINDS, where=f"family {family}")


@functools.cache
def families() -> tuple[Family, ...]:
    """The families of ``templates.json``, in file order (checked as they load)."""
    from piilab.taxonomy import finance_labels

    labels = finance_labels()
    data = json.loads(resources.files("piilab.finance").joinpath(TEMPLATES_FILE)
                      .read_text(encoding="utf-8"))
    out: list[Family] = []
    for entry in data["families"]:
        fid = entry["id"]
        if entry["language"] not in ("ko", "en"):
            raise TemplateError(f"family {fid}: language must be ko or en")
        if entry["hard_negative"] not in (None, *HARD_NEGATIVE_TYPES):
            raise TemplateError(f"family {fid}: unknown hard_negative type")
        family = Family(fid, entry["domain"], entry["language"], entry["hard_negative"],
                        float(entry.get("weight", 1)),
                        tuple(_compile(t, fid, labels) for t in entry["templates"]))
        pair = TYPE2_PAIRS.get(family.hard_negative or "")
        for template in family.templates:
            held = {p.label for p in template if p.kind == "slot"}
            if pair and not set(pair) <= held:
                raise TemplateError(f"family {fid}: a type-2 template lacks one label of its pair")
            if "CVC" in held and "CARD_NUMBER" not in held:
                raise TemplateError(f"family {fid}: a CVC without a card number")
        out.append(family)
    if len({f.id for f in out}) != len(out):
        raise TemplateError("two families share an id")
    return tuple(out)


# --------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    """A rendered template: the text and its labelled spans ``(start, end, label)``."""

    text: str
    spans: tuple[tuple[int, int, str], ...]


def render(family: Family, rng: random.Random, split: str) -> Rendered:
    """Render one template of `family` with fresh values from `split`'s pool.

    Every value of the row is distinct (normalized), so a span's text names one
    value; a type-2 card/account row draws one shared shape for both numbers.
    """
    template = rng.choice(family.templates)
    ctx: dict = {}
    if family.hard_negative == "type2-card-account":
        ctx["shape"] = rng.choice(V.SHARED_SHAPES)
    reused: dict[tuple[str, int], str] = {}
    taken: set[str] = set()

    def value(piece: Piece) -> str:
        key = (piece.label, int(piece.number)) if piece.number else None
        if key is not None and key in reused:
            return reused[key]
        text = V.draw(piece.label, rng, family.language, split, ctx, avoid=taken)
        taken.add(V.normalize_value(text))
        if key is not None:
            reused[key] = text
        return text

    text, spans = join_parts(render_template(
        template, rng, value=value, decoy=lambda kind: _decoy(kind, rng, family.language)))
    return Rendered(text, tuple((start, end, piece.label) for start, end, piece in spans))
