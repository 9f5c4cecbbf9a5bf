"""Typed encoder outputs beyond vectors: transcripts, timed words, scored text choices.

An encoder declares the outputs it produces (:attr:`audiobench.encoder.Encoder.produces`), a
task the one it needs (:attr:`audiobench.task.Task.needs_output`); a run whose encoder lacks
it stops before any audio is read (:func:`require_output`).

- :class:`Transcript`: the text an ASR model (or the transcript-truth oracle) gives a clip.
- :class:`TimedTranscript`: the same as words, each with start and end times in seconds and an
  optional confidence score.
- :class:`ScoredChoices`: text choices with a score each (span selection, reranking by
  generation).
- :class:`Answer`: the answer text to a clip's question (MSEB's ``TextPrediction`` for
  reasoning: a span of the context, or ``"No Answer"``), from an encoder that reads the
  clip's ``context`` (:attr:`audiobench.encoder.Encoder.reads_context`).

**Caching.** The runner stores these in the embedding cache like embeddings, keyed by
(encoder fingerprint for that output, waveform hash): each output is serialised to UTF-8
JSON held in a ``uint8`` array (:func:`to_array`), so the cache, its batching, its
resumability and its damage checks serve them unchanged; an entry that does not parse back
as the expected type is treated as absent and computed again (:func:`from_array`).

**Size** (:func:`mseb_encoding_size_bytes`), as MSEB counts ``mean_encoding_size_bytes``: an
ASR output there is a NumPy array of Python strings (object dtype, 8 bytes per item whatever
the text), so a transcript counts 8 bytes, a timed transcript 8 bytes per word (MSEB counts
the strings, not their timestamps) and scored choices 8 bytes per choice. An answer is a
``TextPrediction`` there, counted as its UTF-8 bytes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from audiobench.errors import UnsuitableModelError

if TYPE_CHECKING:
    from audiobench.encoder import Encoder

__all__ = [
    "CONTEXT_KEY",
    "MSEB_STRING_ITEM_BYTES",
    "WORD_TIMES_KEY",
    "Answer",
    "OutputType",
    "ScoredChoices",
    "SpeechInput",
    "TextOutput",
    "TimedTranscript",
    "TimedWord",
    "Transcript",
    "from_array",
    "mseb_encoding_size_bytes",
    "require_output",
    "to_array",
]

#: Bytes MSEB counts per string of an encoder's output (NumPy object dtype's item size).
MSEB_STRING_ITEM_BYTES = 8
#: The clip metadata holding the dataset's word times (``"word start end;..."``), for oracles.
WORD_TIMES_KEY = "word_times"
#: The clip metadata holding the text a question is asked about, for answering encoders.
CONTEXT_KEY = "context"


class OutputType(StrEnum):
    """What an encoder can produce for a clip."""

    EMBEDDING = "embedding"
    TRANSCRIPT = "transcript"
    WORD_TIMINGS = "word_timings"
    SCORED_CHOICES = "scored_choices"
    ANSWER = "answer"


@dataclass(frozen=True)
class SpeechInput:
    """One clip as a typed-output encoder sees it: its waveform, and what the dataset knows.

    ``transcript`` is the dataset's own transcript and ``word_times`` its words' times
    (``"word start end;..."``, seconds) where the data has them; only an encoder that declares
    ``reads_transcript`` (the transcript-truth oracle) receives them, and its outputs are then
    cached under a key that includes them. ``context`` is the text the clip's question is
    asked about (clip metadata ``context``), given only to an encoder that declares
    ``reads_context`` and likewise part of its cache key.
    """

    clip_id: str
    waveform: np.ndarray
    transcript: str | None = None
    word_times: str | None = None
    context: str | None = None


@dataclass(frozen=True)
class Transcript:
    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ValueError(f"a transcript must be a string, got {type(self.text).__name__}")


@dataclass(frozen=True)
class TimedWord:
    """A word and where it is in the clip: ``start`` ≤ ``end``, in seconds from its start."""

    word: str
    start: float
    end: float
    score: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.word, str):
            raise ValueError(f"a word must be a string, got {type(self.word).__name__}")
        for name in ("start", "end"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"word {self.word!r}: {name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"word {self.word!r}: {name} must be finite and ≥ 0, got {value}")
        if self.end < self.start:
            raise ValueError(
                f"word {self.word!r}: ends ({self.end}) before it starts ({self.start})"
            )
        if self.score is not None and not math.isfinite(self.score):
            raise ValueError(f"word {self.word!r}: score must be finite, got {self.score}")


@dataclass(frozen=True)
class TimedTranscript:
    words: tuple[TimedWord, ...]

    @property
    def text(self) -> str:
        """The words joined by single spaces."""
        return " ".join(w.word for w in self.words)


@dataclass(frozen=True)
class ScoredChoices:
    """Text choices with one finite score each, in the encoder's order."""

    choices: tuple[str, ...]
    scores: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.choices) != len(self.scores):
            raise ValueError(f"{len(self.choices)} choices but {len(self.scores)} scores")
        if not all(isinstance(c, str) for c in self.choices):
            raise ValueError("every choice must be a string")
        if not all(math.isfinite(s) for s in self.scores):
            raise ValueError("every score must be a finite number")


