"""The deterministic synthetic PII generator (chapter 02).

`generate_dataset(seed=42)` builds the course corpus: 2,200 Korean and English
documents in three splits, each with its gold entities and the `TYPE<TAB>VALUE`
target the model learns to write. `piilab.dataset.write_dataset` stores it with a
hashed manifest.

How it stays deterministic: every record gets its own `random.Random`, seeded from
a SHA-256 of ``(generator version, seed, split, language, index)``. Nothing depends
on `hash()` (so `PYTHONHASHSEED` does not matter), on dictionary order of anything
but literals, on the clock or on the platform. The same seed and version give
byte-identical files.

How it stays safe: all numbers are invalid by construction (`piilab.checksums`),
phone numbers are in placeholder ranges, e-mails use the reserved example domains.

What it does not do: model realistic text. Templates and vocabularies
(`piilab.templates`) are small and shared by all splits: the corpus teaches the
pipeline, it cannot measure generalization (chapter 05).
"""

from __future__ import annotations

import datetime as _dt
import random
from collections.abc import Callable, Iterator

from piilab import safe_values as SV
from piilab import templates as T
from piilab.checksums import invalid_card_number, invalid_rrn
from piilab.errors import PiilabError
from piilab.labels import LABELS
from piilab.records import entities_in_order, new_record, overlapping_occurrences
from piilab.templating import Piece
from piilab.templating import compile as compile_template
from piilab.templating import join as join_parts
from piilab.templating import render as render_template

GENERATOR_VERSION = "1.0.0"
DEFAULT_SEED = 42

#: Records per split and language of the default corpus (scale 1).
SPLIT_SIZES: dict[str, dict[str, int]] = {
    "train": {"ko": 1280, "en": 320},
    "validation": {"ko": 160, "en": 40},
    "test": {"ko": 320, "en": 80},
}
SPLITS: tuple[str, ...] = tuple(SPLIT_SIZES)
LANGUAGES: tuple[str, ...] = ("ko", "en")

#: How many times a record is redrawn when two of its gold values would overlap.
MAX_ATTEMPTS = 50


class GenerationError(PiilabError, RuntimeError):
    """A template could not produce a valid record (a bug in the templates), or the
    generator was asked for a split or language it does not make (never echoes it)."""


# --------------------------------------------------------------------------------
# Value generators: one function per label, each taking (rng, language, context).
# `context` carries values other slots already drew in the same document, so that
# for instance an RRN agrees with the date of birth next to it.
# --------------------------------------------------------------------------------


_digits = SV.digits


