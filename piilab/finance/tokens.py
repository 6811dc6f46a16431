"""o200k tokens of a text: how they are written, and where each one sits in the text.

Chapter 09 teaches this module. The finance dataset is tokenized with
OpenAI's ``o200k_base`` byte-level BPE, the tokenizer of the model family the
card fine-tunes; the `bpe-openai` package ships its vocabulary, so nothing is
downloaded (``"hello world"`` -> ``[24912, 2375]``, as tiktoken gives).

**How a token is written in ``tokens``.** o200k works on UTF-8 *bytes*, and a
token may hold part of a character: a rare Hangul syllable is three bytes
that can end up in two or three tokens. So a token is not always text. Each
token is written in the byte-level alphabet of GPT-2 (`byte_symbols`: every
byte is one printable character, ``" "`` is ``Ġ``, a newline ``Ċ``), the same
string Hugging Face's ``convert_ids_to_tokens`` gives for byte-level
tokenizers. That spelling is lossless and every token is a valid string, even
a piece of a character; `spelling_bytes` turns it back into the bytes, and
the o200k vocabulary maps those bytes to the token id (`token_ids`). A
reader who wants the text of a token reads it through its offsets.

**How token character offsets are derived** (`token_offsets`), from
``tokens`` and ``source_text`` alone, so the 9-column rows need no offsets
column:

1. the bytes of the tokens, one after another, are the UTF-8 bytes of the
   text (a check: anything else is an error);
2. a token that covers bytes ``[b0, b1)`` covers the characters from the one
   holding byte ``b0`` to the one holding byte ``b1 - 1``: a token with part
   of a character covers that whole character, so the pieces of one
   character share its offsets (`piilab.bioes` puts such tokens all inside
   or all outside a span);
3. leading and trailing whitespace is trimmed from a token that holds
   anything else (``" 김"`` covers ``김``, as a fast tokenizer's
   ``trim_offsets`` does); a token of whitespace only keeps its offsets, so
   the space inside ``"John Smith"`` is inside the span.

A span whose boundary falls inside a token (``"상님"`` as one token after the
name ``김가상``) cannot be written as BIOES tags: the builder redraws that row
(`piilab.finance.build`). Offsets are character offsets (Python ``str``
indexes), like every span in the course.

What it deliberately does not do: implement BPE (the package does), or add
special tokens (there are none in a row).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from piilab.errors import PiilabError

__all__ = [
    "ENCODING_NAME",
    "TokenError",
    "byte_symbols",
    "encode",
    "spelling_bytes",
    "token_ids",
    "token_offsets",
    "tokenize",
]

#: The tokenizer of the finance dataset.
ENCODING_NAME = "o200k_base"


class TokenError(PiilabError):
    """Tokens do not spell the text (the message names counts and positions, never text)."""


@functools.cache
def _encoding():
    import bpe_openai

    return bpe_openai.get_encoding(ENCODING_NAME)


@functools.cache
def byte_symbols() -> tuple[str, ...]:
    """GPT-2's byte-level alphabet: the printable character that stands for each byte 0-255.

    Printable Latin-1 bytes stand for themselves; the others (controls, space,
    ...) are moved to code points from 256 on, in byte order.

    >>> byte_symbols()[ord(" ")], byte_symbols()[ord("a")], byte_symbols()[10]
    ('Ġ', 'a', 'Ċ')
    """
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
            *range(ord("®"), ord("ÿ") + 1)]
    symbols: dict[int, str] = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in symbols:
            symbols[b] = chr(256 + extra)
            extra += 1
    return tuple(symbols[b] for b in range(256))


@functools.cache
def _symbol_bytes() -> dict[str, int]:
    return {symbol: b for b, symbol in enumerate(byte_symbols())}


def spelling(token_bytes: bytes) -> str:
    """The byte-level spelling of a token's bytes."""
    symbols = byte_symbols()
    return "".join(symbols[b] for b in token_bytes)


def spelling_bytes(token: str) -> bytes:
    """The bytes a spelled token stands for (`TokenError` for a character outside the alphabet)."""
    table = _symbol_bytes()
    try:
        return bytes(table[ch] for ch in token)
    except KeyError:
        raise TokenError("a token holds a character outside the byte-level alphabet") from None


def encode(text: str) -> list[int]:
    """The o200k token ids of `text` (no special tokens).

    >>> encode("hello world")
    [24912, 2375]
    """
    return _encoding().encode_ordinary(text)


@functools.cache
def _spelling_of_id(token_id: int) -> str:
    return spelling(_encoding().decode_single_token_bytes(token_id))


def token_ids(tokens: Sequence[str]) -> list[int]:
    """The o200k ids of spelled tokens (`TokenError` for a token not in the vocabulary).

    >>> token_ids(["hello", "Ġworld"])
    [24912, 2375]
    """
    encoding = _encoding()
    ids = []
    for i, token in enumerate(tokens):
        try:
            ids.append(encoding.encode_single_token(spelling_bytes(token)))
        except KeyError:
            raise TokenError(f"token {i} is not in the {ENCODING_NAME} vocabulary") from None
    return ids


def token_offsets(text: str, tokens: Sequence[str]) -> list[tuple[int, int]]:
    """Each token's ``(start, end)`` character offsets in `text` (rules: module docstring).

    >>> token_offsets("Hi 김", ["Hi", "Ġ", "ê¹", "Ģ"])
    [(0, 2), (2, 3), (3, 4), (3, 4)]
    """
    # Which character holds each byte of the text.
    char_of_byte: list[int] = []
    for index, ch in enumerate(text):
        char_of_byte.extend([index] * len(ch.encode("utf-8")))
    offsets: list[tuple[int, int]] = []
    position = 0
    for i, token in enumerate(tokens):
        size = len(spelling_bytes(token))
        if size == 0 or position + size > len(char_of_byte):
            raise TokenError(f"token {i} runs past the end of the text")
        start, end = char_of_byte[position], char_of_byte[position + size - 1] + 1
        position += size
        if not text[start:end].isspace():  # trim whitespace around a token with content
            while text[start].isspace():
                start += 1
            while text[end - 1].isspace():
                end -= 1
        offsets.append((start, end))
    if position != len(char_of_byte):
        raise TokenError(f"the tokens cover {position} of the text's {len(char_of_byte)} bytes")
    if b"".join(spelling_bytes(t) for t in tokens) != text.encode("utf-8"):
        raise TokenError("the tokens' bytes are not the text's UTF-8 bytes")
    return offsets


def tokenize(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The spelled o200k tokens of `text` and their character offsets.

    >>> tokenize("hello world")
    (['hello', 'Ġworld'], [(0, 5), (6, 11)])
    """
    tokens = [_spelling_of_id(i) for i in encode(text)]
    return tokens, token_offsets(text, tokens)
