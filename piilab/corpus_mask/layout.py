"""The output layout of a corpus job and its error class (chapter 10).

Shared by every stage of `piilab.corpus_mask`: the folder and file names, the fixed
Parquet settings, and `CorpusError`, whose message names a file, line, row, field or
column, never a value.
"""

from __future__ import annotations

import json
from typing import Any

from piilab.errors import PiilabError

#: Version of the output layout (folder names, manifest fields).
FORMAT_VERSION = 1
MASKED_DIR = "masked"
MAPPINGS_DIR = "mappings"
MANIFEST = "manifest.json"
#: Parquet settings of the masked partitions: fixed, so the bytes depend on the rows only.
PARQUET_OPTIONS = {"compression": "zstd", "compression_level": 3, "use_dictionary": True,
                   "write_statistics": True, "version": "2.6", "data_page_size": 1 << 20,
                   # no embedded Arrow schema: it would keep how the input named list items
                   "store_schema": False}
DEFAULT_ROWS_PER_FILE = 50_000
ENGINES = ("local", "ray")


class CorpusError(PiilabError):
    """Bad input or output of a corpus job; the message names file, line and field,
    never a value."""


def to_json(obj: Any) -> str:
    """Compact JSON with sorted keys and real UTF-8 (the mapping files' form)."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def shown_name(name: object, limit: int = 80) -> str:
    """A column or file name for a message: quoted, escaped, at most `limit` characters
    (a name comes from the input, so it may be long or hold a newline)."""
    text = repr(name) if isinstance(name, str) else f"<{type(name).__name__}>"
    return text if len(text) <= limit else text[:limit - 1] + "…"
