"""Reading JSON input: one function, every failure one `InputError` naming the place.

`loads_json(data, where)` is ``json.loads`` for text or UTF-8 bytes read from
an input file. Whatever is wrong with the input, the error is an `InputError`
whose message starts with `where` (``data/test.jsonl:3``, ``map.json``) and
says what is wrong, never what the input holds:

- not UTF-8 (the byte's position);
- malformed JSON (the decoder's reason and position; for a one-line record
  only the column, as the file's line is in `where`);
- nested too deeply (Python's recursion limit);
- a number with more digits than Python converts (4,300 by default,
  ``sys.get_int_max_str_digits``): ``json.loads`` raises a plain `ValueError`
  for it, which would otherwise look like any other bug.

Standard library only.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from piilab.errors import PiilabError

__all__ = ["InputError", "loads_json"]


class InputError(PiilabError):
    """An input file cannot be read as JSON; the message names the file (and line)."""


def loads_json(data: str | bytes, where: str) -> Any:
    """Parse `data` as JSON; raise `InputError` naming `where` on any failure.

    >>> loads_json('{"n": 1}', "x.json")
    {'n': 1}
    >>> loads_json('{"n": ' + "9" * 5000 + "}", "x.jsonl:2")
    Traceback (most recent call last):
    ...
    piilab.inputs.InputError: x.jsonl:2: a number has more digits than Python reads (limit 4300)
    """
    if isinstance(data, bytes | bytearray):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{where}: not UTF-8 (byte {exc.start + 1})") from None
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:  # its message names a position, never the text
        at = (f"column {exc.colno}" if exc.lineno == 1
              else f"line {exc.lineno}, column {exc.colno}")
        raise InputError(f"{where}: malformed JSON: {exc.msg} ({at})") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply") from None
    except ValueError:  # int(): more digits than sys.get_int_max_str_digits()
        raise InputError(f"{where}: a number has more digits than Python reads "
                         f"(limit {sys.get_int_max_str_digits()})") from None
