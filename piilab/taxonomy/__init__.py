"""Label sets and the mapping between them, read from one file (chapter 08).

Chapter 08 ("Token classification") teaches this module. The course has two
label sets: the nine labels of the experiment (`piilab.labels.LABELS`, in
type-priority order) and an 18-label taxonomy for Korean financial-services
text (PERSON, RRN, FRN, CARD_NUMBER, ...). Both, and the mapping between them
in each direction, are written out in ``label-taxonomy.yaml`` next to this
file: the one place to read or change them. Each mapping entry names its
target label (or none) and a relation: ``equivalent``, ``narrower`` (the
source marks less than the target), ``broader`` (it marks more) or ``none``
(no counterpart, with a note saying why).

>>> taxonomy = load_taxonomy()
>>> len(taxonomy.labels("experiment")), len(taxonomy.labels("finance"))
(9, 18)
>>> to_finance("CARD"), to_finance("REL"), to_experiment("FRN")
('CARD_NUMBER', None, 'RRN')

The file is parsed by a small YAML-subset reader in this module (block
mappings and sequences, plain, single- or double-quoted scalars, ``null``,
``true``/``false``, integers, comments), so this module needs only the
standard library; anything outside the subset (flow collections, anchors,
block scalars, tabs) raises `TaxonomyError` naming the line. A test checks
that PyYAML reads the shipped file the same way, so it stays real YAML.

What it deliberately does not do: decide whether a value *is* PII (that is
the annotation of the data), or merge label sets. Mapping a span to a label
set where it has no counterpart is reported, never dropped silently
(`map_spans`).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = [
    "EXPERIMENT",
    "FINANCE",
    "RELATIONS",
    "TAXONOMY_FILE",
    "LabelMapping",
    "Taxonomy",
    "TaxonomyError",
    "experiment_labels",
    "finance_labels",
    "load_taxonomy",
    "map_spans",
    "parse_yaml_subset",
    "to_experiment",
    "to_finance",
]

#: The taxonomy file shipped inside the package.
TAXONOMY_FILE = "label-taxonomy.yaml"

#: Names of the two label sets in the file.
EXPERIMENT = "experiment"
FINANCE = "finance"

#: The relations a mapping entry may state (see the module docstring).
RELATIONS: tuple[str, ...] = ("equivalent", "narrower", "broader", "none")

_LABEL = re.compile(r"[A-Z][A-Z0-9_]*")


class TaxonomyError(ValueError):
    """The taxonomy file is malformed or inconsistent (names the file, line or label)."""


# --------------------------------------------------------------------------------
# The YAML subset
# --------------------------------------------------------------------------------

_INT = re.compile(r"[-+]?[0-9]+")
#: Plain scalars that YAML would read as something else than a string or that
#: start a construct outside the subset.
_UNSUPPORTED_START = tuple("[]{}&*!|>%@`")


def _strip_comment(line: str) -> str:
    """Drop a ``#`` comment (at the start, or after a space, outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"" and (i == 0 or line[i - 1] in " :-["):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] == " "):
            return line[:i]
    return line


