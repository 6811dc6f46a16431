"""Benchmark: BIOES projection, decoding and span scores on the default corpus.

Prints CPU seconds and records/s for `gold_spans`, tokenization with the tiny
encoder tokenizer (batched, Rust), `spans_to_bioes`, `bioes_to_spans`,
`span_scores` and the verified `export_row` (all 2,200 records times --scale).

    .venv/bin/python benchmarks/bench_bioes.py [--scale N]
"""

from __future__ import annotations

from _timing import best_cpu, scaled_corpus

from piilab.bioes import bioes_to_spans, span_scores, spans_to_bioes
from piilab.ner import export_row, gold_spans, train_encoder_tokenizer


def main() -> None:
    corpus, records = scaled_corpus(__doc__.splitlines()[0])
    tokenizer = train_encoder_tokenizer(corpus["train"])
    texts = [r["source_text"] for r in records]

    gold_s, gold = best_cpu(lambda: [gold_spans(r) for r in records])
    tok_s, encoded = best_cpu(lambda: tokenizer(texts, return_offsets_mapping=True,
                                                add_special_tokens=False)["offset_mapping"])
    encode_s, tags = best_cpu(lambda: [spans_to_bioes(o, g)
                                       for o, g in zip(encoded, gold, strict=True)])
    decode_s, decoded = best_cpu(lambda: [bioes_to_spans(o, t)
                                          for o, t in zip(encoded, tags, strict=True)])
    assert decoded == gold
    score_s, _ = best_cpu(lambda: span_scores(gold, decoded))
    export_s, _ = best_cpu(lambda: [export_row(r, tokenizer) for r in records], repeats=1)

    n = len(records)
    print(f"{'step':<16} {'records':>8} {'cpu s':>8} {'records/s':>10}")
    for name, secs in (("gold_spans", gold_s), ("tokenize", tok_s), ("spans_to_bioes", encode_s),
                       ("bioes_to_spans", decode_s), ("span_scores", score_s),
                       ("export_row", export_s)):
        print(f"{name:<16} {n:>8} {secs:>8.3f} {n / max(secs, 1e-9):>10,.0f}")


if __name__ == "__main__":
    main()
