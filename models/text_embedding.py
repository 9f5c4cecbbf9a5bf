"""Sentence embedding models: a transformers text encoder, mean-pooled over its tokens.

The text side of MSEB's cascade and oracle baselines. MSEB embeds transcripts, documents,
candidates and spans with a text embedding model (Gecko / Gemini embeddings behind an API);
audiobench's open stand-in is a multilingual sentence-transformers checkpoint loaded with
transformers:

- ``paraphrase-multilingual-mpnet`` (the default, pinned):
  ``sentence-transformers/paraphrase-multilingual-mpnet-base-v2`` at revision
  ``79f2382ceacceacdf38563d7c5d16b9ff8d725d6``, 768-d like Gecko, trained on 50+ languages
  (SVQ's 17 languages included), 278 M parameters, Apache-2.0.
- ``text:<hub id or directory>``: any transformers text encoder (BERT, XLM-R, MPNet, E5...)
  with the same recipe; ``revision=`` pins a hub commit.

**Recipe** (sentence-transformers' mean pooling): tokenise (truncated to ``max_length``
tokens, 128 by default as this checkpoint's sentence-transformers configuration), run the
encoder, average the last hidden states over the non-padding tokens (the attention mask), and
L2-normalise (``normalize=true``, the default, so that MSEB's raw dot product is the cosine
the model was trained for). ``prefix`` is prepended to every text (``"query: "`` for E5).

A text model has no audio side: it produces no output for a clip (a task that reads audio
refuses it before any work) and is used as the ``<text model>`` of
``cascade:<asr>+<text model>`` or where a task embeds text (documents, candidates, spans).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field

from audiobench.encoder import Modality, ModelMeta, OutputKind
from audiobench.errors import OptionError
from audiobench.models.hf import HFEncoder, to_numpy
from audiobench.models.loading import from_pretrained, local_directory
from audiobench.torch_runtime import inference_mode

__all__ = ["SentenceEmbedder", "mean_pool", "text_encoder"]


def mean_pool(hidden: Any, mask: Any) -> Any:
    """Mean of ``hidden`` ``[B, T, D]`` over the tokens where ``mask`` ``[B, T]`` is 1."""
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)


class SentenceEmbedder(HFEncoder):
    """A text encoder with mean pooling (module docstring)."""

    meta = ModelMeta(
        name="paraphrase-multilingual-mpnet",
        source="sentence-transformers/paraphrase-multilingual-mpnet-base-v2",
        revision="79f2382ceacceacdf38563d7c5d16b9ff8d725d6",
        sample_rate=16000,  # unused: no audio side
        output_kind=OutputKind.VECTOR,
        embedding_dim=768,
        n_parameters=278_000_000,
        license="Apache-2.0",
        modalities=(Modality.TEXT,),
        default_pooling="none",
        description=(
            "Multilingual sentence embedding (XLM-R/MPNet, 768-d, mean pooling, normalised): "
            "the text side of MSEB-style cascades (cascade:<asr>+paraphrase-multilingual-mpnet) "
            "and of the transcript-truth oracle."
        ),
        reference="https://arxiv.org/abs/2004.09813",
    )
    # No output for a clip: a task that needs one refuses this model up front.
    produces = frozenset()

    class Options(HFEncoder.Options):
        max_length: int = Field(
            default=128, ge=1, description="Tokens kept per text (longer texts are truncated)."
        )
        normalize: bool = Field(
            default=True,
            description="L2-normalise each embedding (then a dot product is the cosine).",
        )
        prefix: str = Field(default="", description="Prepended to every text, e.g. 'query: '.")

    options: Options

    def _load(self) -> None:
        import transformers

        self.tokenizer = self._from_pretrained(transformers.AutoTokenizer, what="tokenizer")
        self.model = self._load_model(transformers.AutoModel)

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError(
            f"model {self.meta.name!r} embeds text only; use it as the text side of a cascade: "
            f"--model cascade:<asr model>+{self.meta.name}"
        )

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        self.require_loaded()
        if isinstance(texts, str):
            raise ValueError("encode_text takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self.meta.embedding_dim or 0), dtype=np.float32)
        tokens = self.tokenizer(
            [self.options.prefix + text for text in texts],
            padding=True,
            truncation=True,
            max_length=self.options.max_length,
            return_tensors="pt",
        )
        inputs = self._to_device(tokens)
        with inference_mode():
            hidden = self._hidden(self.model(**inputs, output_hidden_states=self.layer is not None))
            pooled = mean_pool(hidden.float(), inputs["attention_mask"])
            if self.options.normalize:
                pooled = torch.nn.functional.normalize(pooled, p=2.0, dim=-1)
        return to_numpy(pooled)


def text_encoder(argument: str, **kwargs: Any) -> SentenceEmbedder:
    """``text:<hub id or directory>``: any transformers text encoder with mean pooling."""
    import transformers

    if not argument:
        raise OptionError(
            "text: needs a hub id or a local directory, e.g. "
            "text:sentence-transformers/paraphrase-multilingual-mpnet-base-v2"
        )
    name = f"text:{argument}"
    local_directory(argument, f"model {name!r}")
    revision = kwargs.get("revision")
    config = from_pretrained(
        transformers.AutoConfig,
        argument,
        revision=revision,
        trust_remote_code=bool(kwargs.get("trust_remote_code", False)),
        what="configuration",
    )
    dim = getattr(config, "hidden_size", None)
    meta = SentenceEmbedder.meta.model_copy(
        update={
            "name": name,
            "source": argument,
            "revision": revision or "main",
            "embedding_dim": int(dim) if isinstance(dim, int) else None,
            "n_parameters": None,
            "description": f"Sentence embedding (mean pooling) of {argument}.",
        }
    )
    return SentenceEmbedder(meta=meta, config=config, **kwargs)