def _scalar(text: str, where: str) -> Any:
    """One scalar: quoted string, null, boolean, integer or plain string."""
    if text.startswith('"'):
        if len(text) < 2 or not text.endswith('"'):
            raise TaxonomyError(f"{where}: unterminated double-quoted string")
        try:
            return json.loads(text)  # YAML's double-quoted escapes as far as JSON has them
        except json.JSONDecodeError:
            raise TaxonomyError(f"{where}: unsupported double-quoted string") from None
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'"):
            raise TaxonomyError(f"{where}: unterminated single-quoted string")
        return text[1:-1].replace("''", "'")
    if text in ("null", "~", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.fullmatch(text):
        return int(text)
    if text.startswith(_UNSUPPORTED_START) or ": " in text or text.endswith(":"):
        raise TaxonomyError(f"{where}: unsupported YAML construct (use block style)")
    return text


def _split_key(text: str, where: str) -> tuple[str, str] | None:
    """``key: value`` -> ``(key, value)``; None when `text` is not a mapping entry."""
    if text.startswith(('"', "'")):
        quote = text[0]
        close = text.find(quote, 1)
        if close == -1 or not text[close + 1:].startswith(":"):
            return None
        key, rest = _scalar(text[:close + 1], where), text[close + 2:]
    else:
        colon = text.find(": ")
        if colon == -1:
            if not text.endswith(":"):
                return None
            colon = len(text) - 1
        key, rest = text[:colon], text[colon + 1:]
        if not key or key.startswith(_UNSUPPORTED_START):
            raise TaxonomyError(f"{where}: unsupported mapping key")
    if rest and not rest.startswith(" "):
        return None
    return str(key), rest.strip()


def parse_yaml_subset(text: str, name: str = "<string>") -> Any:
    """Parse the YAML subset described in the module docstring.

    >>> parse_yaml_subset("a: 1\\nb:\\n  - x\\n  - name: y  # comment\\n    n: null\\n")
    {'a': 1, 'b': ['x', {'name': 'y', 'n': None}]}
    """
    lines: list[tuple[int, int, str]] = []  # (line number, indentation, content)
    for lineno, raw in enumerate(text.splitlines(), 1):
        content = _strip_comment(raw).rstrip()
        if not content.strip() or content.strip() == "---":
            continue
        stripped = content.lstrip(" ")
        if stripped.startswith("\t"):
            raise TaxonomyError(f"{name}:{lineno}: tabs are not allowed in indentation")
        lines.append((lineno, len(content) - len(stripped), stripped))
    if not lines:
        return None
    value, position = _block(lines, 0, lines[0][1], name)
    if position != len(lines):
        raise TaxonomyError(f"{name}:{lines[position][0]}: unexpected indentation")
    return value


def _block(lines: list[tuple[int, int, str]], i: int, indent: int, name: str) -> tuple[Any, int]:
    """Parse the block (sequence or mapping) whose lines start at `i` with `indent`."""
    if lines[i][2] == "-" or lines[i][2].startswith("- "):
        return _sequence(lines, i, indent, name)
    return _mapping(lines, i, indent, name)


def _nested(lines: list[tuple[int, int, str]], i: int, indent: int, name: str,
            allow_same_indent_sequence: bool) -> tuple[Any, int]:
    """The value of an entry with nothing after its ``:`` or ``-``: a deeper block, or null."""
    if i < len(lines):
        next_indent, next_text = lines[i][1], lines[i][2]
        if next_indent > indent:
            return _block(lines, i, next_indent, name)
        if (allow_same_indent_sequence and next_indent == indent
                and (next_text == "-" or next_text.startswith("- "))):
            return _sequence(lines, i, indent, name)
    return None, i


def _sequence(lines: list[tuple[int, int, str]], i: int, indent: int,
              name: str) -> tuple[list, int]:
    items: list[Any] = []
    while i < len(lines) and lines[i][1] == indent and (
            lines[i][2] == "-" or lines[i][2].startswith("- ")):
        lineno, _, text = lines[i]
        item = text[1:].strip()
        where = f"{name}:{lineno}"
        if not item:
            value, i = _nested(lines, i + 1, indent, name, allow_same_indent_sequence=False)
        elif _split_key(item, where) is not None:
            # "- key: value" opens a mapping whose keys line up with "key".
            column = indent + len(text) - len(item)
            lines[i] = (lineno, column, item)
            value, i = _mapping(lines, i, column, name)
        else:
            value, i = _scalar(item, where), i + 1
        items.append(value)
    return items, i


def _mapping(lines: list[tuple[int, int, str]], i: int, indent: int,
             name: str) -> tuple[dict, int]:
    out: dict[str, Any] = {}
    while i < len(lines) and lines[i][1] == indent:
        lineno, _, text = lines[i]
        where = f"{name}:{lineno}"
        entry = _split_key(text, where)
        if entry is None:
            raise TaxonomyError(f"{where}: expected 'key: value'")
        key, rest = entry
        if key in out:
            raise TaxonomyError(f"{where}: duplicate key {key!r}")
        if rest:
            out[key], i = _scalar(rest, where), i + 1
        else:
            out[key], i = _nested(lines, i + 1, indent, name, allow_same_indent_sequence=True)
    return out, i


# --------------------------------------------------------------------------------
# The taxonomy
# --------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelMapping:
    """Where one label goes in the other label set.

    `target` is None when there is no counterpart (`relation` ``"none"``);
    `note` explains anything less than an equivalence.
    """

    source: str
    target: str | None
    relation: str
    note: str = ""


@dataclass(frozen=True)
class Taxonomy:
    """The label sets (ordered label tuples) and the mappings between them.

    The mappings are keyed by ``(source set, target set)``, e.g.
    ``("experiment", "finance")``; each maps every source label to a
    `LabelMapping`. Everything is read-only.
    """

    version: int
    label_sets: Mapping[str, tuple[str, ...]]
    descriptions: Mapping[str, Mapping[str, str]]
    mappings: Mapping[tuple[str, str], Mapping[str, LabelMapping]]

    def labels(self, label_set: str) -> tuple[str, ...]:
        """The labels of one set, in file order (``"experiment"`` or ``"finance"``)."""
        try:
            return self.label_sets[label_set]
        except KeyError:
            raise KeyError(f"no label set {label_set!r}") from None

    def mapping(self, source: str, target: str) -> Mapping[str, LabelMapping]:
        """The mapping from one label set to another: source label -> `LabelMapping`."""
        try:
            return self.mappings[source, target]
        except KeyError:
            raise KeyError(f"no mapping from {source!r} to {target!r}") from None

    def map_label(self, label: str, source: str, target: str) -> str | None:
        """The counterpart of `label` (None when it has none); KeyError for an unknown label."""
        table = self.mapping(source, target)
        if label not in table:
            raise KeyError(f"{label!r} is not a label of {source!r}")
        return table[label].target


def _load_label_set(name: str, data: Any, where: str) -> tuple[tuple[str, ...], dict[str, str]]:
    if not isinstance(data, Mapping) or not isinstance(data.get("labels"), list):
        raise TaxonomyError(f"{where}: label set {name!r} needs a 'labels' list")
    labels: list[str] = []
    descriptions: dict[str, str] = {}
    for i, entry in enumerate(data["labels"]):
        label = entry.get("name") if isinstance(entry, Mapping) else None
        if not isinstance(label, str) or not _LABEL.fullmatch(label):
            raise TaxonomyError(f"{where}: {name}.labels[{i}] needs an uppercase 'name'")
        if label in descriptions:
            raise TaxonomyError(f"{where}: label {label} appears twice in {name!r}")
        labels.append(label)
        descriptions[label] = str(entry.get("description") or "")
    return tuple(labels), descriptions


def _load_mapping(source: str, target: str, data: Any, label_sets: Mapping[str, tuple[str, ...]],
                  where: str) -> dict[str, LabelMapping]:
    what = f"{where}: mapping {source}_to_{target}"
    if not isinstance(data, Mapping):
        raise TaxonomyError(f"{what} must be a mapping of labels")
    missing = [label for label in label_sets[source] if label not in data]
    extra = [label for label in data if label not in label_sets[source]]
    if missing or extra:
        raise TaxonomyError(f"{what} must list every {source} label once "
                            f"(missing: {missing}, unknown: {extra})")
    out: dict[str, LabelMapping] = {}
    for label in label_sets[source]:  # in label-set order
        entry = data[label]
        if not isinstance(entry, Mapping):
            raise TaxonomyError(f"{what}: {label} needs 'target' and 'relation'")
        mapped, relation, note = entry.get("target"), entry.get("relation"), entry.get("note", "")
        if relation not in RELATIONS:
            raise TaxonomyError(f"{what}: {label} has relation {relation!r}, "
                                f"expected one of {', '.join(RELATIONS)}")
        if mapped is None:
            if relation != "none" or not note:
                raise TaxonomyError(f"{what}: {label} has no target, so it needs relation "
                                    "'none' and a note saying why")
        elif mapped not in label_sets[target]:
            raise TaxonomyError(f"{what}: {label} maps to {mapped!r}, not a {target} label")
        elif relation == "none":
            raise TaxonomyError(f"{what}: {label} has a target but relation 'none'")
        out[label] = LabelMapping(label, mapped, relation, str(note or ""))
    return out


def _build(data: Any, where: str) -> Taxonomy:
    if not isinstance(data, Mapping) or not isinstance(data.get("label_sets"), Mapping):
        raise TaxonomyError(f"{where}: expected top-level 'label_sets' and 'mappings'")
    label_sets: dict[str, tuple[str, ...]] = {}
    descriptions: dict[str, Mapping[str, str]] = {}
    for name, body in data["label_sets"].items():
        label_sets[name], found = _load_label_set(name, body, where)
        descriptions[name] = MappingProxyType(found)
    mappings: dict[tuple[str, str], Mapping[str, LabelMapping]] = {}
    for key, body in (data.get("mappings") or {}).items():
        source, _, target = str(key).partition("_to_")
        if source not in label_sets or target not in label_sets:
            raise TaxonomyError(f"{where}: mapping {key!r} must be named SOURCE_to_TARGET "
                                f"with label sets {sorted(label_sets)}")
        mappings[source, target] = MappingProxyType(
            _load_mapping(source, target, body, label_sets, where))
    version = data.get("version")
    if not isinstance(version, int):
        raise TaxonomyError(f"{where}: 'version' must be an integer")
    return Taxonomy(version, MappingProxyType(label_sets), MappingProxyType(descriptions),
                    MappingProxyType(mappings))


def load_taxonomy(path: str | os.PathLike | None = None) -> Taxonomy:
    """Read and check a taxonomy file (default: the one shipped with the package).

    Checks: labels unique and uppercase per set; each mapping lists every
    source label once; targets belong to the target set or are null with
    relation ``none`` and a note. Raises `TaxonomyError` otherwise. The shipped
    file is read once and cached.
    """
    if path is None:
        return _shipped_taxonomy()
    path = Path(path)
    return _build(parse_yaml_subset(path.read_text(encoding="utf-8"), str(path)), str(path))


@functools.cache
def _shipped_taxonomy() -> Taxonomy:
    text = resources.files("piilab.taxonomy").joinpath(TAXONOMY_FILE).read_text(encoding="utf-8")
    return _build(parse_yaml_subset(text, TAXONOMY_FILE), TAXONOMY_FILE)


def experiment_labels() -> tuple[str, ...]:
    """The nine experiment labels, in type-priority order (equal to `piilab.labels.LABELS`)."""
    return load_taxonomy().labels(EXPERIMENT)


def finance_labels() -> tuple[str, ...]:
    """The 18 labels of the finance taxonomy, in file order."""
    return load_taxonomy().labels(FINANCE)


def to_finance(label: str) -> str | None:
    """The finance label of an experiment label, or None (``REL`` has none)."""
    return load_taxonomy().map_label(label, EXPERIMENT, FINANCE)


def to_experiment(label: str) -> str | None:
    """The experiment label of a finance label, or None (``DATE``, ``SECRET``, ...)."""
    return load_taxonomy().map_label(label, FINANCE, EXPERIMENT)


def map_spans(
    spans: Iterable[tuple[int, int, str]], source: str, target: str,
    taxonomy: Taxonomy | None = None,
) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """Relabel ``(start, end, label)`` spans from one label set to another.

    Returns ``(mapped, unmapped)``: the spans with a counterpart, relabelled,
    and the spans without one, unchanged, so that the caller decides what to do
    with them (nothing disappears silently). Order is kept.

    >>> map_spans([(0, 3, "PERSON"), (5, 8, "REL")], "experiment", "finance")
    ([(0, 3, 'PERSON')], [(5, 8, 'REL')])
    """
    table = (taxonomy or load_taxonomy()).mapping(source, target)
    mapped: list[tuple[int, int, str]] = []
    unmapped: list[tuple[int, int, str]] = []
    for start, end, label in spans:
        if label not in table:
            raise KeyError(f"{label!r} is not a label of {source!r}")
        counterpart = table[label].target
        if counterpart is None:
            unmapped.append((start, end, label))
        else:
            mapped.append((start, end, counterpart))
    return mapped, unmapped
