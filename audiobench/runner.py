"""Bulk embedding: decode, look up the cache, encode the misses, store, report progress.

Clips stream through in chunks. While the encoder works on one chunk, worker
threads decode the next (soundfile and soxr release the GIL). Within a
chunk, cache misses are sorted by length and batched, so a batch pads little;
each batch is committed to the cache as soon as it is encoded, which is what
makes a killed run resumable.

Every per-clip failure (unreadable, missing, too long or empty audio; an
encoder error; a NaN, infinite or empty embedding) raises, or under
``on_error="skip"`` is recorded in ``stats.skipped`` and the run goes on. A
cached entry that is not finite is never served: the clip is encoded again.
Two clips of one subset with the same waveform are always an error
(:class:`~audiobench.audio.DuplicateAudioError`) unless ``allow_duplicates``.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from audiobench.audio import (
    MAX_CLIP_SECONDS,
    AudioDecodeError,
    Clip,
    DuplicateAudioError,
    Resampler,
    decode_clip,
    waveform_hash,
)
from audiobench.batching import (
    BatchPlanner,
    free_accelerator_memory,
    is_out_of_memory,
    unusable,
)
from audiobench.cache import EmbeddingCache
from audiobench.efficiency import waveform_compression_ratio
from audiobench.encoder import Encoder
from audiobench.errors import UserError
from audiobench.outputs import (
    CONTEXT_KEY,
    WORD_TIMES_KEY,
    OutputType,
    SpeechInput,
    TextOutput,
    check_output,
    from_array,
    mseb_encoding_size_bytes,
    to_array,
)
from audiobench.pooling import check_collate_size
from audiobench.results import SkippedClip
from audiobench.task import Embedder
from audiobench.torch_runtime import default_threads, encoder_threads, inference_mode

__all__ = [
    "DECODE_WORKERS",
    "BatchSizeWarning",
    "CachedEmbedder",
    "EmbeddingError",
    "OnError",
    "RunStats",
    "SlowEncodingWarning",
    "free_accelerator_memory",
    "inference_mode",
    "is_out_of_memory",
]

#: Batches whose encoding rate is the reference for the rest of the run, and the window
#: of recent batches compared with it.
RATE_BATCHES = 3
#: How many times slower than the reference the recent window must run to be reported.
SLOW_FACTOR = 5.0

OnError = Literal["raise", "skip"]

#: Threads decoding the next chunk while the encoder works on this one.
DECODE_WORKERS = 2


class BatchSizeWarning(UserWarning):
    """The runner lowered the batch size after running out of accelerator memory."""


class SlowEncodingWarning(UserWarning):
    """Encoding fell far below the rate the run measured for its first batches."""


class EmbeddingError(UserError, RuntimeError):
    """The encoder failed on, or produced unusable output for, a specific clip."""

    def __init__(self, clip: Clip, reason: str) -> None:
        self.clip_id = clip.id
        super().__init__(f"clip {clip.id!r} ({clip.audio.location}): {_one_line(reason)}")


def _one_line(text: str) -> str:
    """The first line of a (possibly multi-line) error, marked when more followed.

    A user's terminal gets one line per error; the whole of the encoder's
    error stays in the exception chain (``--debug``).
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return text.strip()
    return lines[0] + (" [...]" if len(lines) > 1 else "")


@dataclass
class RunStats:
    # Counts of embeddings: a clip embedded pooled and unpooled counts in both passes.
    n_clips: int = 0
    n_cached: int = 0
    n_encoded: int = 0
    n_unpooled: int = 0  # of n_clips, those requested unpooled (frame-level)
    encode_s: float = 0.0  # inside the encoder
    wall_s: float = 0.0  # whole embedding passes: decoding, cache, encoding
    audio_seconds: float = 0.0  # of the clips encoded in this run
    embedded_seconds: float = 0.0  # of every clip embedded, cached or not
    embedding_bytes: int = 0  # of the pooled arrays handed to the task
    #: Per pooled clip: embedding bytes / float32 waveform bytes at the task's rate (MSEB).
    compression_ratios: list[float] = field(default_factory=list)
    embedding_sizes: list[int] = field(default_factory=list)
    #: Per clip handed to the task: MSEB's encoding size in bytes (an embedding's bytes; a
    #: text output as :func:`~audiobench.outputs.mseb_encoding_size_bytes` counts it).
    encoding_sizes: list[int] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    skipped: list[SkippedClip] = field(default_factory=list)


