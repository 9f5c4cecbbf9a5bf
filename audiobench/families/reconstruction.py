"""Reconstruction: encode, decode, and compare the result with the original.

For codecs (``ModelMeta.can_decode``), such as EnCodec. Each clip goes
through the model and back:

1. ``embedder.embed(clips, pooled=False)`` gives the model's unpooled outputs
   (continuous latents ``[T, D]`` or integer codes ``[T, Q]``), cached like any
   embedding; ``encoder.decode`` turns them into waveforms at the model's
   ``meta.sample_rate``.
2. The original is decoded the way the model saw it
   (:func:`audiobench.audio.decode_clip`: the task's canonical rate, then the
   model's), so both waveforms share one rate and one band limit.
3. **Length matching.** A codec works in whole frames, so its output is
   usually a little longer than the input (EnCodec: ``ceil(n / hop) · hop``
   samples). The reconstruction is cut to the original's length; one that
   comes back *shorter* is zero-padded at the end (the missing audio counts
   as an error, as it should). Both counts are recorded in ``details``.
4. Per clip, at the model's rate: **SI-SDR** (dB) and **log-mel distance**
   (dB, :func:`audiobench.metrics.log_mel_distance`); reported as mean, std,
   median, min and max over clips. SI-SDR is +inf for an exact (or exactly
   scaled) reconstruction and −inf for a silent one; result files hold finite
   numbers only, so per-clip values are clipped to ±:data:`SI_SDR_CAP_DB` and
   the clipped clips are counted (``n_capped``). 100 dB is far above any lossy
   codec and about the float32 noise floor, so clipping changes no real score.
5. Originals and reconstructions are embedded with a declared **reference
   model** (registry name, :attr:`ReconstructionTask.reference_model`, and
   its pooling), after resampling both from the model's rate with soxr:
   **FAD** and **KAD** between the two sets, and the per-clip **embedding
   MSE**. These reference embeddings are not cached (the reconstructions
   exist only in memory).
6. **Bits per second** of the code stream: the encoder's own
   ``bits_per_second()`` when it has one and its outputs are codes; from the
   codes themselves (``Q · log2(codebook size) · frames per second``) when it
   has none. For continuous latents no code stream was used, so the figure is
   null with the reason (and the encoder's nominal bitrate, if it has one).

Main score: FAD, **lower is better**. Everything is computed over the whole
set in one group, ``"all"``; clips dropped under ``--on-error skip`` are left
out of both sets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import soxr

from audiobench.audio import Clip, decode_clip
from audiobench.encoder import Encoder
from audiobench.families.score_checks import number_problem
from audiobench.task import Embedder, Task, TaskFamily, TaskScores

__all__ = ["SI_SDR_CAP_DB", "ReconstructionTask", "summarise"]

#: Per-clip SI-SDR values are clipped to ±this many dB (see the module docstring).
SI_SDR_CAP_DB: float = 100.0

#: The one group a reconstruction result reports.
GROUP = "all"


#: Options other families take that a reconstruction run may be handed by a
#: multi-task CLI call; accepted, unused, and recorded as such.
def summarise(values: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Mean, std (population), median, min and max of per-clip values."""
    array = np.asarray(values, dtype=np.float64)
    return {
        "mean": float(array.mean()),
        "std": float(array.std()),
        "median": float(np.median(array)),
        "min": float(array.min()),
        "max": float(array.max()),
    }


