"""o200k tokens: pinned encodings, the byte-level spelling, the offset rules (chapter 09)."""

from __future__ import annotations

import base64
import doctest
import functools
import gzip
import itertools
from importlib import resources

import pytest

pytest.importorskip("bpe_openai", reason="needs the finance extra: pip install -e '.[finance]'")

from piilab.bioes import check_alignment
from piilab.finance import tokens as TOK
from piilab.finance import verify as independent


@functools.cache
def _ranks() -> dict[bytes, int]:
    """The o200k_base vocabulary as shipped (``base64(bytes) rank`` per line)."""
    data = resources.files("bpe_openai.data").joinpath("o200k_base.tiktoken.gz").read_bytes()
    ranks = {}
    for line in gzip.decompress(data).splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _reference_bpe(word: str) -> list[int]:
    """Plain byte-pair encoding of one pre-token: merge the lowest-ranked pair while one exists."""
    ranks = _ranks()
    parts = [bytes([b]) for b in word.encode("utf-8")]
    while len(parts) > 1:
        pairs = [(ranks.get(a + b), i) for i, (a, b) in enumerate(itertools.pairwise(parts))]
        best = min((p for p in pairs if p[0] is not None), default=None)
        if best is None:
            break
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return [ranks[p] for p in parts]


def test_doctests_pass():
    assert doctest.testmod(TOK).failed == 0


@pytest.mark.parametrize(("text", "ids"), [
    ("hello world", [24912, 2375]),  # the ids tiktoken's o200k_base gives (issue 18)
    ("주민등록번호", [9273, 24019, 129182, 69655]),
    ("안녕하세요", [14307, 171731]),
])
def test_pinned_o200k_encodings(text, ids):
    assert TOK.encode(text) == ids


@pytest.mark.parametrize("word", ["hello", " world", "주민등록번호", "안녕하세요", "김가상", "똠"])
def test_encodings_agree_with_a_plain_python_bpe_over_the_shipped_vocabulary(word):
    # Each of these is one pre-token of the o200k split pattern, so BPE alone decides.
    assert TOK.encode(word) == _reference_bpe(word)


def test_byte_alphabet_is_a_bijection_of_printable_characters_and_matches_the_verifier():
    symbols = TOK.byte_symbols()
    assert len(set(symbols)) == 256 and all(s.isprintable() for s in symbols)
    assert {s: b for b, s in enumerate(symbols)} == independent._ALPHABET


def test_a_token_that_splits_a_character_is_spelled_losslessly_and_shares_its_offsets():
    text = "카드 똠"
    tokens, offsets = TOK.tokenize(text)
    pieces = [t for t, (s, e) in zip(tokens, offsets, strict=True) if (s, e) == (3, 4)]
    assert len(pieces) == 3  # the rare syllable is three tokens, one byte each
    assert b"".join(TOK.spelling_bytes(t) for t in tokens) == text.encode("utf-8")
    assert TOK.token_ids(tokens) == TOK.encode(text)


def test_offsets_trim_the_leading_space_but_keep_a_whitespace_only_token():
    text = "name John  Smith 4111 1111"
    tokens, offsets = TOK.tokenize(text)
    words = [text[s:e] for s, e in offsets]
    assert "John" in words and " John" not in words
    assert any(w.isspace() for w in words)  # the lone spaces between digit groups
    spans = [(5, 16, "PERSON"), (17, 26, "CARD_NUMBER")]
    assert check_alignment(offsets, spans) == []
    assert independent._offsets(text, tokens) == offsets


def test_offsets_refuse_tokens_that_do_not_spell_the_text():
    tokens, _ = TOK.tokenize("hello world")
    with pytest.raises(TOK.TokenError, match="bytes"):
        TOK.token_offsets("hello there", tokens)  # same length, other bytes
    with pytest.raises(TOK.TokenError, match="past the end"):
        TOK.token_offsets("hello", tokens)
    with pytest.raises(TOK.TokenError, match="vocabulary"):
        TOK.token_ids(["Ġ" * 300])
