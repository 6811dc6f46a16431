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

The file is YAML, read with PyYAML's safe loader (a dependency of the
package; imported when the file is first read). A syntax error raises
`TaxonomyError` naming the file and line; so does a file whose content breaks
the taxonomy's rules (`load_taxonomy`).

What it deliberately does not do: decide whether a value *is* PII (that is
the annotation of the data), or merge label sets. Mapping a span to a label
set where it has no counterpart is reported, never dropped silently
(`map_spans`).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from piilab.errors import PiilabError

__all__ = [
    "EXPERIMENT",
    "FINANCE",
    "RELATIONS",
    "TAXONOMY_FILE",
    "LabelMapping",
    "Taxonomy",
    "TaxonomyError",
    "UnknownLabelError",
    "experiment_labels",
    "finance_labels",
    "load_taxonomy",
    "map_spans",
    "read_yaml",
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


class TaxonomyError(PiilabError):
    """The taxonomy file is malformed or inconsistent (names the file, line or label)."""


class UnknownLabelError(TaxonomyError, KeyError):
    """A label set, a mapping or a label that the taxonomy does not have.

    It is a `KeyError` too, for code that looks labels up like keys. The message names
    the label set or mapping asked for (names of the taxonomy file), never the rejected
    label: a label handed in from data may be a value (swapped columns).
    """

    __str__ = PiilabError.__str__  # KeyError would quote the message


# --------------------------------------------------------------------------------
# Reading the file (PyYAML, safe loader)
# --------------------------------------------------------------------------------


def read_yaml(text: str, name: str = "<string>") -> Any:
    """`text` parsed by PyYAML's safe loader; a syntax error or a repeated key becomes a
    `TaxonomyError` naming ``name:line``.

    >>> read_yaml("a: 1  # comment")
    {'a': 1}
    """
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        """The safe loader, refusing a key that a mapping already has (a label listed twice
        would otherwise silently replace the first entry)."""

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, "duplicate key", key_node.start_mark)
            seen.add(key)
        return loader.construct_mapping(node)

    UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else "?"
        raise TaxonomyError(f"{name}:{line}: not valid YAML ({err.problem})") from None
    except yaml.YAMLError as err:
        raise TaxonomyError(f"{name}: not valid YAML ({type(err).__name__})") from None


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
            raise UnknownLabelError(f"no such label set; the sets are "
                                    f"{', '.join(sorted(self.label_sets))}") from None

    def mapping(self, source: str, target: str) -> Mapping[str, LabelMapping]:
        """The mapping from one label set to another: source label -> `LabelMapping`."""
        try:
            return self.mappings[source, target]
        except KeyError:
            raise UnknownLabelError("no mapping between these label sets; the mappings are "
                                    + ", ".join(f"{a}->{b}" for a, b in sorted(self.mappings))
                                    ) from None

    def map_label(self, label: str, source: str, target: str) -> str | None:
        """The counterpart of `label` (None when it has none); `UnknownLabelError` (a
        `KeyError`) for a label outside the `source` set."""
        table = self.mapping(source, target)
        if label not in table:
            raise UnknownLabelError(f"the label is not one of the {source!r} label set")
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
    return _build(read_yaml(path.read_text(encoding="utf-8"), str(path)), str(path))


@functools.cache
def _shipped_taxonomy() -> Taxonomy:
    text = resources.files("piilab.taxonomy").joinpath(TAXONOMY_FILE).read_text(encoding="utf-8")
    return _build(read_yaml(text, TAXONOMY_FILE), TAXONOMY_FILE)


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
    for number, (start, end, label) in enumerate(spans, 1):
        if label not in table:
            raise UnknownLabelError(f"span {number}: its label is not one of the {source!r} "
                                    "label set")
        counterpart = table[label].target
        if counterpart is None:
            unmapped.append((start, end, label))
        else:
            mapped.append((start, end, counterpart))
    return mapped, unmapped
