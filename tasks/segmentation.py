"""Salient-term segmentation tasks: MSEB's 52 SVQ tasks, and an offline mock.

**SVQ** (``google/svq``, read by :mod:`audiobench.tasks.svq`). MSEB declares two tasks per
locale of SVQ (26 locales), both over SVQ's ``salient_term.jsonl``:

- ``SVQ<Loc>SalientTermSegmentation``: each utterance's reference salient terms
  (``topk_salient_terms``, most salient first) with their times
  (``topk_salient_terms_timestamps``, ``[start, end]`` in seconds);
- ``SVQ<Loc>SalientTermSegmentationSelectionTask``: the same references, scored the same way;
  in MSEB the model picks among each utterance's given candidate terms
  (``candidate_salient_terms`` with ``candidate_salient_terms_timestamps``), which the clips
  carry here in their metadata (``candidate_salient_terms``, a JSON list of
  ``[term, start, end]``). The encoders here answer with timed words (the IDF cascade), so
  they are scored on both tasks alike.

Each task is the utterances of its locale (the subset). MSEB scores it as five result lines,
all utterances (``salient_term``) and each recording environment (``salient_term:clean``,
``:media_noise``, ``:traffic_noise``, ``:background_speech``): the subset's report holds
the first, its ``environments`` the others (the row's ``environment``, else the index's).
As in MSEB, an utterance whose reference terms are missing or whose term and time lists
differ in length is left out; the reader says how many. SVQ is read from its default
branch as MSEB reads it: the results record it as unpinned.

The classes are generated from one table (:data:`~audiobench.tasks.svq.SVQ_LOCALES`) and
listed in :data:`SVQ_SEGMENTATION_TASKS`, which the ``audiobench.task_catalogues`` entry point
``svq-segmentation`` registers: every class under its MSEB name.

**Mock.** ``MockSegmentation`` runs offline on the generated utterances of
``MockTranscription`` (en_us and sw), whose reference salient terms are each utterance's three
words of highest IDF over its locale's transcripts, with their times. MSEB's cascade baseline
(timed transcript → top three words by IDF) on the true word times (``transcript-truth``)
finds them all; a recogniser's timed words are scored against them with MSEB's segmentation
metrics, main score ``ndcg``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from audiobench.audio import Clip
from audiobench.families import SegmentationTask
from audiobench.sources import DatasetError
from audiobench.task import Columns, Synthetic, Task, TaskFamily, TaskMetadata
from audiobench.tasks.svq import (
    SVQ_CITATION,
    SVQ_LICENSE,
    SVQ_LOCALES,
    SVQ_REFERENCE,
    SVQ_SOURCE,
    svq_folder,
    svq_locale_rows,
)

__all__ = [
    "SVQ_SEGMENTATION_TASKS",
    "MockSegmentation",
    "SvqSalientTermSegmentation",
    "SvqSalientTermSegmentationSelection",
    "read_svq_salient_terms",
]

#: SVQ's task file of the salient-term tasks.
SALIENT_TERM_FILE = "salient_term.jsonl"


def _timed_terms(row: dict[str, Any], terms_key: str, times_key: str) -> list[Any] | None:
    """``[[term, start, end], ...]`` from a row's term and time lists; None when MSEB skips
    the row (a list missing or empty, or the two of different lengths)."""
    terms, times = row.get(terms_key), row.get(times_key)
    if not terms or not times or not isinstance(terms, list) or not isinstance(times, list):
        return None
    if len(terms) != len(times):
        return None
    out = []
    for term, span in zip(terms, times, strict=True):
        if (
            not isinstance(term, str)
            or not isinstance(span, list | tuple)
            or len(span) != 2
            or not all(
                isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t)
                for t in span
            )
        ):
            raise ValueError(
                f"{terms_key}/{times_key}: {term!r} at {span!r} is not a term with "
                "[start, end] seconds"
            )
        out.append([term, float(span[0]), float(span[1])])
    return out


def read_svq_salient_terms(
    folder: Path, locale: str, name: str, *, candidates: bool, say: Callable[[str], None]
) -> list[Clip]:
    """SVQ's salient-term utterances of ``locale``: audio, transcript, the locale as the
    subset, and in the metadata the reference terms (``salient_terms``), the recording
    environment and, with ``candidates``, the candidate terms. Errors name the file and line."""
    clips: list[Clip] = []
    skipped: list[str] = []
    for row, utt, where in svq_locale_rows(folder, SALIENT_TERM_FILE, locale, name):
        try:
            terms = _timed_terms(row, "topk_salient_terms", "topk_salient_terms_timestamps")
            offered = (
                _timed_terms(row, "candidate_salient_terms", "candidate_salient_terms_timestamps")
                if candidates
                else None
            )
        except ValueError as exc:
            raise DatasetError(f"{where}: {exc}") from None
        if terms is None:
            skipped.append(utt.id)
            continue
        environment = row.get("environment") or utt.environment
        metadata: dict[str, Any] = {"salient_terms": json.dumps(terms, ensure_ascii=False)}
        if environment:
            metadata["environment"] = str(environment)
        if candidates:
            metadata["candidate_salient_terms"] = json.dumps(offered or [], ensure_ascii=False)
        text = row.get("text") if isinstance(row.get("text"), str) else utt.text
        clips.append(Clip(id=utt.id, audio=utt.audio, subset=locale, text=text, metadata=metadata))
    if skipped:
        shown = ", ".join(repr(s) for s in skipped[:5]) + (" ..." if len(skipped) > 5 else "")
        say(
            f"{name}: left out {len(skipped)} utterance(s) without reference terms, or with "
            f"term and time lists of different lengths, as MSEB does: {shown}"
        )
    if not clips:
        raise DatasetError(
            f"{name}: {folder / SALIENT_TERM_FILE} has no scorable utterance of locale {locale}"
        )
    return clips


class SvqSalientTermSegmentation(SegmentationTask):
    """SVQ salient-term segmentation of one locale (MSEB's ``SVQ<Loc>SalientTermSegmentation``)."""

    locale: ClassVar[str]
    #: Whether the clips carry MSEB's candidate terms (the selection variant).
    candidates: ClassVar[bool] = False

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        folder = svq_folder(self.name, self.dataset_path, self.dataset_revision, SALIENT_TERM_FILE)
        say(f"reading SVQ from {folder}")
        return read_svq_salient_terms(
            folder, self.locale, self.name, candidates=self.candidates, say=say
        )


class SvqSalientTermSegmentationSelection(SvqSalientTermSegmentation):
    """The selection variant (MSEB's ``SVQ<Loc>SalientTermSegmentationSelectionTask``)."""

    candidates = True


def _svq_task(
    base: type[SvqSalientTermSegmentation], kind: str, locale: str, part: str
) -> type[SvqSalientTermSegmentation]:
    name = f"SVQ{part}{kind}"
    selection = base.candidates
    metadata = TaskMetadata(
        name=name,
        family=TaskFamily.SEGMENTATION,
        description=(
            f"MSEB's SVQ salient-term segmentation{' (selection)' if selection else ''}, "
            f"locale {locale}: each utterance's reference salient terms and their times, "
            "against MSEB's IDF cascade over the model's timed words"
            + (" (the clips also carry MSEB's candidate terms)" if selection else "")
            + ". MSEB's positional NDCG (main), hit accuracies (±0.05 s), mAP and term WER, "
            "also per recording environment."
        ),
        # MSEB labels SVQ 1.0.0 and reads the default branch: unpinned.
        dataset=SVQ_SOURCE,
        columns=Columns(label=None, text="text", subset="locale", required=("audio",)),
        splits=("test",),
        subsets=(locale,),
        main_score="ndcg",
        domains=("speech",),
        license=SVQ_LICENSE,
        citation=SVQ_CITATION,
        reference=SVQ_REFERENCE,
    )
    return type(name, (base,), {"locale": locale, "metadata": metadata, "__module__": __name__})


#: MSEB's 52 SVQ segmentation tasks, two per locale, under MSEB's names.
SVQ_SEGMENTATION_TASKS: tuple[type[Task], ...] = tuple(
    _svq_task(base, kind, locale, part)
    for locale, (part, _) in SVQ_LOCALES.items()
    for base, kind in (
        (SvqSalientTermSegmentation, "SalientTermSegmentation"),
        (SvqSalientTermSegmentationSelection, "SalientTermSegmentationSelectionTask"),
    )
)


class MockSegmentation(SegmentationTask):
    metadata = TaskMetadata(
        name="MockSegmentation",
        family=TaskFamily.SEGMENTATION,
        description=(
            "Generated speech-like utterances in two locales (en_us, sw) with three reference "
            "salient terms each and their times; MSEB's IDF cascade over the model's timed "
            "words, scored by MSEB's positional NDCG (main), hit accuracies (±0.05 s), mAP "
            "and term WER. Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.utterances:write_utterances",
            seed=20261128,
            params={"per_subset": 6},
        ),
        columns=Columns(label=None, text="text", subset="subset", required=("audio",)),
        subsets=("en_us", "sw"),
        main_score="ndcg",
        domains=("synthetic", "speech"),
        license="Apache-2.0",
    )