@dataclass(frozen=True)
class Answer:
    """The answer to a clip's question: a text, or ``"No Answer"``."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ValueError(f"an answer must be a string, got {type(self.text).__name__}")


TextOutput = Transcript | TimedTranscript | ScoredChoices | Answer

_TYPES: dict[
    OutputType, type[Transcript] | type[TimedTranscript] | type[ScoredChoices] | type[Answer]
] = {
    OutputType.TRANSCRIPT: Transcript,
    OutputType.WORD_TIMINGS: TimedTranscript,
    OutputType.SCORED_CHOICES: ScoredChoices,
    OutputType.ANSWER: Answer,
}


def _payload(output: TextOutput) -> dict[str, Any]:
    if isinstance(output, Transcript):
        return {"type": OutputType.TRANSCRIPT.value, "text": output.text}
    if isinstance(output, TimedTranscript):
        words = [[w.word, w.start, w.end, w.score] for w in output.words]
        return {"type": OutputType.WORD_TIMINGS.value, "words": words}
    if isinstance(output, Answer):
        return {"type": OutputType.ANSWER.value, "text": output.text}
    return {
        "type": OutputType.SCORED_CHOICES.value,
        "choices": list(output.choices),
        "scores": list(output.scores),
    }


def to_array(output: TextOutput) -> np.ndarray:
    """``output`` as a ``uint8`` array of UTF-8 JSON (what the cache stores)."""
    blob = json.dumps(_payload(output), ensure_ascii=False, allow_nan=False).encode()
    return np.frombuffer(blob, dtype=np.uint8).copy()


def from_array(array: np.ndarray, expected: OutputType) -> TextOutput:
    """The output stored by :func:`to_array`; ValueError unless it is an ``expected`` one."""
    if expected not in _TYPES:
        raise ValueError(f"{expected} is not a text output")
    if array.dtype != np.uint8 or array.ndim != 1:
        raise ValueError(f"not a serialised {expected} (dtype {array.dtype}, shape {array.shape})")
    try:
        payload = json.loads(array.tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a serialised {expected}: {exc}") from None
    if not isinstance(payload, dict) or payload.get("type") != expected.value:
        raise ValueError(f"not a serialised {expected}")
    try:
        if expected is OutputType.TRANSCRIPT:
            return Transcript(payload["text"])
        if expected is OutputType.WORD_TIMINGS:
            return TimedTranscript(tuple(TimedWord(*item) for item in payload["words"]))
        if expected is OutputType.ANSWER:
            return Answer(payload["text"])
        return ScoredChoices(tuple(payload["choices"]), tuple(payload["scores"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a serialised {expected}: {exc}") from None


def parse_word_times(text: str, where: str) -> TimedTranscript:
    """``"word start end;..."`` (a dataset's word times) as a timed transcript."""
    words = []
    for position, item in enumerate(p for p in text.split(";") if p.strip()):
        parts = item.split()
        if len(parts) != 3:
            raise ValueError(f"{where}: word time {position} {item!r} is not 'word start end'")
        try:
            words.append(TimedWord(parts[0], float(parts[1]), float(parts[2])))
        except ValueError as exc:
            raise ValueError(f"{where}: word time {position} {item!r}: {exc}") from None
    return TimedTranscript(tuple(words))


def check_output(output: object, expected: OutputType) -> TextOutput:
    """``output`` if it is an instance of ``expected``'s type; TypeError otherwise."""
    kind = _TYPES[expected]
    if not isinstance(output, kind):
        raise TypeError(f"expected a {kind.__name__} ({expected}), got {type(output).__name__}")
    return output


def mseb_encoding_size_bytes(output: TextOutput) -> int:
    """The bytes MSEB's ``mean_encoding_size_bytes`` counts for ``output`` (module docstring)."""
    if isinstance(output, Transcript):
        return MSEB_STRING_ITEM_BYTES
    if isinstance(output, TimedTranscript):
        return MSEB_STRING_ITEM_BYTES * len(output.words)
    if isinstance(output, Answer):
        return len(output.text.encode("utf-8"))
    return MSEB_STRING_ITEM_BYTES * len(output.choices)


def require_output(encoder: Encoder, output: OutputType, why: str) -> None:
    """Refuse an ``encoder`` that does not declare ``output`` (``why`` names the task).

    Raised before any audio is read or weights loaded: the declaration is the class's.
    """
    produced = encoder.produces
    if output not in produced:
        offers = ", ".join(sorted(str(p) for p in produced)) or "nothing"
        raise UnsuitableModelError(
            f"model {encoder.meta.name!r} does not produce {output} outputs (it produces "
            f"{offers}); {why}"
        )
