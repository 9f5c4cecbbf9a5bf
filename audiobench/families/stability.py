"""Stability: how far an encoder's output drifts when its input is perturbed (MSEB's super task).

A stability task holds clean utterances and no labels. Each is followed by ``n_variants``
perturbed copies made by the task itself, as MSEB makes them: SpecAugment masks on the STFT
magnitude, inverted with the original phase, seeded per utterance and variant
(:mod:`audiobench.families.spec_augment`; ids ``<clip id>_aug_<i>``). The copies are made from
the clip decoded at the task's canonical rate and embedded (and cached) like any other clip.
The encoder's output on the clean clip is the reference for its variants.

How the drift is scored belongs to the evaluator its ``protocol`` option selects;
``"mseb"`` (:mod:`audiobench.evaluators.stability`) is MSEB's: continuous (CED, DTW and the
matrix-2-norm "L2") or discrete (UED) distances, aggregated as ``Corpus_Mean_<m>`` and
``Mean_Local_IS_<m>`` (:mod:`audiobench.metrics.stability`). Lower is more stable.

``representation`` says which kind of output the task measures, as MSEB's two task kinds do:

- ``"continuous"`` (main score ``Corpus_Mean_CED``): vector outputs. With ``outputs="frames"``
  (default) the encoder's unpooled frame sequence ``[T, D]``; with ``"pooled"`` its pooled
  vector, a one-frame sequence ``[1, D]``. A ``[D]`` output is one frame.
- ``"discrete"`` (main score ``Corpus_Mean_UED``): code outputs (``output_kind="tokens"``),
  ``[T]`` or ``[T, Q]`` (the Q codes of a frame form one unit).

An encoder of the other kind is refused before any audio is decoded. Encoders that answer in
text (MSEB's transcripts, also discrete) are not supported yet: audiobench's encoders return
arrays only.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from audiobench.audio import ArrayAudioRef, Clip, load_waveform
from audiobench.encoder import Encoder, OutputKind
from audiobench.evaluators.evaluator import EvaluatedTask
from audiobench.families.mseb_options import MsebProtocolOptions
from audiobench.families.spec_augment import SpecAugmentConfig, spec_augment, variant_seed
from audiobench.task import TaskFamily

__all__ = ["StabilityTask"]

_DEFAULTS = SpecAugmentConfig()


class StabilityTask(EvaluatedTask):
    """Base class of stability tasks; subclasses declare metadata (and options)."""

    family: ClassVar[TaskFamily] = TaskFamily.STABILITY
    needs_labels = False  # the clean output is the reference

    class Options(MsebProtocolOptions):
        representation: Literal["continuous", "discrete"] = Field(
            "continuous",
            description="Vector outputs (CED, DTW, L2) or code outputs (UED), as MSEB's "
            "Continuous and Discrete stability tasks.",
        )
        outputs: Literal["frames", "pooled"] = Field(
            "frames",
            description="Continuous: the unpooled frame sequence, or the pooled vector as one "
            "frame.",
        )
        n_variants: int = Field(5, ge=1, le=100, description="Perturbed copies per utterance.")
        n_fft: int = Field(_DEFAULTS.n_fft, ge=2, description="SpecAugment: STFT size.")
        hop_length: int = Field(_DEFAULTS.hop_length, ge=1, description="SpecAugment: STFT hop.")
        max_freq_mask_proportion: float = Field(
            _DEFAULTS.max_freq_mask_proportion,
            ge=0.0,
            le=1.0,
            description="SpecAugment: largest share of frequency bins masked.",
        )
        max_time_mask_proportion: float = Field(
            _DEFAULTS.max_time_mask_proportion,
            ge=0.0,
            le=1.0,
            description="SpecAugment: largest share of frames masked.",
        )
        max_freq_mask_width: int = Field(
            _DEFAULTS.max_freq_mask_width, ge=1, description="SpecAugment: widest band (bins)."
        )
        max_time_mask_width: int = Field(
            _DEFAULTS.max_time_mask_width, ge=1, description="SpecAugment: widest band (frames)."
        )

        @model_validator(mode="after")
        def _hop_fits(self) -> StabilityTask.Options:
            # Frames farther apart than the window leave samples no frame covers.
            if self.hop_length > self.n_fft:
                raise ValueError(
                    f"hop_length ({self.hop_length}) must not exceed n_fft ({self.n_fft})"
                )
            return self

    options = Options()

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        kind = encoder.meta.output_kind
        discrete = cls.options.representation == "discrete"
        if discrete and kind != OutputKind.TOKENS:
            raise ValueError(
                f"model {encoder.meta.name!r} returns vectors ({kind}); {cls.metadata.name} "
                "measures the stability of discrete codes (UED): use a continuous stability "
                "task, or a model that returns codes"
            )
        if not discrete and kind == OutputKind.TOKENS:
            raise ValueError(
                f"model {encoder.meta.name!r} returns codes; {cls.metadata.name} measures the "
                "stability of vectors (CED): use a discrete stability task, or "
                "--task-option representation=discrete"
            )

    def embedding_passes(self, encoder: Encoder) -> tuple[bool, ...]:
        """The clean clips' outputs the evaluator reads: pooled vectors or unpooled outputs.

        The variants exist only during evaluation, so the Ray stage cannot fill them first.
        """
        o = self.options
        assert isinstance(o, StabilityTask.Options)
        return (o.representation == "continuous" and o.outputs == "pooled",)

    def spec_augment_config(self) -> SpecAugmentConfig:
        o = self.options
        assert isinstance(o, StabilityTask.Options)
        return SpecAugmentConfig(
            n_fft=o.n_fft,
            hop_length=o.hop_length,
            max_freq_mask_proportion=o.max_freq_mask_proportion,
            max_time_mask_proportion=o.max_time_mask_proportion,
            max_freq_mask_width=o.max_freq_mask_width,
            max_time_mask_width=o.max_time_mask_width,
        )

    def variants(self, clip: Clip) -> list[Clip]:
        """The perturbed copies of ``clip`` (ids ``<id>_aug_<i>``), decoded at the task's rate.

        Raises :class:`~audiobench.audio.AudioDecodeError` when the clip cannot be decoded.
        """
        o = self.options
        assert isinstance(o, StabilityTask.Options)
        rate = self.metadata.sample_rate
        wave = load_waveform(clip.audio, rate, clip_id=clip.id)
        config = self.spec_augment_config()
        out = []
        for i in range(o.n_variants):
            rng = np.random.default_rng(variant_seed(clip.id, i))
            samples = spec_augment(wave, config, rng)
            out.append(
                Clip(
                    id=f"{clip.id}_aug_{i}",
                    audio=ArrayAudioRef(
                        samples=samples, sample_rate=rate, name=f"variant {i} of clip {clip.id!r}"
                    ),
                    subset=clip.subset,
                    split=clip.split,
                )
            )
        return out
