"""The one table pairing hub model ids with the audiobench models that compute their embeddings.

A published result names its model by hub id (``openai/whisper-large-v3``); a run here names
it by the audiobench model that was run (``whisper-large-v3``, or ``hf:openai/whisper-large-v3``
for the automatic hub loader). :data:`HUB_MODELS` pairs the two for every registered model that
loads published weights, so ``results import-mteb`` records which audiobench model reproduces
an imported result and ``results compare`` pairs a run with the published number. A hub id not
in the table is still paired with ``hf:<id>``, which loads the same weights.

Same weights are not always the same embeddings: the publisher's wrapper chooses its layer and
pooling, and audiobench's named model may choose another (``--pooling`` changes it).
``results compare`` is how such a difference shows.
"""

from __future__ import annotations

__all__ = ["HF_PREFIX", "HUB_MODELS", "audiobench_model", "hub_id"]

#: The automatic hub loader's prefix: ``hf:<hub id>`` loads any hub checkpoint.
HF_PREFIX = "hf:"

#: Hub id -> the registered audiobench model loading those weights (its ``meta.source``).
HUB_MODELS: dict[str, str] = {
    "openai/whisper-large-v3": "whisper-large-v3",
    "openai/whisper-large-v3-turbo": "whisper-large-v3-turbo",
    "openai/whisper-medium": "whisper-medium",
    "openai/whisper-small": "whisper-small",
    "openai/whisper-base": "whisper-base",
    "openai/whisper-tiny": "whisper-tiny",
    "microsoft/wavlm-large": "wavlm-large",
    "microsoft/wavlm-base-plus": "wavlm-base-plus",
    "facebook/wav2vec2-base": "wav2vec2-base",
    "facebook/wav2vec2-large-lv60": "wav2vec2-large",
    "facebook/hubert-base-ls960": "hubert-base",
    "facebook/hubert-large-ll60k": "hubert-large",
    "laion/clap-htsat-unfused": "clap",
    "laion/larger_clap_music_and_speech": "clap-music-speech",
    "facebook/encodec_24khz": "encodec-24khz",
    "MIT/ast-finetuned-audioset-10-10-0.4593": "ast",
    "sentence-transformers/paraphrase-multilingual-mpnet-base-v2": "paraphrase-multilingual-mpnet",
}

_BY_NAME = {name: hub for hub, name in HUB_MODELS.items()}


def audiobench_model(hub: str) -> str:
    """The audiobench model computing ``hub``'s embeddings: its named model, else ``hf:<id>``."""
    return HUB_MODELS.get(hub, f"{HF_PREFIX}{hub}")


def hub_id(name: str) -> str:
    """The hub id a model name stands for, so that both spellings of one model meet.

    A named audiobench model gives its table entry, ``hf:<id>`` gives ``<id>``, and any other
    name (a hub id as published, a model of no hub) is itself.
    """
    if name in _BY_NAME:
        return _BY_NAME[name]
    return name.removeprefix(HF_PREFIX)
