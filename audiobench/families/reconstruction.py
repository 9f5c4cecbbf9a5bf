"""Reconstruction: encode, decode, and compare the result with the original.

For codecs (``ModelMeta.can_decode``), such as EnCodec. Each subset (one, ``"default"``,
for a task without declared subsets) goes through the model and back:

1. ``embedder.embed(clips, pooled=False)`` gives the model's unpooled outputs
   (continuous latents ``[T, D]`` or integer codes ``[T, Q]``), cached like any
   embedding; ``encoder.decode`` turns them into waveforms at the model's
   ``meta.sample_rate``, ``batch_size`` clips per call.
2. The original is decoded the way the model saw it
   (:func:`audiobench.audio.decode_clip`: the task's canonical rate, then the
   model's), so both waveforms share one rate and one band limit.
3. **Length matching.** A codec works in whole frames, so its output is
   usually a little longer than the input (EnCodec: ``ceil(n / hop) · hop``
   samples). The reconstruction is cut to the original's length; one that
   comes back *shorter* is zero-padded at the end (the missing audio counts
   as an error, as it should). Both counts are reported (``length_matching``).
4. Per clip, at the model's rate: **SI-SDR** (dB) and **log-mel distance**
   (dB, :func:`audiobench.metrics.log_mel_distance`); reported as mean, std,
   median, min and max over clips. SI-SDR is +inf for an exact (or exactly
   scaled) reconstruction and −inf for a silent one; result files hold finite
   numbers only, so per-clip values are clipped to ±:data:`SI_SDR_CAP_DB` and
   the clipped clips are counted (``n_capped``). 100 dB is far above any lossy
   codec and about the float32 noise floor, so clipping changes no real score.
5. Originals and reconstructions are embedded with a declared **reference
   model** (registry name, option ``reference_model``) through the run's
   embedder (:meth:`~audiobench.task.Embedder.with_encoder`), so its embeddings
   are cached, its batches halved on out-of-memory errors and its failures
   skipped like any other. Originals are ordinary clips, decoded from the task's
   canonical rate as in every task; each reconstruction is an in-memory clip
   (:class:`~audiobench.audio.ArrayAudioRef`, cached by its content) at the model's
   rate, which goes through the canonical rate too. So both sets are band-limited
   by the canonical rate, and a codec whose rate is below it loses the band above
   its own Nyquist frequency, which FAD and KAD see. Reconstructions are held in
   memory ``chunk_size`` clips at a time. From the reference model's **unpooled**
   frame sequences, as MSEB defines them
   (:func:`audiobench.metrics.reconstruction_embedding_scores`):

   - ``fad``: Fréchet Audio Distance between the bag of all frames of all
     originals and that of all reconstructions (ε = 1e-6 on the covariance
     diagonals inside the matrix square root);
   - ``kad``: Kernel Audio Distance over the same bags: 100 · unbiased MMD² with
     a Gaussian RBF kernel whose bandwidth is the median pairwise distance of
     the reconstructed frames (``kad_bandwidth``), clamped at 0;
   - ``embedding_mse``: per clip, the mean of (e_ref − e_rec)² over its frames'
     entries; the mean over clips is MSEB's figure (clips whose two frame
     sequences differ in length are left out and counted, ``n_skipped``).

   ``kid_poly`` is the earlier per-clip figure: the unbiased MMD² with the KID
   kernel (x·y / d + 1)³ between the reference model's *pooled* embeddings
   (option ``reference_pooling``; None: the model's default) of originals and
   reconstructions, unscaled and not clamped.
6. **Bits per second** of the code stream: the encoder's own
   ``bits_per_second()`` when it has one and its outputs are codes; from the
   codes themselves (``Q · log2(codebook size) · frames per second``) when it
   has none. For continuous latents no code stream was used, so the figure is
   null; how it was found (or why it is null, with the encoder's nominal bitrate
   if it has one) is in ``details["bitrate"][<subset>]``.

Main score: FAD, **lower is better**. Clips dropped under ``--on-error skip`` (by the
codec or by the reference model, original or reconstruction) are left out of both sets;
every score of a subset is over the same clips. With several subsets the summary is the
unweighted mean over subsets of each headline number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import closing
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import numpy as np
from pydantic import AfterValidator, Field, model_validator

from audiobench.audio import ArrayAudioRef, Clip, decode_clip
from audiobench.errors import DataError
from audiobench.evaluators.consistency import check_spread
from audiobench.reports import Count, NonNegative, Report, Summary, mean_or_none
from audiobench.reports import Report as AnyReport  # the class attribute Report shadows it
from audiobench.task import Embedder, Subset, Task, TaskFamily, TaskOptions

if TYPE_CHECKING:
    from audiobench.encoder import Encoder

__all__ = ["SI_SDR_CAP_DB", "ReconstructionReport", "ReconstructionSummary", "ReconstructionTask"]

#: Per-clip SI-SDR values are clipped to ±this many dB (see the module docstring).
SI_SDR_CAP_DB: float = 100.0

#: An SI-SDR value after clipping.
_Decibels = Annotated[float, Field(ge=-SI_SDR_CAP_DB, le=SI_SDR_CAP_DB)]


class PerClip(Report):
    """Mean, population std, median, min and max of a non-negative per-clip value."""

    mean: NonNegative
    std: NonNegative
    median: NonNegative
    min: NonNegative
    max: NonNegative

    @model_validator(mode="after")
    def _consistent(self) -> PerClip:
        """min ≤ mean, median ≤ max; the spread is at most half the range."""
        check_spread("", self.mean, self.std, self.median, self.min, self.max)
        return self


class EmbeddingMse(PerClip):
    """Per-clip embedding MSE; ``mean`` is MSEB's score."""

    n_evaluated: Count
    n_skipped: Count = Field(description="Clips whose two frame sequences differ in length.")