def _person(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        name = rng.choice(T.KO_SURNAMES) + rng.choice(T.KO_GIVEN)
    else:
        name = f"{rng.choice(T.EN_FIRST)} {rng.choice(T.EN_LAST)}"
    ctx.setdefault("person", name)  # the document's main person (first drawn)
    return name


#: The years a document's person is born in, ``randrange(*BIRTH_YEARS)``.
BIRTH_YEARS = (1950, 2006)


def _birth_date(rng: random.Random, ctx: dict) -> _dt.date:
    return SV.birth_date(rng, ctx, BIRTH_YEARS)


def _dob(rng: random.Random, lang: str, ctx: dict) -> str:
    d = _birth_date(rng, ctx)
    if lang == "ko":
        fmt = rng.randrange(3)
        if fmt == 0:
            return f"{d.year}년 {d.month}월 {d.day}일"
        sep = "-" if fmt == 1 else "."
        return f"{d.year}{sep}{d.month:02d}{sep}{d.day:02d}"
    fmt = rng.randrange(3)
    if fmt == 0:
        return f"{T.EN_MONTHS[d.month - 1]} {d.day}, {d.year}"
    if fmt == 1:
        return f"{d.month:02d}/{d.day:02d}/{d.year}"
    return f"{d.year}-{d.month:02d}-{d.day:02d}"


def _rrn(rng: random.Random, lang: str, ctx: dict) -> str:
    # Agree with the birth date when the document has one (the RRN starts with YYMMDD).
    return invalid_rrn(rng, birth=_birth_date(rng, ctx))


def _card(rng: random.Random, lang: str, ctx: dict) -> str:
    kind = rng.randrange(4)
    if kind == 3:  # 15-digit, 4-6-5 grouping
        n = invalid_card_number(rng, prefix=rng.choice(("34", "37")), length=15)
        return f"{n[:4]} {n[4:10]} {n[10:]}"
    n = invalid_card_number(rng, prefix=rng.choice(("4", "51", "52", "53", "54", "55")))
    sep = ("-", " ", "")[kind]
    return sep.join(n[i:i + 4] for i in range(0, 16, 4))


def _account(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        groups = rng.choice(((3, 3, 6), (4, 3, 6), (3, 4, 4, 2), (3, 6, 2, 3), (3, 2, 6)))
        parts = [_digits(rng, g) for g in groups]
        return "-".join(parts) if rng.random() < 0.8 else "".join(parts)
    n = rng.choice((8, 10, 12))
    return _digits(rng, n)


def _phone(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        # Placeholder range: the middle group starts with 0 or 1 (not assigned to mobiles).
        middle = SV.ko_unassigned_group(rng, 4)
        last = _digits(rng, 4)
        sep = rng.choice(("-", "-", " ", ".", ""))
        return sep.join(("010", middle, last))
    # US placeholder range 555-0100..0199.
    area = rng.choice(T.EN_AREA_CODES)
    line = SV.us_fiction_line(rng)
    fmt = rng.randrange(4)
    if fmt == 0:
        return f"({area}) 555-{line}"
    if fmt == 1:
        return f"{area}-555-{line}"
    if fmt == 2:
        return f"{area}.555.{line}"
    return f"+1 {area} 555 {line}"


def _email(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        first, last = rng.choice(T.KO_ROMAN_GIVEN), rng.choice(T.KO_ROMAN_SURNAMES)
    elif ctx.get("person") and rng.random() < 0.7:
        # Usually the address of the person the document is about, as in real mail.
        first, last = (part.lower() for part in ctx["person"].split(" ", 1))
    else:
        first, last = rng.choice(T.EN_FIRST).lower(), rng.choice(T.EN_LAST).lower()
    style = rng.randrange(3)
    local = (f"{first}.{last}", f"{first[0]}{last}{rng.randrange(10, 100)}",
             f"{last}_{first}")[style]
    return f"{local}@{rng.choice(T.EMAIL_DOMAINS)}"


def _address(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        city, districts = rng.choice(T.KO_ADDRESS_CITIES)
        addr = f"{city} {rng.choice(districts)} {rng.choice(T.KO_ROADS)} {rng.randrange(1, 300)}"
        if rng.random() < 0.5:
            building = rng.randrange(101, 120)
            floor = rng.randrange(1, 25)
            unit = rng.randrange(1, 5)
            addr += f", {building}동 {floor}{unit:02d}호"
        return addr
    city, state = rng.choice(T.EN_CITIES)
    number = rng.randrange(10, 9900)
    street = f"{number} {rng.choice(T.EN_STREETS)} {rng.choice(T.EN_STREET_TYPES)}"
    if rng.random() < 0.3:
        street += f", Apt {rng.randrange(1, 20)}{rng.choice('ABCD')}"
    return f"{street}, {city}, {state} {rng.randrange(10000, 99999)}"


def _rel(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        return rng.choice(T.KO_REL)
    if ctx.get("template_id") in T.EN_REL_FORM_TEMPLATES:
        return rng.choice(T.EN_REL_FORM)
    return rng.choice(T.EN_REL_FIRST_PERSON)


VALUE_GENERATORS: dict[str, Callable[[random.Random, str, dict], str]] = {
    "EMAIL": _email,
    "RRN": _rrn,
    "CARD": _card,
    "ACCOUNT": _account,
    "PHONE": _phone,
    "DOB": _dob,
    "ADDRESS": _address,
    "PERSON": _person,
    "REL": _rel,
}
if set(VALUE_GENERATORS) != set(LABELS):  # pragma: no cover - a bug in this module
    raise GenerationError("VALUE_GENERATORS must have one generator per label of LABELS")


# --------------------------------------------------------------------------------
# Decoys: number-like strings that are not PII in this experiment.
# --------------------------------------------------------------------------------


def _decoy(kind: str, rng: random.Random, lang: str) -> str:
    # The shapes live in `piilab.safe_values`; the prefixes and ranges drawn are this corpus's.
    if kind == "SWITCHBOARD":  # company switchboards, never a person's number
        return SV.switchboard(rng, lang, T.KO_SWITCHBOARD_PREFIXES)
    if kind == "ORDER":
        return SV.order_number(rng)
    if kind == "AMOUNT":
        return SV.amount(rng, lang, below=5000)
    if kind == "PRODUCT":
        return SV.product_code(rng, ("SKU", "PRD", "KX"))
    if kind == "DATE":  # appointment / billing dates, never birth dates
        d = _dt.date(rng.randrange(2024, 2027), rng.randrange(1, 13), rng.randrange(1, 29))
        if lang == "ko":
            return f"{d.year}년 {d.month}월 {d.day}일" if rng.random() < 0.5 else d.isoformat()
        return f"{T.EN_MONTHS[d.month - 1]} {d.day}, {d.year}"
    if kind == "TICKET":
        return f"{rng.choice(('REF', 'POL', 'A'))}-{_digits(rng, 6)}"
    raise GenerationError(f"unknown decoy kind {kind!r}")


DECOY_KINDS = ("SWITCHBOARD", "ORDER", "AMOUNT", "PRODUCT", "DATE", "TICKET")


# --------------------------------------------------------------------------------
# Rendering one record (the grammar and the renderer are `piilab.templating`'s).
# --------------------------------------------------------------------------------


_COMPILED: dict[str, tuple[Piece, ...]] = {
    t.template_id: compile_template(t.text, labels=LABELS, decoys=DECOY_KINDS,
                                    where=f"template {t.template_id}")
    for t in T.TEMPLATES
}


def _render(template: T.Template, rng: random.Random) -> tuple[str, list[dict[str, str]]]:
    pieces = _COMPILED[template.template_id]
    ctx: dict = {"template_id": template.template_id}
    values: dict[str, str] = {}
    used: set[str] = set()
    # Draw every slot's value first, in template order, all distinct.
    for p in pieces:
        if p.kind == "slot" and p.key not in values:
            for _ in range(MAX_ATTEMPTS):
                v = VALUE_GENERATORS[p.label](rng, template.language, ctx)
                if v not in used:
                    break
            else:
                raise GenerationError(f"{template.template_id}: no distinct value for {p.key}")
            values[p.key] = v
            used.add(v)
    parts = render_template(pieces, rng, value=lambda p: values[p.key],
                            decoy=lambda kind: _decoy(kind, rng, template.language))
    source, _ = join_parts(parts)
    # Entities: unique (type, value) pairs in order of first literal occurrence.
    label_of = {values[p.key]: p.label for p in pieces if p.kind == "slot"}
    return source, entities_in_order(source, [(label, value) for value, label in label_of.items()])


def _record_rng(seed: int, split: str, language: str, index: int) -> random.Random:
    return SV.seeded_random("piilab", GENERATOR_VERSION, seed, split, language, index)


def _weights(language: str) -> tuple[list[T.Template], list[float]]:
    family = [t for t in T.TEMPLATES if t.language == language]
    return family, [t.weight for t in family]


def make_record(seed: int, split: str, language: str, index: int,
                check: Callable[[str, list[dict[str, str]]], bool] | None = None) -> dict:
    """Build record number `index` of one split and language (pure, deterministic).

    `check(source, entities)` may reject a draw (the generator then redraws with
    the same record RNG); the default rejects documents whose gold occurrences
    partly overlap (see `overlapping_occurrences`).
    """
    if language not in LANGUAGES:
        raise GenerationError(f"make_record: the language must be one of {', '.join(LANGUAGES)}")
    rng = _record_rng(seed, split, language, index)
    family, weights = _weights(language)
    check = check or _no_partial_overlap
    for _ in range(MAX_ATTEMPTS):
        template = rng.choices(family, weights=weights)[0]
        source, entities = _render(template, rng)
        if check(source, entities):
            break
    else:
        raise GenerationError(f"record {split}/{language}/{index}: no valid draw")
    return new_record(
        id=f"{split}-{language}-{index:05d}",
        split=split,
        language=language,
        source_text=source,
        pairs=[(e["type"], e["value"]) for e in entities],
        template_id=template.template_id,
        setting=template.setting,
        generator_version=GENERATOR_VERSION,
    )


def _no_partial_overlap(source: str, entities: list[dict[str, str]]) -> bool:
    return not overlapping_occurrences(source, entities)


def iter_split(split: str, seed: int = DEFAULT_SEED, scale: int = 1) -> Iterator[dict]:
    """Yield the records of one split in file order (deterministically shuffled)."""
    if split not in SPLIT_SIZES:
        raise GenerationError(f"iter_split: the split must be one of {', '.join(SPLITS)}")
    sizes = SPLIT_SIZES[split]
    records = [
        make_record(seed, split, lang, i)
        for lang in LANGUAGES
        for i in range(sizes[lang] * scale)
    ]
    order = _record_rng(seed, split, "order", 0)
    order.shuffle(records)
    yield from records


def generate_dataset(seed: int = DEFAULT_SEED, *, scale: int = 1,
                     progress: Callable[[int, int], None] | None = None) -> dict[str, list[dict]]:
    """Generate the corpus: ``{"train": [...], "validation": [...], "test": [...]}``.

    `scale` multiplies every split size (benchmarks use 10 and 100); `progress`, if
    given, is called as ``progress(done, total)`` after each split.

    >>> data = generate_dataset()
    >>> {k: len(v) for k, v in data.items()}
    {'train': 1600, 'validation': 200, 'test': 400}
    """
    total = sum(sum(s.values()) for s in SPLIT_SIZES.values()) * scale
    done = 0
    out: dict[str, list[dict]] = {}
    for split in SPLITS:
        out[split] = list(iter_split(split, seed, scale))
        done += len(out[split])
        if progress:
            progress(done, total)
    return out
