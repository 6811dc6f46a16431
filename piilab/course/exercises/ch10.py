"""Checkers for chapter 10 ("Masking a corpus").

- `check_mask_batch(fn)`: the learner writes the function a batch engine maps over a corpus
  (``map_batches`` in Ray Data, ``mapInPandas`` in Spark): it takes a batch
  ``{"id": [...], "source_text": [...]}`` and returns ``{"id", "masked_text", "mapping"}``,
  detecting with the rule baseline and masking with `piilab.masking.mask_text`. The
  checker runs it on `BATCH_TEXTS` as one batch and again cut into batches of one and of
  two, and reports, in this order: a result that is not a mapping or lacks a column; a
  ``source_text`` column passed through (the masked output must not carry it); columns of
  the wrong length; ids that do not come back in order; a document whose masked text still
  holds a value the rules find; a mapping that does not restore its document; and masked
  text that depends on how the corpus was cut into batches (tokens numbered per batch, not
  per document).

Messages name a document by its position and id, never a value. All texts are synthetic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from piilab.course.exercises import CheckResult, _say

__all__ = ["BATCH_IDS", "BATCH_TEXTS", "check_mask_batch"]

#: A small corpus: every value is synthetic (unassigned phone ranges, example.com mail).
BATCH_TEXTS: tuple[str, ...] = (
    "고객 김가상 님, 연락처 010-0123-4567 로 회신 부탁드립니다.",
    "Please call 010-0198-7654 after 6 pm; email mina.park@example.com.",
    "배송지 변경 요청: 이가은 님, 010-0111-2222.",
    "Order 4411 shipped; no personal details in this note.",
)
BATCH_IDS: tuple[str, ...] = ("t-001", "t-002", "t-003", "t-004")

_COLUMNS = ("id", "masked_text", "mapping")


def _run(fn: Callable, ids: list[str], texts: list[str]) -> Mapping[str, Any] | str:
    try:
        out = fn({"id": list(ids), "source_text": list(texts)})
    except Exception as exc:  # the learner's code: report the kind of error, not its text
        return type(exc).__name__
    return out


def check_mask_batch(fn: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 10, exercise 1: a ``map_batches`` function that detects, masks and keeps the
    mappings in a column of their own (see the module docstring for the order of checks)."""
    from piilab.baseline import extract
    from piilab.masking import reassemble_text

    if not callable(fn):
        return CheckResult(False, _say(lang, "ch10.not_callable", type=type(fn).__name__))
    ids, texts = list(BATCH_IDS), list(BATCH_TEXTS)
    whole = _run(fn, ids, texts)
    if isinstance(whole, str):
        return CheckResult(False, _say(lang, "ch10.raised", error=whole))
    if not isinstance(whole, Mapping):
        return CheckResult(False, _say(lang, "ch10.not_a_mapping", type=type(whole).__name__))
    missing = [c for c in _COLUMNS if c not in whole]
    if missing:
        return CheckResult(False, _say(lang, "ch10.missing_column", column=missing[0]))
    if "source_text" in whole:
        return CheckResult(False, _say(lang, "ch10.source_kept"))
    columns = {c: list(whole[c]) for c in _COLUMNS}
    short = [c for c in _COLUMNS if len(columns[c]) != len(texts)]
    if short:
        return CheckResult(False, _say(lang, "ch10.wrong_length", column=short[0],
                                       count=len(columns[short[0]]), documents=len(texts)))
    if [str(i) for i in columns["id"]] != ids:
        return CheckResult(False, _say(lang, "ch10.ids_out_of_order"))
    for k, (masked, mapping) in enumerate(zip(columns["masked_text"], columns["mapping"],
                                              strict=True)):
        if not isinstance(masked, str) or not isinstance(mapping, Mapping):
            return CheckResult(False, _say(lang, "ch10.wrong_types", index=k, id=ids[k]))
        if any(value in masked for _, value in extract(texts[k])):
            return CheckResult(False, _say(lang, "ch10.value_left", index=k, id=ids[k]))
        if reassemble_text(masked, dict(mapping)) != texts[k]:
            return CheckResult(False, _say(lang, "ch10.no_round_trip", index=k, id=ids[k]))
    for size in (1, 2):
        pieces: list[str] = []
        for start in range(0, len(texts), size):
            part = _run(fn, ids[start:start + size], texts[start:start + size])
            if isinstance(part, str):
                return CheckResult(False, _say(lang, "ch10.raised", error=part))
            pieces += list(part["masked_text"])
        if pieces != columns["masked_text"]:
            return CheckResult(False, _say(lang, "ch10.depends_on_batches", size=size))
    tokens = sum(len(m) for m in columns["mapping"])
    return CheckResult(True, _say(lang, "ch10.batch_correct", documents=len(texts),
                                  tokens=tokens))
