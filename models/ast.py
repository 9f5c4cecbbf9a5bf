"""Audio Spectrogram Transformer: patch tokens of a 128-band fbank, CLS and distillation first.

The feature extractor pads or cuts each clip to the model's ``max_length``
frames (1024 frames, 10.24 s, for the AudioSet checkpoints); longer clips are
cut to their start and counted in the run's warnings. A clip shorter than
one 25 ms filterbank frame (400 samples) is zero-padded to it first (also
counted), so it gets the same tokens alone or in any batch. Output is the token
sequence ``[2 + patches, 768]``; default pooling ``first_time`` is the CLS
token, ``mean_time`` averages all tokens.

The patches are a grid (:class:`~audiobench.encoder.PatchGrid`, read from the
checkpoint's config): ``patch_size`` squares every ``frequency_stride`` bands
and ``time_stride`` frames, ``(num_mel_bins − patch_size) // frequency_stride + 1``
frequency rows of ``(max_length − patch_size) // time_stride + 1`` time columns,
frequency-major (12 × 101 for the AudioSet checkpoints). A clip of ``n`` samples
fills ``1 + (n − 400) // 160`` filterbank frames (25 ms frames every 10 ms, none
past the end); the time columns that start past them read only padding, and
token-level probes leave them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from audiobench.encoder import ModelMeta, OutputKind, PatchGrid
from audiobench.models.hf import HFEncoder, pad_to, to_numpy

__all__ = ["ASTEncoder", "patch_grid"]

#: The filterbank's frames: 25 ms windows every 10 ms (400 and 160 samples at 16 kHz).
FRAME_LENGTH_S = 0.025
FRAME_RATE = 100.0


def patch_grid(config: Any) -> PatchGrid:
    """The patch grid of an ``ASTConfig``, as ``ASTEmbeddings.get_shape`` computes it."""
    size, max_length = int(config.patch_size), int(config.max_length)
    frequency_stride, time_stride = int(config.frequency_stride), int(config.time_stride)
    return PatchGrid(
        rows=(int(config.num_mel_bins) - size) // frequency_stride + 1,
        columns=(max_length - size) // time_stride + 1,
        column_stride=time_stride,
        patch_frames=size,
        window_frames=max_length,
        frame_rate=FRAME_RATE,
        frame_length=FRAME_LENGTH_S,
    )


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
        # 16 × 16 patches every 10 bands and 10 frames of 128 × 1024 (the checkpoint's
        # config, read again on loading).
        patch_grid=PatchGrid(
            rows=12,
            columns=101,
            column_stride=10,
            patch_frames=16,
            window_frames=1024,
            frame_rate=FRAME_RATE,
            frame_length=FRAME_LENGTH_S,
        ),
        description=(
            "Audio Spectrogram Transformer (AudioSet fine-tuned): token sequence, CLS token "
            "by default (pooling first_time), mean_time for the token mean; option layer=."
        ),
        reference="https://arxiv.org/abs/2104.01778",
    )

    @classmethod
    def meta_for(cls, name: str, source: str, revision: str, config: Any) -> ModelMeta:
        """Adds the checkpoint's own patch grid."""
        meta = super().meta_for(name, source, revision, config)
        return meta.model_copy(update={"patch_grid": patch_grid(config)})

    def _load(self) -> None:
        import transformers

        self.feature_extractor = self._from_pretrained(
            transformers.ASTFeatureExtractor, what="feature extractor"
        )
        self.model = self._load_model(transformers.ASTModel)
        # The extractor and the model must agree on the patch grid.
        self.feature_extractor.max_length = int(self.model.config.max_length)
        # The weights loaded (--weights may name another checkpoint) set the grid.
        grid = patch_grid(self.model.config)
        if grid != self.meta.patch_grid:
            self.meta = self.meta.model_copy(update={"patch_grid": grid})
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