@dataclass
class _Decoded:
    clip: Clip
    wave: np.ndarray | None
    key: str | None
    error: Exception | None = None


class CachedEmbedder(Embedder):
    """The :class:`~audiobench.task.Embedder` used by evaluation runs.

    ``max_clip_seconds`` (None: no limit) refuses longer clips from their
    header, before decoding. ``allow_duplicates`` accepts clips of one subset
    that hold the same waveform under different ids (the task's declaration
    that its data has legitimate duplicates); otherwise they are an error
    naming both, whatever ``on_error`` says, since skipping one would change
    the dataset silently.
    """

    def __init__(
        self,
        encoder: Encoder,
        cache: EmbeddingCache | None,
        *,
        canonical_rate: int = 16000,
        batch_size: int = 16,
        on_error: OnError = "raise",
        workers: int = DECODE_WORKERS,
        chunk_size: int = 512,
        progress: ProgressHook | None = None,
        max_clip_seconds: float | None = MAX_CLIP_SECONDS,
        allow_duplicates: bool = False,
        threads: int | None = None,
        resampler: Resampler = "soxr",
    ) -> None:
        self.planner: BatchPlanner[_Decoded] = BatchPlanner(batch_size)
        self.encoder = encoder
        self.cache = cache
        self.canonical_rate = canonical_rate
        self.on_error = on_error
        self.workers = max(1, workers)
        if threads is not None and threads < 1:
            raise ValueError("threads must be at least 1")
        #: torch threads while encoding (see :mod:`audiobench.torch_runtime`).
        self.threads = threads if threads is not None else default_threads(self.workers)
        # (audio seconds, encoder seconds) of each batch, for the slow-encoding warning.
        self._rates: list[tuple[float, float]] = []
        self._warned_slow = False
        self.chunk_size = max(chunk_size, batch_size)
        self.progress = progress
        self.max_clip_seconds = max_clip_seconds
        #: How clips reach the model's rate (the task's protocol: :func:`decode_clip`).
        self.resampler: Resampler = resampler
        self.allow_duplicates = allow_duplicates
        # (subset, waveform hash) -> (clip id, location) of the first clip seen with it.
        self._first_with_audio: dict[tuple[str | None, str], tuple[str, str]] = {}
        self.stats = RunStats()
        self.durations: dict[str, float] = {}
        self._fingerprints = {
            pooled: encoder.fingerprint(pooled=pooled) for pooled in (True, False)
        }
        self._output_fingerprints: dict[OutputType, str] = {}
        self._pooled = True
        #: The text output being produced (None: embeddings, pooled or not).
        self._output: OutputType | None = None
        if cache is not None:
            cache.register_encoder(self._fingerprints[True], encoder.describe())
            cache.register_encoder(
                self._fingerprints[False], {**encoder.describe(), "pooling": "unpooled"}
            )

    @property
    def batch_size(self) -> int:
        """Clips per encoder batch; lowered for the rest of the run after out-of-memory."""
        return self.planner.size

    @property
    def _fingerprint(self) -> str:
        if self._output is not None:
            return self._output_fingerprint(self._output)
        return self._fingerprints[self._pooled]

    def _output_fingerprint(self, output: OutputType) -> str:
        known = self._output_fingerprints.get(output)
        if known is not None:
            return known
        fingerprint = self.encoder.fingerprint(output=output)
        if self.cache is not None:
            description = {**self.encoder.describe(), "pooling": None, "output": str(output)}
            self.cache.register_encoder(fingerprint, description)
        self._output_fingerprints[output] = fingerprint
        return fingerprint

    def track(self, description: str, total: int, unit: str) -> ProgressBar:
        if self.progress is None:
            return ProgressBar(total)
        return self.progress.start(description, total, unit)

    def embed(
        self, clips: Sequence[Clip], description: str, *, pooled: bool = True
    ) -> tuple[list[Clip], list[np.ndarray]]:
        self._pooled = pooled
        self._output = None
        self.encoder.load()  # once (later calls do nothing); encoders never load themselves
        t0 = time.perf_counter()
        kept: list[Clip] = []
        arrays: list[np.ndarray] = []
        bar = self.track(description, len(clips), "clips")
        try:
            for chunk in self._decoded_chunks(clips):
                done = self._embed_chunk(chunk, bar)
                for item in chunk:
                    if item.clip.id in done:
                        array = done[item.clip.id]
                        kept.append(item.clip)
                        arrays.append(array)
                        if not pooled:  # efficiency figures describe the pooled embedding
                            continue
                        self.stats.embedding_bytes += array.nbytes
                        self.stats.embedding_sizes.append(int(array.size))
                        self.stats.encoding_sizes.append(int(array.nbytes))
                        seconds = self.durations[item.clip.id]
                        self.stats.embedded_seconds += seconds
                        self.stats.compression_ratios.append(
                            waveform_compression_ratio(array.nbytes, seconds * self.canonical_rate)
                        )
        finally:
            bar.close()
            self.stats.wall_s += time.perf_counter() - t0
        if pooled:
            # Families pad and stack these; refuse here, where the clips can be named.
            check_collate_size([np.asarray(a) for a in arrays], [c.id for c in kept])
        return kept, arrays

    def outputs(
        self, clips: Sequence[Clip], description: str, output: OutputType
    ) -> tuple[list[Clip], list[TextOutput]]:
        """The clips that could be processed and the encoder's ``output`` for each.

        Cached under the encoder's fingerprint for ``output`` and each clip's waveform hash
        (and transcript, for an encoder that reads it), committed batch by batch like
        embeddings, so a killed run resumes; clips are length-sorted into batches.
        """
        if output is OutputType.EMBEDDING:
            raise ValueError("embeddings come from embed(), not outputs()")
        self._pooled, self._output = True, output
        self.encoder.load()
        self.encoder.check_output(output)  # a checkpoint that cannot: before any clip
        t0 = time.perf_counter()
        kept: list[Clip] = []
        produced: list[TextOutput] = []
        bar = self.track(description, len(clips), "clips")
        try:
            for chunk in self._decoded_chunks(clips):
                done = self._embed_chunk(chunk, bar)
                for item in chunk:
                    if item.clip.id not in done:
                        continue
                    value = from_array(done[item.clip.id], output)
                    size = mseb_encoding_size_bytes(value)
                    kept.append(item.clip)
                    produced.append(value)
                    seconds = self.durations[item.clip.id]
                    self.stats.embedding_bytes += size
                    self.stats.encoding_sizes.append(size)
                    self.stats.embedded_seconds += seconds
                    self.stats.compression_ratios.append(
                        waveform_compression_ratio(size, seconds * self.canonical_rate)
                    )
        finally:
            bar.close()
            self._output = None
            self.stats.wall_s += time.perf_counter() - t0
        return kept, produced

    def with_encoder(
        self, encoder: Encoder, *, allow_duplicates: bool | None = None
    ) -> CachedEmbedder:
        """An embedder for ``encoder`` with this one's cache, settings and skip record.

        For a family that embeds with a second model (reconstruction's reference model):
        its embeddings are cached, its clips decoded from the same canonical rate, its
        batches halved on out-of-memory errors (from the current batch size), and the clips
        it skips and its events land in this embedder's ``stats``. Its counts and timings
        stay in its own ``stats``, so a run's efficiency figures describe this encoder only.
        """
        other = CachedEmbedder(
            encoder,
            self.cache,
            canonical_rate=self.canonical_rate,
            batch_size=self.batch_size,
            on_error="skip" if self.on_error == "skip" else "raise",
            workers=self.workers,
            chunk_size=self.chunk_size,
            progress=self.progress,
            max_clip_seconds=self.max_clip_seconds,
            resampler=self.resampler,
            allow_duplicates=(
                self.allow_duplicates if allow_duplicates is None else allow_duplicates
            ),
            threads=self.threads,
        )
        other.stats = RunStats(skipped=self.stats.skipped, events=self.stats.events)
        return other

    def embed_text(self, texts: Sequence[str], description: str) -> np.ndarray:
        """Text embeddings in batches of ``batch_size``, with a progress bar."""
        self.encoder.load()
        bar = self.track(description, len(texts), "texts")
        parts = []
        try:
            with inference_mode(), encoder_threads(self.threads):
                for start in range(0, len(texts), self.batch_size):
                    batch = list(texts[start : start + self.batch_size])
                    z = np.asarray(self.encoder.encode_text(batch), dtype=np.float32)
                    if z.shape[0] != len(batch) or not np.isfinite(z).all():
                        raise RuntimeError(
                            f"model {self.encoder.meta.name!r} returned unusable text "
                            f"embeddings (shape {z.shape}) for texts {batch[:3]}..."
                        )
                    parts.append(z)
                    bar.advance(len(batch))
        finally:
            bar.close()
        return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)

    # -- stages ------------------------------------------------------------------

    def _decode(self, clip: Clip) -> _Decoded:
        rate = self.encoder.meta.sample_rate
        try:
            wave = decode_clip(
                clip,
                self.canonical_rate,
                rate,
                max_seconds=self.max_clip_seconds,
                resampler=self.resampler,
            )
        except AudioDecodeError as exc:
            return _Decoded(clip, None, None, exc)
        key = waveform_hash(wave, rate)
        if self._output is not None and self.encoder.reads_transcript:
            # The output is the transcript: the same audio under another text is another entry.
            truth = json.dumps([clip.text, clip.metadata.get(WORD_TIMES_KEY)]).encode()
            key = hashlib.blake2b(key.encode() + b"\0" + truth, digest_size=16).hexdigest()
        if self._output is not None and self.encoder.reads_context:
            # The answer depends on the text asked about: another context, another entry.
            context = json.dumps(clip.metadata.get(CONTEXT_KEY)).encode()
            key = hashlib.blake2b(
                key.encode() + b"\0context\0" + context, digest_size=16
            ).hexdigest()
        return _Decoded(clip, wave, key)

    def _decoded_chunks(self, clips: Sequence[Clip]) -> Iterator[list[_Decoded]]:
        """Yield decoded chunks, decoding chunk i+1 while chunk i is being encoded."""
        starts = range(0, len(clips), self.chunk_size)
        with ThreadPoolExecutor(self.workers, thread_name_prefix="audiobench-decode") as pool:
            pending: list[Future[_Decoded]] | None = None
            for start in starts:
                batch = [
                    pool.submit(self._decode, c) for c in clips[start : start + self.chunk_size]
                ]
                if pending is not None:
                    yield [f.result() for f in pending]
                pending = batch
            if pending is not None:
                yield [f.result() for f in pending]

    def skip(self, clips: Sequence[Clip], reason: str) -> None:
        """Record clips a family found unusable at scoring time (``on_error="skip"`` only)."""
        if self.on_error != "skip":
            raise ValueError(f"cannot skip clips under on_error={self.on_error!r}: {reason}")
        for clip in clips:
            self.stats.skipped.append(
                SkippedClip(id=clip.id, location=clip.audio.location, reason=reason)
            )

    def _skip_or_raise(self, clip: Clip, exc: Exception) -> None:
        if self.on_error == "raise":
            raise exc
        self.stats.skipped.append(
            SkippedClip(id=clip.id, location=clip.audio.location, reason=str(exc))
        )

    def _embed_chunk(self, chunk: list[_Decoded], bar: ProgressBar) -> dict[str, np.ndarray]:
        """Embeddings of the chunk's usable clips, keyed by clip id."""
        self.stats.n_clips += len(chunk)
        if not self._pooled:
            self.stats.n_unpooled += len(chunk)
        good: list[_Decoded] = []
        for item in chunk:
            if item.error is not None:
                self._skip_or_raise(item.clip, item.error)
                bar.advance(1)
            else:
                good.append(item)
                assert item.wave is not None
                self.durations[item.clip.id] = len(item.wave) / self.encoder.meta.sample_rate
        if not self.allow_duplicates:
            self._check_duplicates(good)
        keys = {item.key for item in good if item.key}
        found = self.cache.get_many(self._fingerprint, keys) if self.cache else {}
        self._drop_unusable(found, good)
        hits = [item for item in good if item.key in found]
        self.stats.n_cached += len(hits)
        bar.advance(len(hits))
        # Identical waveforms (duplicates across the dataset) are encoded once.
        todo = self.planner.distinct_by_length(
            (item for item in good if item.key not in found),
            key=lambda it: it.key or "",
            length=lambda it: len(it.wave) if it.wave is not None else 0,
        )
        for batch in self.planner.batches(todo):
            produced = self._encode_batch(batch)
            if self.cache is not None and produced:
                self.cache.put_many(self._fingerprint, list(produced.items()))
            found.update(produced)
            bar.advance(len(batch))
        bar.advance(len(good) - len(hits) - len(todo))  # in-chunk duplicates
        return {item.clip.id: found[item.key] for item in good if item.key in found}

    def _check_duplicates(self, items: list[_Decoded]) -> None:
        """Raise if a clip's waveform was already seen under another id in its subset."""
        for item in items:
            assert item.key is not None
            this = (item.clip.id, item.clip.audio.location)
            first = self._first_with_audio.setdefault((item.clip.subset, item.key), this)
            if first[0] != this[0]:
                raise DuplicateAudioError(first, this, item.clip.subset)

    def _drop_unusable(self, found: dict[str, np.ndarray], items: list[_Decoded]) -> None:
        """Remove cached arrays that are empty or not finite, so those clips are re-encoded.

        The runner never stores such arrays, so one in the cache is damage;
        the fresh encoding overwrites it (or fails and is skipped as usual).
        """
        bad = [key for key, arr in found.items() if self._unreadable(arr) is not None]
        for key in bad:
            del found[key]
        if bad:
            damaged = set(bad)
            ids = [item.clip.id for item in items if item.key in damaged]
            self.stats.events.append(
                f"{len(bad)} cached embedding(s) were empty or held NaN/Inf values and were "
                f"encoded again (clips {', '.join(repr(i) for i in ids[:5])}"
                f"{' and more' if len(ids) > 5 else ''})"
            )

    def _unreadable(self, array: np.ndarray) -> str | None:
        """Why a cached or fresh array cannot be served (:func:`unusable`, or for a text output
        an entry that does not parse back as one), or None."""
        reason = unusable(array)
        if reason is not None or self._output is None:
            return reason
        try:
            from_array(array, self._output)
        except ValueError as exc:
            return str(exc)
        return None

    def _produce(self, batch: list[_Decoded], output: OutputType) -> list[np.ndarray]:
        reads, asks = self.encoder.reads_transcript, self.encoder.reads_context
        inputs = [
            SpeechInput(
                item.clip.id,
                item.wave,
                item.clip.text if reads else None,
                item.clip.metadata.get(WORD_TIMES_KEY) if reads else None,
                item.clip.metadata.get(CONTEXT_KEY) if asks else None,
            )
            for item in batch
            if item.wave is not None
        ]
        values = self.encoder.produce(output, inputs)
        if len(values) != len(inputs):
            raise RuntimeError(
                f"encoder {self.encoder.meta.name!r} returned {len(values)} {output} outputs "
                f"for {len(inputs)} clips"
            )
        return [to_array(check_output(value, output)) for value in values]

    def _encode_batch(self, batch: list[_Decoded]) -> dict[str, np.ndarray]:
        waves = [item.wave for item in batch if item.wave is not None]
        t0 = time.perf_counter()
        try:
            with inference_mode(), encoder_threads(self.threads):
                if self._output is not None:
                    outputs = self._produce(batch, self._output)
                elif self._pooled:
                    outputs = self.encoder.embed(waves)
                else:
                    outputs = self.encoder.encode_audio(waves)
        except Exception as exc:
            if is_out_of_memory(exc) and len(batch) > 1:
                return self._retry_in_halves(batch, exc)
            if self.on_error == "raise" or len(batch) == 1:
                ids = ", ".join(repr(it.clip.id) for it in batch[:5])
                more = f" and {len(batch) - 5} more" if len(batch) > 5 else ""
                err = EmbeddingError(
                    batch[0].clip,
                    f"encoder failed on a batch with clips {ids}{more}: "
                    f"{type(exc).__name__}: {exc}",
                )
                if self.on_error == "raise":
                    raise err from exc
                self._skip_or_raise(batch[0].clip, err)
                return {}
            # Encode one by one to find and skip only the offending clips.
            out: dict[str, np.ndarray] = {}
            for item in batch:
                out.update(self._encode_batch([item]))
            return out
        elapsed = time.perf_counter() - t0
        self.stats.encode_s += elapsed
        rate = self.encoder.meta.sample_rate
        self._check_rate(sum(len(w) for w in waves) / rate, elapsed)
        produced: dict[str, np.ndarray] = {}
        for item, arr in zip(batch, outputs, strict=True):
            arr = np.asarray(arr)
            reason = unusable(arr)
            if reason is not None:
                self._skip_or_raise(item.clip, EmbeddingError(item.clip, reason))
                continue
            assert item.key is not None and item.wave is not None
            produced[item.key] = arr
            self.stats.n_encoded += 1
            self.stats.audio_seconds += len(item.wave) / rate
        return produced

    def _check_rate(self, audio_s: float, encode_s: float) -> None:
        """Warn once when the last batches encode far slower than the first ones did.

        The rate is seconds of audio per second inside the encoder, which
        batches of different lengths share (within a chunk, batches run from the
        shortest clips to the longest, so a fixed per-batch cost makes the
        first batches look slower, never faster). A drop usually means the
        CPU is shared: other processes, or more threads than cores.
        """
        self._rates.append((audio_s, encode_s))
        if self._warned_slow or len(self._rates) < 2 * RATE_BATCHES:
            return
        first = self._rates[:RATE_BATCHES]
        recent = self._rates[-RATE_BATCHES:]
        reference = sum(a for a, _ in first) / max(sum(s for _, s in first), 1e-9)
        now = sum(a for a, _ in recent) / max(sum(s for _, s in recent), 1e-9)
        if now * SLOW_FACTOR >= reference:
            return
        self._warned_slow = True
        message = (
            f"encoding slowed to {now:.3g} s of audio per second, "
            f"{reference / max(now, 1e-12):.0f}x below the {reference:.3g} of its first "
            f"{RATE_BATCHES} batches: the CPU may be shared with other work, or oversubscribed "
            f"(this run encodes with {self.threads} thread(s); set them with --threads)"
        )
        self.stats.events.append(message)
        warnings.warn(message, SlowEncodingWarning, stacklevel=2)

    def _retry_in_halves(self, batch: list[_Decoded], exc: Exception) -> dict[str, np.ndarray]:
        """Out of accelerator memory: free it, halve the batch, keep the smaller size."""
        half = self.planner.halve(len(batch))
        message = (
            f"out of memory on a batch of {len(batch)} clips ({type(exc).__name__}); "
            f"retrying in batches of {half} and continuing with --batch-size {self.batch_size}"
        )
        self.stats.events.append(message)
        warnings.warn(message, BatchSizeWarning, stacklevel=2)
        free_accelerator_memory()
        out = self._encode_batch(batch[:half])
        out.update(self._encode_batch(batch[half:]))
        return out


class ProgressBar:
    """One bar; subclasses draw it. The base class only counts."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.completed = 0

    def advance(self, n: int) -> None:
        self.completed += n

    def close(self) -> None:
        pass


class ProgressHook:
    """Factory of progress bars, so the runner does not depend on a UI library."""

    def start(self, description: str, total: int, unit: str = "clips") -> ProgressBar:
        return ProgressBar(total)
