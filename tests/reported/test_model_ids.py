"""The one table of hub model ids: each entry names a registered model loading those weights."""

from __future__ import annotations

import pytest

from audiobench import registry
from audiobench.reported.model_ids import HUB_MODELS, audiobench_model, hub_id


@pytest.mark.parametrize(("hub", "name"), sorted(HUB_MODELS.items()))
def test_each_entry_is_a_registered_model_with_that_source(hub: str, name: str) -> None:
    assert registry.models.get(name).meta.source == hub


def test_both_spellings_of_a_model_meet_at_its_hub_id() -> None:
    assert audiobench_model("openai/whisper-large-v3") == "whisper-large-v3"
    assert audiobench_model("acme/unlisted") == "hf:acme/unlisted"
    for spelling in ("whisper-large-v3", "hf:openai/whisper-large-v3", "openai/whisper-large-v3"):
        assert hub_id(spelling) == "openai/whisper-large-v3"
    assert hub_id("log-mel") == "log-mel"  # a model of no hub is itself


def test_every_model_audiobench_ships_with_hub_weights_is_in_the_table() -> None:
    missing = []
    for name in registry.models.names():
        try:
            cls = registry.models.get(name)
        except Exception:  # a plugin that fails to load is not ours to list
            continue
        source = cls.meta.source
        if cls.__module__.startswith("audiobench.") and source and source not in HUB_MODELS:
            missing.append((name, source))
    assert missing == []
