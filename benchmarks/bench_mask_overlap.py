"""Benchmark: `piilab.mask_text` on overlapping candidates over repetitive text (issue 37, N11).

Run it as ``.venv/bin/python benchmarks/bench_mask_overlap.py`` (``--quick`` for
smaller documents).

The masker's sweep (`piilab.masking.longest_matches`) looks for each spelling
only from the cursor on, so an occurrence that starts inside a match is never
searched for. The masker it replaced (kept below as `previous_longest_matches`,
the code of commit dd0d7b9) built every occurrence of every candidate and sorted
them all. On ordinary documents the two do the same work; on a run of one
character with candidates that are substrings of each other (the hostile-input
review's reproducer: ``"Z" * 20000`` and the 60 candidates ``"ZZ"``,
``"ZZZ"``, ...) the previous one builds 1.2 million occurrences for 328 matches.

Cases, each masked by both (their results are checked to be identical):

* ``letters``: the review's reproducer;
* ``digits``: a run of 20,000 digits with 60 numeric candidates ``"11"``,
  ``"111"``, ... (the boundary rule rejects every occurrence inside the run);
* ``spaced``: ``"Z Z Z ..."`` with 5 PERSON candidates, whose spaced variants
  overlap everywhere;
* ``documents``: 2,000 ordinary documents of `bench_mask.py`'s workload, the
  everyday case, where the new sweep must not be slower.

Each figure is the best CPU time of a few rounds (`_timing.best_cpu`); the
ratio (previous / new) is what matters, the seconds depend on the machine.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence

from _timing import best_cpu
from bench_mask import make_workload

from piilab.labels import LABEL_PRIORITY, nfc
from piilab.masking import (
    MaskResult,
    leftmost_longest,
    mask_text,
    normalize_candidates,
    number_tokens,
)
from piilab.matching import digit_runs, occurrence_spans

Pairs = list[tuple[str, str]]


def previous_longest_matches(
    source: str, pairs: Iterable[tuple[str, str]]
) -> list[tuple[int, int, str]]:
    """The sweep before the fix (dd0d7b9): every occurrence collected, then all sorted."""
    runs = list(digit_runs(source))
    owner: dict[tuple[int, int], tuple[bool, int]] = {}
    for label, value in pairs:
        priority = LABEL_PRIORITY[label]
        for span, literal in occurrence_spans(source, label, value, runs).items():
            rank = (not literal, priority)
            if span not in owner or rank < owner[span]:
                owner[span] = rank
    return leftmost_longest(owner)


def previous_mask_text(source_text: str, candidates: Pairs) -> MaskResult:
    source = nfc(source_text)
    return number_tokens(source, previous_longest_matches(source, normalize_candidates(candidates)))


def cases(quick: bool) -> list[tuple[str, list[tuple[str, Pairs]]]]:
    """(name, [(document, candidates), ...]) for each case."""
    n = 5_000 if quick else 20_000
    docs = make_workload(200 if quick else 2_000)
    return [
        ("letters", [("Z" * n, [("PERSON", "ZZ" + "Z" * k) for k in range(60)])]),
        ("digits", [("1" * n, [("ACCOUNT", "11" + "1" * k) for k in range(60)])]),
        ("spaced", [(" ".join("Z" * n), [("PERSON", "Z" * k) for k in range(2, 7)])]),
        ("documents", [(doc.text, list(doc.candidates)) for doc in docs]),
    ]


def run_all(mask: Callable[[str, Pairs], MaskResult],
            work: Sequence[tuple[str, Pairs]]) -> list[MaskResult]:
    return [mask(text, candidates) for text, candidates in work]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="documents 4x shorter")
    args = parser.parse_args(argv)
    print(f"{'case':<10} {'characters':>11} {'previous s':>11} {'new s':>9} {'ratio':>8}")
    for name, work in cases(args.quick):
        before, expected = best_cpu(lambda work=work: run_all(previous_mask_text, work), 2)
        after, got = best_cpu(lambda work=work: run_all(mask_text, work), 3)
        if got != expected:
            print(f"{name}: the two maskers disagree", file=sys.stderr)
            return 1
        characters = sum(len(text) for text, _ in work)
        print(f"{name:<10} {characters:>11,} {before:>11.3f} {after:>9.3f} "
              f"{before / after:>7.1f}x")
    print("ratio: previous / new CPU time (the results are identical); "
          "goal: >= 5x on letters, >= 0.9x on documents")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