class SiSdr(Report):
    """Per-clip SI-SDR (dB) clipped to ±SI_SDR_CAP_DB, and how many values were clipped."""

    mean: _Decibels
    std: Annotated[float, Field(ge=0.0, le=SI_SDR_CAP_DB)]  # a spread of values within ±cap
    median: _Decibels
    min: _Decibels
    max: _Decibels
    n_capped: Count

    @model_validator(mode="after")
    def _consistent(self) -> SiSdr:
        """min ≤ mean, median ≤ max; the spread is at most half the range; a clip is capped
        only at a bound, so with none capped no value lies beyond ±cap."""
        check_spread("", self.mean, self.std, self.median, self.min, self.max)
        at_cap = self.min <= -SI_SDR_CAP_DB or self.max >= SI_SDR_CAP_DB
        if self.n_capped > 0 and not at_cap:
            raise ValueError(
                f"n_capped: {self.n_capped} clip(s) clipped to ±{SI_SDR_CAP_DB:g} dB, but min "
                f"and max ({self.min!r}, {self.max!r}) lie inside"
            )
        return self


class LengthMatching(Report):
    """Reconstructions cut to the original's length, or zero-padded at the end."""

    n_trimmed: Count
    n_padded: Count
    max_padded_samples: Count


class ReconstructionReport(Report):
    """One subset's scores (see the module docstring)."""

    fad: NonNegative
    kad: NonNegative
    kid_poly: float = Field(description="Unbiased polynomial-kernel MMD²; may be negative.")
    embedding_mse: EmbeddingMse | None = Field(
        description="None when no clip's two frame sequences have the same length."
    )
    si_sdr: SiSdr
    log_mel_distance: PerClip
    bits_per_second: NonNegative | None
    length_matching: LengthMatching
    kad_bandwidth: NonNegative
    n_frames_reference: Count
    n_frames_reconstructed: Count
    n_clips: Annotated[int, Field(ge=2)]

    @model_validator(mode="after")
    def _consistent(self) -> ReconstructionReport:
        """Every count is a count of the ``n_clips`` scored clips (or of their frames)."""
        n = self.n_clips
        counted = [
            ("si_sdr.n_capped", self.si_sdr.n_capped),
            (
                "length_matching.n_trimmed + n_padded",
                self.length_matching.n_trimmed + self.length_matching.n_padded,
            ),
        ]
        for name, value in counted:
            if value > n:
                raise ValueError(f"{name}: {value} exceeds n_clips ({n})")
        for name in ("n_frames_reference", "n_frames_reconstructed"):
            if getattr(self, name) < n:
                raise ValueError(
                    f"{name}: {getattr(self, name)} is below n_clips ({n}); a clip has a frame"
                )
        mse = self.embedding_mse
        if mse is not None:
            if mse.n_evaluated + mse.n_skipped != n:
                raise ValueError(
                    f"embedding_mse: n_evaluated + n_skipped ({mse.n_evaluated} + "
                    f"{mse.n_skipped}) is not n_clips ({n})"
                )
            if mse.n_evaluated == 0:
                raise ValueError("embedding_mse.n_evaluated: 0 (the figure is then null)")
            if mse.n_skipped == 0 and self.n_frames_reference != self.n_frames_reconstructed:
                raise ValueError(
                    f"n_frames_reconstructed: {self.n_frames_reconstructed} is not "
                    f"n_frames_reference ({self.n_frames_reference}), though every clip's two "
                    "frame sequences have one length (embedding_mse.n_skipped is 0)"
                )
        padded = self.length_matching
        if (padded.n_padded == 0) != (padded.max_padded_samples == 0):
            raise ValueError(
                f"length_matching.max_padded_samples: {padded.max_padded_samples} with "
                f"n_padded = {padded.n_padded}"
            )
        return self


