"""Version probes of transformers and TRL, in one place, each with the condition that retires it.

The rest of `piilab` is written against one release of each library; where two releases
that ``pyproject.toml`` allows spell something differently, the difference is probed here
and nowhere else. Each probe says when it can go: once the lower bound in
``pyproject.toml`` has passed the release that made the change, delete the probe and use
the new spelling directly.

Standard library only: a probe takes what it inspects as an argument (field names, a
model), so importing this module imports neither torch nor transformers.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

__all__ = ["cache_keyword", "checkpointing_name"]


def checkpointing_name(sft_config_fields: Iterable[str]) -> str:
    """The name of the activation-checkpointing option among `SFTConfig`'s fields.

    transformers 5 renamed ``gradient_checkpointing`` to ``activation_checkpointing``
    (TRL's `SFTConfig` inherits the field); releases before the rename only know the old
    name. Retire when: the ``transformers`` lower bound in ``pyproject.toml`` is a release
    whose `TrainingArguments` has ``activation_checkpointing``.

    >>> checkpointing_name(["gradient_checkpointing", "activation_checkpointing"])
    'activation_checkpointing'
    >>> checkpointing_name(["gradient_checkpointing"])
    'gradient_checkpointing'
    """
    names = set(sft_config_fields)
    return "activation_checkpointing" if "activation_checkpointing" in names \
        else "gradient_checkpointing"


def cache_keyword(model: Any) -> str:
    """The forward keyword of the KV cache of `model`: ``cache`` (recent transformers 5.x)
    or the older ``past_key_values``.

    A PEFT model is probed through its base model. Retire when: the ``transformers``
    lower bound in ``pyproject.toml`` is a release whose causal language models all take
    ``cache``.
    """
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    params = inspect.signature(base.forward).parameters
    return "cache" if "cache" in params else "past_key_values"