def match_length(wave: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """``wave`` cut or zero-padded to ``n`` samples, and the signed change (+ padded, − cut)."""
    if len(wave) >= n:
        return wave[:n], n - len(wave)
    return np.concatenate([wave, np.zeros(n - len(wave), dtype=wave.dtype)]), n - len(wave)


class ReconstructionTask(Task):
    """Base class of reconstruction tasks; subclasses declare metadata and the reference model."""

    family: ClassVar[TaskFamily] = TaskFamily.RECONSTRUCTION
    #: Registry name of the model whose embeddings FAD, KAD and embedding MSE compare.
    reference_model: ClassVar[str] = "log-mel"
    #: Its pooling; None: the reference model's default. log-mel's default ("flatten")
    #: depends on clip length, so the default here is its mean over time.
    reference_pooling: ClassVar[str | None] = "mean_time"
    #: Clips decoded and reference-embedded per step (bounds memory on long sets).
    batch_size: ClassVar[int] = 16

    def __init__(
        self,
        *,
        reference_model: str | Encoder | None = None,
        reference_pooling: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.reference = reference_model if reference_model is not None else self.reference_model
        self.reference_pooling_name = (
            reference_pooling if reference_pooling is not None else type(self).reference_pooling
        )

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        if not encoder.meta.can_decode:
            raise ValueError(
                f"model {encoder.meta.name!r} cannot decode embeddings back to audio; "
                "reconstruction tasks need a codec such as encodec-24khz "
                "(or hf:<an EnCodec checkpoint>)"
            )

    # -- evaluation ----------------------------------------------------------------

    def _reference_encoder(self, device: str) -> Encoder:
        if isinstance(self.reference, Encoder):
            return self.reference
        from audiobench import registry

        return registry.models.create(
            self.reference, pooling=self.reference_pooling_name, device=device
        )

    def evaluate(self, embedder: Embedder, clips: Sequence[Clip]) -> TaskScores:
        from audiobench.metrics import (
            embedding_mse,
            frechet_audio_distance,
            kernel_audio_distance,
            log_mel_distance,
            si_sdr,
        )
        from audiobench.pooling import collate
        from audiobench.runner import inference_mode

        encoder = embedder.encoder
        self.check_encoder(encoder)
        kept, outputs = embedder.embed(clips, f"{self.name} encode", pooled=False)
        if len(kept) < 2:
            raise ValueError(
                f"task {self.name}: {len(kept)} clip(s) could be encoded; FAD and KAD need "
                "at least 2"
            )
        reference = self._reference_encoder(getattr(encoder, "device", "cpu"))
        model_rate = encoder.meta.sample_rate
        ref_rate = reference.meta.sample_rate
        task_rate = self.metadata.sample_rate

        sdr: list[float] = []
        mel: list[float] = []
        ref_original: list[np.ndarray] = []
        ref_rebuilt: list[np.ndarray] = []
        n_trimmed = n_padded = max_padding = 0
        bar = embedder.track(f"{self.name} decode + reference", len(kept), "clips")
        try:
            for start in range(0, len(kept), self.batch_size):
                batch = kept[start : start + self.batch_size]
                waves = self._decode(encoder, batch, outputs[start : start + self.batch_size])
                originals, rebuilt = [], []
                for clip, wave in zip(batch, waves, strict=True):
                    original = decode_clip(clip, task_rate, model_rate)
                    wave, change = match_length(wave, len(original))
                    n_trimmed += int(change < 0)
                    n_padded += int(change > 0)
                    max_padding = max(max_padding, change)
                    try:
                        sdr.append(si_sdr(original, wave))
                        mel.append(log_mel_distance(original, wave, model_rate))
                    except ValueError as exc:
                        raise ValueError(
                            f"task {self.name}: clip {clip.id!r} ({clip.audio.location}): {exc}"
                        ) from exc
                    originals.append(original)
                    rebuilt.append(wave)
                with inference_mode():
                    pair = reference.embed(
                        [_resample(w, model_rate, ref_rate) for w in originals + rebuilt]
                    )
                for clip, array in zip(batch + batch, pair, strict=True):
                    if not np.isfinite(np.asarray(array, dtype=np.float64)).all():
                        raise ValueError(
                            f"task {self.name}: reference model {reference.meta.name!r} gave "
                            f"non-finite values for clip {clip.id!r} ({clip.audio.location})"
                        )
                ref_original += pair[: len(batch)]
                ref_rebuilt += pair[len(batch) :]
                bar.advance(len(batch))
        finally:
            bar.close()

        stacked = collate(ref_original + ref_rebuilt).astype(np.float64)
        X, Y = stacked[: len(kept)], stacked[len(kept) :]
        sdr_array = np.asarray(sdr, dtype=np.float64)
        n_capped = int((np.abs(sdr_array) > SI_SDR_CAP_DB).sum())
        bits, bitrate = _bitrate(encoder, kept, outputs, embedder.durations)
        scores = {
            "fad": frechet_audio_distance(X, Y),
            "kad": kernel_audio_distance(X, Y),
            "embedding_mse": summarise(embedding_mse(X, Y, return_details=True).per_clip),
            "si_sdr": {
                **summarise(np.clip(sdr_array, -SI_SDR_CAP_DB, SI_SDR_CAP_DB)),
                "n_capped": n_capped,
            },
            "log_mel_distance": summarise(mel),
            "bits_per_second": bits,
            "n_clips": len(kept),
        }
        details: dict[str, Any] = {
            "reference_model": {
                "name": reference.meta.name,
                "revision": reference.revision,
                "pooling": reference.pooling.name,
                "sample_rate": ref_rate,
                "embedding_dim": int(X.shape[1]),
            },
            "compare_rate": model_rate,
            "length_matching": {
                "rule": "reconstruction cut to the original's length, or zero-padded at the end",
                "n_trimmed": n_trimmed,
                "n_padded": n_padded,
                "max_padded_samples": max_padding,
            },
            "si_sdr_cap_db": SI_SDR_CAP_DB,
            "kad": {"kernel": "polynomial", "degree": 3, "estimate": "unbiased MMD^2"},
            "bitrate": bitrate,
            "n_clips": len(kept),
        }
        return TaskScores(main_score=scores["fad"], scores={GROUP: scores}, details=details)

    def _decode(
        self, encoder: Encoder, batch: Sequence[Clip], outputs: Sequence[Any]
    ) -> list[np.ndarray]:
        """The model's waveforms for ``batch``, checked one per clip, 1-D and finite."""
        from audiobench.runner import inference_mode

        ids = ", ".join(repr(c.id) for c in batch[:3]) + (" ..." if len(batch) > 3 else "")
        try:
            with inference_mode():
                waves = encoder.decode([np.asarray(z) for z in outputs])
        except NotImplementedError as exc:
            raise ValueError(
                f"model {encoder.meta.name!r} declares can_decode but cannot decode: {exc}"
            ) from exc
        except Exception as exc:
            raise RuntimeError(
                f"task {self.name}: model {encoder.meta.name!r} failed to decode clips {ids}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if len(waves) != len(batch):
            raise RuntimeError(
                f"model {encoder.meta.name!r} decoded {len(waves)} waveforms for "
                f"{len(batch)} clips ({ids})"
            )
        out = []
        for clip, wave in zip(batch, waves, strict=True):
            array = np.asarray(wave, dtype=np.float32).reshape(-1)
            if array.size == 0 or not np.isfinite(array).all():
                problem = "an empty waveform" if array.size == 0 else "non-finite samples"
                raise ValueError(
                    f"task {self.name}: model {encoder.meta.name!r} decoded {problem} for clip "
                    f"{clip.id!r} ({clip.audio.location})"
                )
            out.append(array)
        return out

    # -- result checks -------------------------------------------------------------

    @classmethod
    def score_problems(cls, scores: dict[str, Any]) -> list[str]:
        """Unknown groups and fields, and values outside their range.

        ``scores`` holds one group, ``"all"``; ``aggregates`` is empty. Ranges:
        FAD, embedding MSE, log-mel distance, bits per second ≥ 0; KAD any
        finite number (an unbiased estimate); SI-SDR within ±SI_SDR_CAP_DB.
        """
        problems: list[str] = []
        for key, entry in scores.items():
            if key != GROUP:
                problems.append(f"{key}: unknown group; reconstruction results hold only {GROUP!r}")
                continue
            if not isinstance(entry, dict):
                problems.append(f"{key}: must be a mapping of scores")
                continue
            problems += _group_problems(key, entry)
        return problems


def _resample(wave: np.ndarray, rate: int, target: int) -> np.ndarray:
    if rate == target:
        return wave
    return soxr.resample(wave, rate, target, quality="HQ").astype(np.float32, copy=False)


def _bitrate(
    encoder: Encoder, clips: Sequence[Clip], outputs: Sequence[Any], durations: dict[str, float]
) -> tuple[float | None, dict[str, Any]]:
    """Bits per second of the code stream, and how it was found (or why it is null)."""
    from audiobench.metrics import bits_per_second

    nominal = getattr(encoder, "bits_per_second", None)
    arrays = [np.asarray(z) for z in outputs]
    if not all(np.issubdtype(a.dtype, np.integer) for a in arrays):
        info: dict[str, Any] = {
            "method": None,
            "reason": "the model's outputs are continuous latents, not codes: reconstruction "
            "used no quantised code stream",
        }
        if callable(nominal):
            info["nominal_bits_per_second"] = float(nominal())
            info["reason"] += " (nominal_bits_per_second is the bitrate its codes would have)"
        return None, info
    if callable(nominal):
        return float(nominal()), {"method": "encoder.bits_per_second()"}
    widths = {a.shape[1] if a.ndim == 2 else None for a in arrays}
    if len(widths) != 1 or None in widths:
        return None, {
            "method": None,
            "reason": f"codes are not [T, Q] arrays with one Q for every clip (Q: {widths})",
        }
    seconds = sum(durations[c.id] for c in clips)
    frames = sum(a.shape[0] for a in arrays)
    size = getattr(encoder, "codebook_size", None)
    if isinstance(size, int) and size >= 1:
        basis = "encoder.codebook_size"
    else:
        # The largest code seen bounds the codebook from below, so the bitrate is a lower bound.
        size, basis = int(max(int(a.max()) for a in arrays)) + 1, "largest code + 1 (lower bound)"
    value = bits_per_second(widths.pop(), size, frames / seconds)
    return value, {
        "method": "codes: Q * log2(codebook size) * frames per second",
        "codebook_size": size,
        "codebook_size_from": basis,
        "frame_rate": frames / seconds,
    }


_SUMMARY_FIELDS = frozenset({"mean", "std", "median", "min", "max"})


def _summary(where: str, entry: Any, low: float, high: float, extra: frozenset[str]) -> list[str]:
    if not isinstance(entry, dict):
        return [f"{where}: must be a mapping with mean, std, median, min, max"]
    problems = [f"{where}.{k}: unknown field" for k in entry if k not in _SUMMARY_FIELDS | extra]
    for field in sorted(_SUMMARY_FIELDS):
        if field not in entry:
            problems.append(f"{where}.{field}: missing field")
        elif field == "std":
            problems += number_problem(f"{where}.std", entry[field], 0.0, math.inf, nullable=False)
        else:
            problems += number_problem(f"{where}.{field}", entry[field], low, high, nullable=False)
    return problems


def _count(where: str, value: Any, low: int = 0) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        return [f"{where}: must be an integer ≥ {low}, not {value!r}"]
    return []


def _group_problems(key: str, entry: dict[str, Any]) -> list[str]:
    known = {
        "fad",
        "kad",
        "embedding_mse",
        "si_sdr",
        "log_mel_distance",
        "bits_per_second",
        "n_clips",
    }
    problems = [f"{key}.{field}: unknown field" for field in entry if field not in known]
    problems += [f"{key}.{field}: missing field" for field in sorted(known) if field not in entry]
    if problems:
        return problems
    problems += number_problem(f"{key}.fad", entry["fad"], 0.0, math.inf, nullable=False)
    problems += number_problem(f"{key}.kad", entry["kad"], -math.inf, math.inf, nullable=False)
    problems += number_problem(f"{key}.bits_per_second", entry["bits_per_second"], 0, math.inf)
    problems += _count(f"{key}.n_clips", entry["n_clips"], 2)
    problems += _summary(f"{key}.embedding_mse", entry["embedding_mse"], 0, math.inf, frozenset())
    problems += _summary(
        f"{key}.log_mel_distance", entry["log_mel_distance"], 0, math.inf, frozenset()
    )
    sdr = entry["si_sdr"]
    problems += _summary(
        f"{key}.si_sdr", sdr, -SI_SDR_CAP_DB, SI_SDR_CAP_DB, frozenset({"n_capped"})
    )
    if isinstance(sdr, dict):
        if "n_capped" not in sdr:
            problems.append(f"{key}.si_sdr.n_capped: missing field")
        else:
            problems += _count(f"{key}.si_sdr.n_capped", sdr["n_capped"])
    return problems
