"""The wide corpus: a compositional generator for training a model that generalizes.

``piilab generate --profile wide --records N --out DIR`` (or `write_wide`) writes a
corpus laid out like the default one (``train/validation/test.jsonl`` and a hashed
``manifest.json``), from 18 genres in Korean and English (`piilab.wide.genres`), values
with many spellings (`piilab.wide.values`) and large name and address vocabularies
(`piilab.wide.vocab`). The default corpus (`piilab.generator`, version 1.0.0) is not
touched.

- Deterministic: record ``i`` gets its own `random.Random`, seeded from a SHA-256 of
  ``(WIDE_VERSION, seed, i)``; nothing depends on `hash()`, the clock or the platform.
- Families: a record's ``template_id`` is ``wide-<lang>-<genre>-v<layout>``; layouts 0-3
  are training, 4 validation, 5 test, so the evaluation splits share no family with
  training (chapter 05 audits it).
- Safe: every value is invalid by construction, whatever its spelling; `safety_problems`
  checks one record and `piilab verify` runs it on every record of a wide corpus.
- Clean: every occurrence of a gold value in a document is one the generator placed (a
  relationship word inside another word, say ``형`` in ``유형``, makes the draw start again).

Each record carries ``genre`` and ``profile`` besides the fields of the default corpus.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path

from piilab.dataset import (
    MANIFEST,
    build_manifest,
    load_dataset_dir,
    manifest_bytes,
    save_dataset,
    split_bytes,
    verify_dataset,
)
from piilab.labels import nfc
from piilab.matching import find_occurrences
from piilab.records import entities_in_order, new_record, overlapping_occurrences
from piilab.safe_values import seeded_random
from piilab.safety import digits_of, safety_problems  # re-exported: chapter 02 imports them here
from piilab.splits import DEFAULT_TARGETS
from piilab.wide import genres as G
from piilab.wide.errors import WideCorpusError

WIDE_VERSION = "wide-1.1.0"
PROFILE = "wide"
__all__ = ["DEFAULT_RECORDS", "PROFILE", "WIDE_VERSION", "WideCorpusError", "digits_of",
           "generate_wide", "make_wide_record", "safety_problems", "wide_manifest",
           "write_training_mix", "write_wide"]
DEFAULT_RECORDS = 20_000
#: Layout variants per split: families never cross from training to evaluation.
SPLIT_VARIANTS = {"train": (0, 1, 2, 3), "validation": (4,), "test": (5,)}
KO_SHARE = 0.62
NEGATIVE_SHARE = 0.1
LONG_SHARE = 0.08
MAX_ATTEMPTS = 30


#: Record ``i`` goes to ``_SPLIT_CYCLE[i % 10]``: the shares of `piilab.splits.DEFAULT_TARGETS`
#: (80/10/10) laid out over ten consecutive records.
_SPLIT_CYCLE: tuple[str, ...] = tuple(name for name, share in DEFAULT_TARGETS.items()
                                      for _ in range(round(share * 10)))


def _split_of(index: int) -> str:
    return _SPLIT_CYCLE[index % len(_SPLIT_CYCLE)]


def _rng(seed: int, index: int, attempt: int = 0) -> random.Random:
    return seeded_random("piilab", WIDE_VERSION, seed, index, attempt)


def _pairs(source: str, label_of: dict[str, str]) -> list[tuple[str, str]]:
    """The ``(type, value)`` pairs of the values the source holds."""
    return [(t, v) for v, t in label_of.items() if v in source]


def _clean(doc, source: str, entities: list[dict[str, str]]) -> bool:
    """Every occurrence of a gold value lies inside a segment the generator placed, and no
    two gold occurrences partly overlap (the default corpus's rule)."""
    if overlapping_occurrences(source, entities):
        return False
    text_all = "".join(s for s, _ in doc.segments)
    lead = len(text_all) - len(text_all.lstrip("\n"))  # `Doc.source` strips them
    placed: list[tuple[int, int]] = []
    pos = -lead
    for text, is_value in doc.segments:
        if is_value:
            placed.append((pos, pos + len(text)))
        pos += len(text)
    for e in entities:
        for occ in find_occurrences(source, e["type"], e["value"]):
            if e["type"] == "PERSON" and " " in source[occ.start:occ.end] and \
                    " " not in e["value"]:
                continue  # a spaced rendering the template asked for
            if not any(s <= occ.start and occ.end <= end for s, end in placed):
                return False
    return True


def make_wide_record(seed: int, index: int) -> dict:
    """Record number `index` of the wide corpus (pure and deterministic)."""
    split = _split_of(index)
    for attempt in range(MAX_ATTEMPTS):
        rng = _rng(seed, index, attempt)
        lang = "ko" if rng.random() < KO_SHARE else "en"
        genre = rng.choice(G.GENRES)
        variant = rng.choice(SPLIT_VARIANTS[split])
        negative = rng.random() < NEGATIVE_SHARE
        long = rng.random() < LONG_SHARE
        try:
            doc = G.compose(genre, rng, lang, variant, negative=negative, long=long)
        except G.CompositionError:
            continue
        source = nfc(doc.source())
        if not source.strip():
            continue
        pairs = _pairs(source, doc.label_of)
        if _clean(doc, source, entities_in_order(source, pairs)):
            break
    else:
        raise WideCorpusError(f"wide record {index}: no valid draw")
    return new_record(
        id=f"wide-{split}-{lang}-{index:06d}",
        split=split,
        language=lang,
        source_text=source,
        pairs=pairs,
        template_id=f"wide-{lang}-{genre.name}-v{variant}",
        setting=genre.name,
        genre=genre.name,
        profile=PROFILE,
        generator_version=WIDE_VERSION,
    )


def generate_wide(records: int = DEFAULT_RECORDS, seed: int = 42, *,
                  progress: Callable[[int, int], None] | None = None) -> dict[str, list[dict]]:
    """The wide corpus as ``{"train": [...], "validation": [...], "test": [...]}`` (80/10/10).

    >>> data = generate_wide(40)
    >>> {k: len(v) for k, v in data.items()}
    {'train': 32, 'validation': 4, 'test': 4}
    """
    if not isinstance(records, int) or isinstance(records, bool) or records < 10:
        raise WideCorpusError("the wide corpus needs --records of at least 10")
    out: dict[str, list[dict]] = {"train": [], "validation": [], "test": []}
    for i in range(records):
        r = make_wide_record(seed, i)
        out[r["split"]].append(r)
        if progress and (i + 1) % 1000 == 0:
            progress(i + 1, records)
    return out


def wide_manifest(seed: int, records: int, blobs: dict[str, bytes],
                  splits: dict[str, list[dict]]) -> dict:
    manifest = build_manifest(seed, blobs, splits)
    manifest["generator_version"] = WIDE_VERSION
    manifest["profile"] = PROFILE
    manifest["records"] = records
    return manifest


def write_wide(out_dir: str | Path, records: int = DEFAULT_RECORDS, seed: int = 42, *,
               force: bool = False,
               progress: Callable[[int, int], None] | None = None) -> dict:
    """Generate the wide corpus and write it with its manifest (all files or none)."""
    splits = generate_wide(records, seed, progress=progress)
    blobs = {name: split_bytes(rs) for name, rs in splits.items()}
    manifest = wide_manifest(seed, records, blobs, splits)
    save_dataset(out_dir, blobs, manifest_bytes(manifest), force=force)
    return manifest


# --------------------------------------------------------------------------------------
# The training mix of chapter 05/07: wide records with some of the course's
# --------------------------------------------------------------------------------------

def write_training_mix(out_dir: str | Path, wide_dir: str | Path, course_dir: str | Path, *,
                       wide_records: int, course_records: int, seed: int = 0,
                       force: bool = False) -> dict:
    """Write a dataset directory whose training split is the first `wide_records` wide
    training records plus the first `course_records` course training records, shuffled
    with `seed`; validation is the wide validation split, test the course test split.

    Both inputs are verified against their manifests first; the new manifest records
    their SHA-256 and generator versions, so a run trained on the mix names its data.
    """
    sources = {}
    for name, d in (("wide", wide_dir), ("course", course_dir)):
        if not verify_dataset(d).ok:
            raise WideCorpusError(f"{d}: does not match its manifest (regenerate it)")
        blob = (Path(d) / MANIFEST).read_bytes()
        sources[name] = {"manifest_sha256": hashlib.sha256(blob).hexdigest(),
                         "generator_version": json.loads(blob)["generator_version"]}
    wide, course = load_dataset_dir(wide_dir), load_dataset_dir(course_dir)
    if wide_records > len(wide["train"]) or course_records > len(course["train"]):
        raise WideCorpusError("the mix asks for more training records than the inputs hold")
    train = wide["train"][:wide_records] + course["train"][:course_records]
    random.Random(seed).shuffle(train)
    splits = {"train": train, "validation": wide["validation"], "test": course["test"]}
    blobs = {name: split_bytes(rs) for name, rs in splits.items()}
    manifest = build_manifest(seed, blobs, splits)
    manifest.update({"generator_version": f"mix:{sources['wide']['generator_version']}+"
                                          f"{sources['course']['generator_version']}",
                     "profile": "mix", "sources": sources,
                     "mix": {"wide_train": wide_records, "course_train": course_records,
                             "validation": "wide validation", "test": "course test"}})
    save_dataset(out_dir, blobs, manifest_bytes(manifest), force=force)
    return manifest