class ReconstructionSummary(Summary):
    """Unweighted mean over subsets (None where any subset's value is undefined)."""

    fad: NonNegative | None
    kad: NonNegative | None
    kid_poly: float | None
    embedding_mse: NonNegative | None = Field(description="Mean of the subsets' MSEB figure.")
    si_sdr: _Decibels | None = Field(description="Mean of the subsets' mean SI-SDR.")
    log_mel_distance: NonNegative | None = Field(description="Mean of the subsets' means.")
    bits_per_second: NonNegative | None


#: The summary's numbers: one a main score may name.
SUMMARY_METRICS = tuple(f for f in ReconstructionSummary.model_fields if f != "subsets")


def match_length(wave: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """``wave`` cut or zero-padded to ``n`` samples, and the signed change (+ padded, − cut)."""
    return np.pad(wave[:n], (0, max(0, n - len(wave)))), n - len(wave)


def _pooling_name(value: str | None) -> str | None:
    from audiobench.pooling import Pooling

    if value is not None:
        Pooling.parse(value)
    return value


class ReconstructionTask(Task):
    """Base class of reconstruction tasks; subclasses declare metadata and the reference model."""

    family: ClassVar[TaskFamily] = TaskFamily.RECONSTRUCTION
    Report = ReconstructionReport
    Summary = ReconstructionSummary
    needs_labels = False

    class Options(TaskOptions):
        reference_model: str = Field(
            "log-mel",
            min_length=1,
            description="Registry name of the model whose embeddings FAD, KAD, embedding MSE "
            "and kid_poly compare.",
        )
        reference_pooling: Annotated[str | None, AfterValidator(_pooling_name)] = Field(
            "mean_time",
            description="The reference model's pooling for kid_poly (FAD, KAD and MSE use its "
            "unpooled frames); None: its default. log-mel's default ('flatten') depends on "
            "clip length, hence the mean over time.",
        )
        batch_size: int = Field(16, ge=1, description="Clips per call of the codec's decode.")
        chunk_size: int = Field(
            256, ge=1, description="Reconstructions held in memory and reference-embedded per step."
        )

    options = Options()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: Reference encoders made so far, by device: loaded once per task.
        self._references: dict[str, Encoder] = {}
        o = self.options
        #: Run-wide facts, completed while evaluating (reference model, comparison rate).
        self._run: dict[str, Any] = {
            "reference_model": {"name": o.reference_model, "pooling": o.reference_pooling},
            "compare_rate": None,
        }

    @classmethod
    def check_main_score(cls, path: tuple[str, ...]) -> None:
        cls.require_main_score(path, SUMMARY_METRICS)

    @classmethod
    def check_encoder(cls, encoder: Encoder) -> None:
        if not encoder.meta.can_decode:
            raise ValueError(
                f"model {encoder.meta.name!r} cannot decode embeddings back to audio; "
                "reconstruction tasks need a codec such as encodec-24khz "
                "(or hf:<an EnCodec checkpoint>)"
            )

    def embedding_passes(self, encoder: Encoder) -> tuple[bool, ...]:
        """The codec's unpooled outputs only (decoded back to audio)."""
        return (False,)

    # -- evaluation ----------------------------------------------------------------

    def _reference_encoder(self, encoder: Encoder) -> Encoder:
        """The reference model from the registry (one instance per task, model and device)."""
        from audiobench import registry

        device = getattr(encoder, "device", None) or self.device or "cpu"
        if device not in self._references:
            self._references[device] = registry.models.create(
                self.options.reference_model, pooling=self.options.reference_pooling, device=device
            )
        return self._references[device]

    def evaluate_subset(self, embedder: Embedder, subset: Subset) -> ReconstructionReport:
        from audiobench import metrics
        from audiobench.pooling import collate

        encoder = embedder.encoder
        self.check_encoder(encoder)
        kept, outputs = embedder.embed(subset.clips, f"{subset.label} encode", pooled=False)
        self._enough(kept, subset, "could be encoded")
        reference = self._reference_encoder(encoder)
        of_originals = embedder.with_encoder(reference)
        # Two reconstructions may legitimately coincide (a codec that silences both).
        of_rebuilt = embedder.with_encoder(reference, allow_duplicates=True)
        ref_kept, ref_frames = of_originals.embed(
            kept, f"{subset.label} reference (originals)", pooled=False
        )
        original_frames = {c.id: z for c, z in zip(ref_kept, ref_frames, strict=True)}
        codes = {c.id: z for c, z in zip(kept, outputs, strict=True)}
        kept = [c for c in kept if c.id in original_frames]
        self._enough(kept, subset, "could be embedded by the reference model")

        model_rate = encoder.meta.sample_rate
        # Per clip: SI-SDR, log-mel distance, samples added (+) or cut (−) by length matching.
        measured: dict[str, tuple[float, float, int]] = {}
        rebuilt_frames: dict[str, np.ndarray] = {}
        chunk = self.options.chunk_size
        with closing(embedder.track(f"{subset.label} decode", len(kept), "clips")) as bar:
            for start in range(0, len(kept), chunk):
                part = kept[start : start + chunk]
                rebuilt: list[Clip] = []
                for first in range(0, len(part), self.options.batch_size):
                    batch = part[first : first + self.options.batch_size]
                    waves = self._decode(encoder, batch, [codes[c.id] for c in batch], subset)
                    for clip, wave in zip(batch, waves, strict=True):
                        original = decode_clip(clip, self.metadata.sample_rate, model_rate)
                        wave, change = match_length(wave, len(original))
                        try:
                            measured[clip.id] = (
                                metrics.si_sdr(original, wave),
                                metrics.log_mel_distance(original, wave, model_rate),
                                change,
                            )
                        except ValueError as exc:
                            where = f"{subset.where}: clip {clip.id!r} ({clip.audio.location})"
                            raise DataError(f"{where}: {exc}") from exc
                        name = f"{encoder.meta.name} reconstruction of {clip.audio.location}"
                        audio = ArrayAudioRef(wave, model_rate, name=name)
                        rebuilt.append(Clip(clip.id, audio, subset=clip.subset, split=clip.split))
                    bar.advance(len(batch))
                done, frames = of_rebuilt.embed(
                    rebuilt, f"{subset.label} reference (reconstructions)", pooled=False
                )
                rebuilt_frames.update((c.id, z) for c, z in zip(done, frames, strict=True))
        final = [c for c in kept if c.id in rebuilt_frames]
        self._enough(final, subset, "could be embedded by the reference model after decoding")

        refs = [np.asarray(original_frames[c.id]) for c in final]
        recs = [np.asarray(rebuilt_frames[c.id]) for c in final]
        scores = metrics.reconstruction_embedding_scores(refs, recs)
        mse = metrics.embedding_mse_details(refs, recs)
        # kid_poly: the reference model's pooling of each clip's frames, as its embed() pools.
        rate = reference.meta.sample_rate
        pooled = [
            reference.pooling(z, reference.n_valid_frames(round(of.durations[c.id] * rate)))
            for of, frames_of in ((of_originals, refs), (of_rebuilt, recs))
            for c, z in zip(final, frames_of, strict=True)
        ]
        stacked = collate(pooled).astype(np.float64)
        sdr, mel, changes = zip(*(measured[c.id] for c in final), strict=True)
        bits, bitrate = _bitrate(encoder, final, [codes[c.id] for c in final], embedder.durations)
        subset.details["bitrate"] = bitrate
        self._run = {
            "reference_model": {
                "name": reference.meta.name,
                "revision": reference.revision,
                "pooling": reference.pooling.name,
                "sample_rate": reference.meta.sample_rate,
                "embedding_dim": int(refs[0].shape[-1]),
            },
            "compare_rate": model_rate,
        }
        return ReconstructionReport(
            fad=scores["fad"],
            kad=scores["kad"],
            kid_poly=metrics.polynomial_mmd(stacked[: len(final)], stacked[len(final) :]),
            embedding_mse=None
            if scores["embedding_mse"] is None
            else EmbeddingMse(
                **metrics.per_clip_summary(np.asarray(mse.per_clip, dtype=np.float64)),
                n_evaluated=mse.n_evaluated,
                n_skipped=mse.n_skipped,
            ),
            si_sdr=SiSdr(
                **metrics.per_clip_summary(np.clip(sdr, -SI_SDR_CAP_DB, SI_SDR_CAP_DB)),
                n_capped=int((np.abs(sdr) > SI_SDR_CAP_DB).sum()),
            ),
            log_mel_distance=PerClip(**metrics.per_clip_summary(mel)),
            bits_per_second=bits,
            length_matching=LengthMatching(
                n_trimmed=sum(c < 0 for c in changes),
                n_padded=sum(c > 0 for c in changes),
                max_padded_samples=max(0, *changes),
            ),
            kad_bandwidth=scores["kad_bandwidth"],
            n_frames_reference=scores["n_frames_reference"],
            n_frames_reconstructed=scores["n_frames_reconstructed"],
            n_clips=len(final),
        )

    def _enough(self, clips: Sequence[Clip], subset: Subset, what: str) -> None:
        if len(clips) < 2:
            raise DataError(
                f"{subset.where}: {len(clips)} clip(s) {what}; FAD and KAD need at least 2"
            )

    def _decode(
        self, encoder: Encoder, batch: Sequence[Clip], outputs: Sequence[Any], subset: Subset
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
            raise DataError(
                f"{subset.where}: model {encoder.meta.name!r} failed to decode clips {ids}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if len(waves) != len(batch):
            raise RuntimeError(
                f"model {encoder.meta.name!r} decoded {len(waves)} waveforms for "
                f"{len(batch)} clips ({ids})"
            )
        out = [np.asarray(wave, dtype=np.float32).reshape(-1) for wave in waves]
        for clip, array in zip(batch, out, strict=True):
            if array.size == 0 or not np.isfinite(array).all():
                problem = "an empty waveform" if array.size == 0 else "non-finite samples"
                raise DataError(
                    f"{subset.where}: model {encoder.meta.name!r} decoded {problem} for clip "
                    f"{clip.id!r} ({clip.audio.location})"
                )
        return out

    def summarize(self, reports: Mapping[str, AnyReport]) -> ReconstructionSummary:
        """Unweighted mean over subsets of each headline number (a per-clip summary's mean)."""
        # A per-clip figure (SI-SDR, log-mel distance, embedding MSE) counts by its mean.
        headline = {
            metric: mean_or_none(
                getattr(getattr(r, metric), "mean", getattr(r, metric)) for r in reports.values()
            )
            for metric in SUMMARY_METRICS
        }
        return ReconstructionSummary(subsets=list(reports), **headline)

    def run_facts(self) -> dict[str, Any]:
        from audiobench.metrics.reconstruction import FAD_COVARIANCE_EPS, KAD_SCALE

        return {
            **self._run,
            "length_matching": "reconstruction cut to the original's length, or zero-padded "
            "at the end",
            "si_sdr_cap_db": SI_SDR_CAP_DB,
            "embedding_scores": {
                "frames": "the reference model's unpooled frames; FAD and KAD over the bag of "
                "all frames of all clips of each set (MSEB)",
                "fad": {"covariance_eps": FAD_COVARIANCE_EPS},
                "kad": {
                    "kernel": "gaussian",
                    "bandwidth": "median pairwise distance of the reconstructed frames",
                    "scale": KAD_SCALE,
                    "estimate": "unbiased MMD^2, clamped at 0",
                },
                "embedding_mse": "per clip over its frames' entries, then the mean over clips; "
                "clips whose frame counts differ are left out",
                "kid_poly": {
                    "kernel": "polynomial",
                    "degree": 3,
                    "embeddings": "pooled, one per clip",
                    "estimate": "unbiased MMD^2",
                },
            },
        }


def _bitrate(
    encoder: Encoder, clips: Sequence[Clip], outputs: Sequence[Any], durations: dict[str, float]
) -> tuple[float | None, dict[str, Any]]:
    """Bits per second of the code stream, and how it was found (or why it is null)."""
    from audiobench.metrics import bits_per_second

    method = getattr(encoder, "bits_per_second", None)
    nominal = float(method()) if callable(method) else None
    arrays = [np.asarray(z) for z in outputs]
    if not all(np.issubdtype(a.dtype, np.integer) for a in arrays):
        reason = "the model's outputs are continuous latents, not codes: reconstruction used no "
        reason += "quantised code stream"
        if nominal is None:
            return None, {"method": None, "reason": reason}
        reason += " (nominal_bits_per_second is the bitrate its codes would have)"
        return None, {"method": None, "reason": reason, "nominal_bits_per_second": nominal}
    if nominal is not None:
        return nominal, {"method": "encoder.bits_per_second()"}
    widths = {a.shape[1] if a.ndim == 2 else None for a in arrays}
    if len(widths) != 1 or None in widths:
        reason = f"codes are not [T, Q] arrays with one Q for every clip (Q: {widths})"
        return None, {"method": None, "reason": reason}
    frame_rate = sum(a.shape[0] for a in arrays) / sum(durations[c.id] for c in clips)
    size = getattr(encoder, "codebook_size", None)
    if isinstance(size, int) and size >= 1:
        basis = "encoder.codebook_size"
    else:
        # The largest code seen bounds the codebook from below, so the bitrate is a lower bound.
        size, basis = max(int(a.max()) for a in arrays) + 1, "largest code + 1 (lower bound)"
    # Every clip's codes have the same Q (checked above).
    return bits_per_second(arrays[0].shape[1], size, frame_rate), {
        "method": "codes: Q * log2(codebook size) * frames per second",
        "codebook_size": size,
        "codebook_size_from": basis,
        "frame_rate": frame_rate,
    }
