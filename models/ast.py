"""Audio Spectrogram Transformer: patch tokens of a 128-band fbank, CLS and distillation first.

The feature extractor pads or cuts each clip to the model's ``max_length``
frames (1024 frames, 10.24 s, for the AudioSet checkpoints); longer clips are
cut to their start and counted in the run's warnings. A clip shorter than
one 25 ms filterbank frame (400 samples) is zero-padded to it first (also
counted), so it gets the same tokens alone or in any batch. Output is the token
sequence ``[2 + patches, 768]``; default pooling ``first_time`` is the CLS
token, ``mean_time`` averages all tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audiobench.encoder import ModelMeta, OutputKind
from audiobench.models.hf import HFEncoder, pad_to, to_numpy

__all__ = ["ASTEncoder"]


class ASTEncoder(HFEncoder):
    meta = ModelMeta(
        name="ast",
        source="MIT/ast-finetuned-audioset-10-10-0.4593",
        revision="main",
        sample_rate=16000,
        output_kind=OutputKind.SEQUENCE,
        embedding_dim=768,
        n_parameters=86_200_000,
        license="BSD-3-Clause",
        default_pooling="first_time",
        # The class and distillation tokens come first: token-level probes leave them out.
        n_prefix_tokens=2,
        description=(
            "Audio Spectrogram Transformer (AudioSet fine-tuned): token sequence, CLS token "
            "by default (pooling first_time), mean_time for the token mean; option layer=."
        ),
        reference="https://arxiv.org/abs/2104.01778",
    )

    def _load(self) -> None:
        import transformers

        self.feature_extractor = self._from_pretrained(
            transformers.ASTFeatureExtractor, what="feature extractor"
        )
        self.model = self._load_model(transformers.ASTModel)
        # The extractor and the model must agree on the patch grid.
        self.feature_extractor.max_length = int(self.model.config.max_length)
        self.window = int(self.model.config.max_length) * 160  # 10 ms frame shift at 16 kHz
        # One 25 ms analysis frame: the filterbank of anything shorter is empty.
        self.min_samples = max(400, round(0.025 * int(self.feature_extractor.sampling_rate)))

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.require_loaded()
        waves = []
        for w in waveforms:
            if len(w) > self.window:
                self.note(
                    f"longer than AST's {self.window / self.meta.sample_rate:g} s input; "
                    "only the start was encoded"
                )
            elif len(w) < self.min_samples:
                self.note(
                    f"shorter than AST's minimum input of {self.min_samples} samples "
                    f"({1000 * self.min_samples / self.meta.sample_rate:g} ms); zero-padded to it"
                )
                w = pad_to(w, self.min_samples)
            waves.append(w)
        inputs = self.feature_extractor(
            waves, sampling_rate=self.meta.sample_rate, return_tensors="pt"
        )
        outputs = self.model(**self._to_device(inputs), output_hidden_states=self.layer is not None)
        return list(to_numpy(self._hidden(outputs)))
