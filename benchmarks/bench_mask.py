"""Benchmark: `piilab.mask_text` against Presidio's anonymizer and plain slicing.

Run it as ``.venv/bin/python benchmarks/bench_mask.py`` (``--quick`` for a
smaller run). It backs the performance claims of chapter 03 ("Deterministic
tokenization"): linear cost, no pairwise span comparisons.

The goal: `mask_text`, which is pure Python (the only implementation), is at
least 1.5x faster than Presidio's anonymizer given the same spans, and its cost
is linear in the length of the document (the cost per character stays roughly
flat from 1x to 100x the length). The report prints both figures next to the
goal.

The workload is built deterministically from a seeded ``random.Random``:
2,000 Korean and English documents of about 300 characters, each with about
five synthetic PII values, one of them mentioned twice. Three ways to produce
the masked text are timed side by side:

* ``mask_text``: given only the ``(type, value)`` pairs; it has to find every
  occurrence itself, number the tokens and build the mapping and spans.
* Presidio: ``AnonymizerEngine().anonymize`` given the exact spans
  (``RecognizerResult``s) and one ``replace`` operator; it finds nothing and
  numbers nothing.
* slicing: a plain loop that, given the exact spans, cuts the text, numbers
  tokens per (type, spelling) and builds the mapping: a lower bound for the
  job once the spans are known.

Every contender gets its input ready-made (pairs, span tuples, prebuilt
``RecognizerResult``s), so only the work itself is timed.

A second table times documents made 1x, 10x and 100x longer and prints the
cost per character of `mask_text` at each length: with a linear cost it stays
roughly flat (a quadratic one would grow 100-fold from 1x to 100x). Two ways to
lengthen a document are timed: joining that many distinct documents, so the
number of distinct values grows with the length too (the harder case: every
value is searched through the whole document, so the cost per character grows
with the number of values), and repeating one document, so only the length
grows. The
slice baseline's cost per character is printed alongside, and so is the opt-in
indexed masker (`piilab.masking_index.mask_text_indexed`, the same output from an
index of the document), whose cost per character should stay flat in both cases.

Timings use ``time.perf_counter``: the documents are cut into chunks, the
contenders take turns on each chunk, and each chunk keeps its best of several
rounds. The figures depend on the machine (and on what else runs on it); the
ratios are what matter.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from piilab.masking_index import mask_text_indexed
from piilab.tokenization import mask_text

# --- the workload -----------------------------------------------------------

KO_SURNAMES = ("김", "이", "박", "최", "정", "강", "조", "윤", "장", "임")
KO_GIVEN = ("가상", "민준", "서연", "도윤", "하은", "지호", "수아", "예준", "지민", "유진")
KO_REL = ("어머니", "아버지", "남편", "아내", "할머니", "동생")
KO_STREETS = ("테스트로", "가상대로", "예시길", "샘플로")
KO_FILLER = (
    "오늘 상담 내용을 아래와 같이 정리합니다.",
    "고객님의 요청에 따라 정보를 변경했습니다.",
    "추가 문의는 영업일 기준 하루 안에 답변드립니다.",
    "확인 후 다시 연락드리겠습니다.",
    "관련 서류는 다음 주까지 제출해 주세요.",
    "배송은 평균 이틀이 걸립니다.",
)
EN_FIRST = ("Jane", "John", "Maria", "David", "Emma", "Noah", "Olivia", "Liam")
EN_LAST = ("Doe", "Roe", "Smith", "Brown", "Taylor", "Walker")
EN_REL = ("my mother", "my husband", "her brother", "his wife", "my grandfather")
EN_STREETS = ("Example Street", "Sample Avenue", "Test Road", "Placeholder Lane")
EN_FILLER = (
    "Thanks for getting back to us so quickly.",
    "Please review the notes below before the call.",
    "The request was logged and will be handled today.",
    "We will follow up once the paperwork arrives.",
    "Let us know if anything in this summary is wrong.",
    "Delivery usually takes two business days.",
)


@dataclass(frozen=True)
class Doc:
    text: str
    candidates: tuple[tuple[str, str], ...]  # (type, value), what mask_text gets
    spans: tuple[tuple[int, int, str], ...]  # (start, end, type), what the others get


def _ko_values(rng: random.Random) -> list[tuple[str, str]]:
    name = rng.choice(KO_SURNAMES) + rng.choice(KO_GIVEN)
    return [
        ("PERSON", name),
        ("PHONE", f"010-{rng.randrange(1000):04d}-{rng.randrange(10000):04d}"),
        ("ACCOUNT", f"{rng.randrange(100, 1000)}-{rng.randrange(100, 1000)}-"
                    f"{rng.randrange(10**5, 10**6)}"),
        ("EMAIL", f"user{rng.randrange(10**4)}@example.com"),
        ("ADDRESS", f"서울시 가상구 {rng.choice(KO_STREETS)} {rng.randrange(1, 200)}"),
        ("REL", rng.choice(KO_REL)),
        ("DOB", f"{rng.randrange(1950, 2005)}.{rng.randrange(1, 13):02d}."
                f"{rng.randrange(1, 29):02d}"),
    ]


def _en_values(rng: random.Random) -> list[tuple[str, str]]:
    return [
        ("PERSON", f"{rng.choice(EN_FIRST)} {rng.choice(EN_LAST)}"),
        ("PHONE", f"555-01{rng.randrange(100):02d}"),
        ("CARD", " ".join(f"{rng.randrange(10000):04d}" for _ in range(4))),
        ("EMAIL", f"{rng.choice(EN_FIRST).lower()}{rng.randrange(100)}@example.org"),
        ("ADDRESS", f"{rng.randrange(1, 999)} {rng.choice(EN_STREETS)}"),
        ("REL", rng.choice(EN_REL)),
        ("DOB", f"{rng.randrange(1, 13):02d}/{rng.randrange(1, 29):02d}/"
                f"{rng.randrange(1950, 2005)}"),
    ]


def make_doc(rng: random.Random, korean: bool, target_chars: int = 300) -> Doc:
    """One document: fillers and five PII values, the first value mentioned twice."""
    values = rng.sample(_ko_values(rng) if korean else _en_values(rng), 5)
    filler = KO_FILLER if korean else EN_FILLER
    before, after = ("확인 대상: ", " (확인 완료). ") if korean else ("Confirmed: ", " (on file). ")
    parts: list[tuple[str, str | None]] = []  # (text, type of the PII value or None)
    for label, value in [*values, values[0]]:
        parts += [(rng.choice(filler) + " " + before, None), (value, label), (after, None)]
    while sum(len(text) for text, _ in parts) < target_chars:
        parts.append((rng.choice(filler) + " ", None))
    pieces, spans, pos = [], [], 0
    for text, label in parts:
        if label is not None:
            spans.append((pos, pos + len(text), label))
        pieces.append(text)
        pos += len(text)
    return Doc("".join(pieces).rstrip(), tuple(values), tuple(spans))


def make_workload(n_docs: int, seed: int = 42) -> list[Doc]:
    rng = random.Random(seed)
    return [make_doc(rng, korean=rng.random() < 0.8) for _ in range(n_docs)]


def join_docs(docs: Sequence[Doc]) -> Doc:
    """One long document made of `docs` (spans shifted, candidates merged)."""
    texts, spans, candidates, offset = [], [], {}, 0
    for doc in docs:
        texts.append(doc.text)
        spans.extend((s + offset, e + offset, t) for s, e, t in doc.spans)
        candidates.update(dict.fromkeys(doc.candidates))
        offset += len(doc.text) + 1
    return Doc(" ".join(texts), tuple(candidates), tuple(spans))


# --- the three contenders ------------------------------------------------------
# Each gets its input prepared in advance (pairs, span tuples, RecognizerResults)
# and processes a list of documents; results are discarded, as in a pipeline
# that writes them out.

Runner = Callable[[], None]

#: The goal: mask_text at least this many times faster than Presidio's anonymizer.
PRESIDIO_GOAL = 1.5
#: Document lengths (in workload documents joined into one) of the second table.
LENGTHS = (1, 10, 100)


def masker_runner(mask: Callable) -> Callable[[Sequence[Doc]], Runner]:
    """A runner factory for a masker given only the (type, value) pairs."""
    def factory(docs: Sequence[Doc]) -> Runner:
        inputs = [(doc.text, doc.candidates) for doc in docs]

        def run() -> None:
            for text, candidates in inputs:
                mask(text, candidates)

        return run

    return factory


mask_text_runner = masker_runner(mask_text)
indexed_runner = masker_runner(mask_text_indexed)


def slice_mask(text: str, spans: Sequence[tuple[int, int, str]]) -> tuple[str, dict[str, str]]:
    """The lower bound: spans given, sorted and disjoint; cut, number tokens, join."""
    pieces: list[str] = []
    mapping: dict[str, str] = {}
    token_of: dict[tuple[str, str], str] = {}
    counts: dict[str, int] = {}
    cursor = 0
    for start, end, label in spans:
        spelling = text[start:end]
        token = token_of.get((label, spelling))
        if token is None:
            counts[label] = counts.get(label, 0) + 1
            token = token_of[label, spelling] = f"[{label}_{counts[label]}]"
            mapping[token] = spelling
        pieces.append(text[cursor:start])
        pieces.append(token)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), mapping


def slice_runner(docs: Sequence[Doc]) -> Runner:
    inputs = [(doc.text, doc.spans) for doc in docs]

    def run() -> None:
        for text, spans in inputs:
            slice_mask(text, spans)

    return run


def presidio_runner(docs: Sequence[Doc]) -> Runner | None:
    try:
        from presidio_anonymizer import AnonymizerEngine
        from presidio_anonymizer.entities import OperatorConfig, RecognizerResult
    except ImportError:  # the bench extra is not installed
        return None
    engine = AnonymizerEngine()
    operators = {"DEFAULT": OperatorConfig("replace", {"new_value": "<PII>"})}
    inputs = [
        (doc.text, [RecognizerResult(label, s, e, 1.0) for s, e, label in doc.spans])
        for doc in docs
    ]

    def run() -> None:
        for text, results in inputs:
            engine.anonymize(text, analyzer_results=results, operators=operators)

    return run


def best_times(
    factories: dict[str, Callable[[Sequence[Doc]], Runner | None]],
    docs: Sequence[Doc],
    repeats: int,
    chunk_chars: int = 40_000,
) -> dict[str, float]:
    """Seconds each contender needs for `docs`: the sum over chunks of the best of `repeats`.

    The documents are cut into chunks of about `chunk_chars` characters and the
    contenders take turns on every chunk in every round, so a slow moment of a
    shared machine hits all of them alike and the best-of discards it.
    """
    chunks: list[list[Doc]] = [[]]
    for doc in docs:
        if chunks[-1] and sum(len(d.text) for d in chunks[-1]) >= chunk_chars:
            chunks.append([])
        chunks[-1].append(doc)
    runners = {}
    for name, factory in factories.items():
        per_chunk = [factory(chunk) for chunk in chunks]
        if all(run is not None for run in per_chunk):
            runners[name] = per_chunk
    best = {name: [float("inf")] * len(chunks) for name in runners}
    for _ in range(repeats):
        for index in range(len(chunks)):
            for name, per_chunk in runners.items():
                started = time.perf_counter()
                per_chunk[index]()
                best[name][index] = min(best[name][index], time.perf_counter() - started)
    return {name: sum(times) for name, times in best.items()}


# --- report ---------------------------------------------------------------


def check_workload(docs: Sequence[Doc]) -> int:
    """How many documents mask_text masks exactly as planted (a sanity check)."""
    return sum(
        [(s.start, s.end, s.type) for s in mask_text(doc.text, doc.candidates).spans]
        == list(doc.spans)
        for doc in docs
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 documents, fewer repeats")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    n_docs, repeats = (200, 5) if args.quick else (2000, 9)

    docs = make_workload(n_docs, args.seed)
    megabytes = sum(len(d.text.encode("utf-8")) for d in docs) / 1e6
    print(f"workload: {n_docs} documents (seed {args.seed}), "
          f"{sum(len(d.text) for d in docs) / n_docs:.0f} characters and "
          f"{sum(len(d.spans) for d in docs) / n_docs:.1f} PII spans per document, "
          f"{megabytes:.2f} MB UTF-8")
    print(f"sanity: mask_text finds exactly the planted spans in {check_workload(docs)}/{n_docs}"
          " documents")

    names = {
        "mask_text": "mask_text (values only)",
        "presidio": "Presidio anonymize (spans given)",
        "slice": "slice replacement (spans given)",
    }
    seconds = best_times(
        {"mask_text": mask_text_runner, "presidio": presidio_runner, "slice": slice_runner},
        docs,
        repeats,
    )

    print()
    print(f"{'method':34} {'docs/s':>9} {'MB/s':>7} {'us/doc':>8}")
    for key in ("mask_text", "presidio", "slice"):
        if key in seconds:
            t = seconds[key]
            print(f"{names[key]:34} {n_docs / t:9.0f} {megabytes / t:7.2f} {t / n_docs * 1e6:8.1f}")
    print()
    if "presidio" in seconds:
        ratio = seconds["presidio"] / seconds["mask_text"]
        verdict = "met" if ratio >= PRESIDIO_GOAL else "NOT met"
        print(f"mask_text: {ratio:.2f}x faster than Presidio "
              f"(goal: at least {PRESIDIO_GOAL:g}x: {verdict})")
    else:
        print("Presidio is not installed (pip install -e '.[bench]'): comparison skipped")
    print(f"mask_text: {seconds['mask_text'] / seconds['slice']:.1f}x the time of slice "
          "replacement (the lower bound once the spans are known)")

    print()
    print("longer documents: k workload documents joined into one (distinct values: their")
    print("number grows with the length, too), or one document repeated k times (same values)")
    print(f"{'length':>7} {'docs':>5} {'chars/doc':>10} {'values/doc':>11} "
          f"{'mask_text us/doc':>17} {'ns/char':>8} {'vs 1x':>6} "
          f"{'same values ns/char':>20} {'vs 1x':>6} {'indexed ns/char':>16} {'vs 1x':>6} "
          f"{'slice ns/char':>14}")
    per_char: dict[int, float] = {}
    per_char_same: dict[int, float] = {}
    per_char_indexed: dict[int, float] = {}
    for k in LENGTHS:
        starts = range(0, n_docs - k + 1, k)
        group = [join_docs(docs[i : i + k]) for i in starts]
        same = [join_docs([docs[i]] * k) for i in starts]
        chars = sum(len(d.text) for d in group)
        t = best_times({"mask_text": mask_text_runner, "indexed": indexed_runner,
                        "slice": slice_runner}, group, repeats)
        t_same = best_times({"mask_text": mask_text_runner}, same, repeats)
        per_char[k] = t["mask_text"] / chars
        per_char_same[k] = t_same["mask_text"] / sum(len(d.text) for d in same)
        per_char_indexed[k] = t["indexed"] / chars
        print(f"{k:>6}x {len(group):>5} {chars / len(group):>10.0f} "
              f"{sum(len(d.candidates) for d in group) / len(group):>11.0f} "
              f"{t['mask_text'] / len(group) * 1e6:>17.1f} {per_char[k] * 1e9:>8.1f} "
              f"{per_char[k] / per_char[1]:>5.2f}x "
              f"{per_char_same[k] * 1e9:>20.1f} {per_char_same[k] / per_char_same[1]:>5.2f}x "
              f"{per_char_indexed[k] * 1e9:>16.1f} "
              f"{per_char_indexed[k] / per_char_indexed[1]:>5.2f}x "
              f"{t['slice'] / chars * 1e9:>14.1f}")
    last = LENGTHS[-1]
    print(f"mask_text cost per character at {last}x the length vs 1x: "
          f"{per_char[last] / per_char[1]:.2f}x with distinct values, "
          f"{per_char_same[last] / per_char_same[1]:.2f}x with the same values "
          f"(goal: linear, i.e. roughly flat; a quadratic cost would be {last}x)")
    print(f"mask_text_indexed (opt-in, piilab.masking_index; same output) cost per character "
          f"at {last}x vs 1x with distinct values: "
          f"{per_char_indexed[last] / per_char_indexed[1]:.2f}x; at {last}x it takes "
          f"{per_char_indexed[last] / per_char[last]:.2f}x the time of mask_text")
    return 0


if __name__ == "__main__":
    sys.exit(main())
