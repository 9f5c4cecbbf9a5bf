"""MSEB's SVQ tasks of the embedding families, per locale, under MSEB's names.

Read from SVQ's own layout (:mod:`audiobench.tasks.svq`) and scored under MSEB's protocol
(``protocol=mseb``, :mod:`audiobench.evaluators.mseb`) by default; ``-O protocol=audiobench``
gives audiobench's own where it reports the same main score. Every task keeps each clip's
recording environment (``metadata["environment"]``), so its report holds MSEB's main line
(all utterances) and the four noise lines. SVQ is read from its default branch, as MSEB reads
it: the results record it as unpinned.

==============================================  =========  ===================================
MSEB task (``SVQ<Loc>...``)                     locales    SVQ files, what a clip holds
==============================================  =========  ===================================
``Clustering``                                  26         ``utt_index.jsonl``: label = speaker
                                                           gender; MSEB's three targets
                                                           (``speaker_gender``, ``speaker_age``,
                                                           ``speaker_id``) in the metadata;
                                                           main score their mean V-measure
``SpeakerGenderClassification``                 26         ``utt_index.jsonl``: ``Female`` /
                                                           ``Male`` (others left out, as MSEB)
``QueryReranking``                              26         ``query_reranking.jsonl``:
                                                           ``candidates``, the first the truth
``SalientTermReranking``                        26         ``salient_term.jsonl``: candidates
                                                           ``candidate_salient_terms``, truth
                                                           ``topk_salient_terms``
``PassageInLangRetrieval``                      17         ``passage_retrieval_in_lang.jsonl``
                                                           (``passage_id``) against
                                                           ``..._index.jsonl`` (``id``,
                                                           ``context``)
``PassageCrossLangRetrieval``                   19         the same, ``cross_lang``
``DocumentInLangRetrievalSmallIndex``           17         ``document_retrieval_in_lang.jsonl``
                                                           (``page_title``) against
                                                           ``..._small_index.jsonl`` (``title``,
                                                           ``text``)
``DocumentCrossLangRetrievalSmallIndex``        19         the same, ``cross_lang``
==============================================  =========  ===================================

The classes are generated from the table :data:`_KINDS` and listed in
:data:`SVQ_EMBEDDING_TASKS`, which the ``audiobench.task_catalogues`` entry point ``svq-mseb``
registers, every class under its MSEB name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from audiobench.audio import Clip
from audiobench.families import (
    ClusteringTask,
    RerankingTask,
    RetrievalTask,
    ZeroShotClassificationTask,
)
from audiobench.hub_layouts import TextOnly
from audiobench.sources import DatasetError
from audiobench.task import Task, TaskMetadata
from audiobench.tasks.svq import (
    INDEX_FILE,
    SVQ_CITATION,
    SVQ_CROSS_LANG_LOCALES,
    SVQ_IN_LANG_LOCALES,
    SVQ_LICENSE,
    SVQ_LOCALES,
    SVQ_REFERENCE,
    SVQ_SOURCE,
    SvqUtterance,
    svq_folder,
    svq_locale_rows,
    svq_rows,
    svq_utterances,
)

__all__ = [
    "SVQ_EMBEDDING_TASKS",
    "SvqClustering",
    "SvqQueryReranking",
    "SvqRetrieval",
    "SvqSalientTermReranking",
    "SvqSpeakerGender",
]

#: MSEB's three SVQ clustering targets (its sub-tasks).
CLUSTERING_TARGETS = ("speaker_gender", "speaker_age", "speaker_id")
#: MSEB's gender classes (SVQ's values, capitalised); other values are left out.
GENDERS = ("Female", "Male")


class _SvqLocale:
    """What every SVQ task of one locale shares: the locale and SVQ's folder."""

    locale: ClassVar[str]
    name: str
    dataset_path: Path | None
    dataset_revision: str | None

    def _folder(self, task_file: str, say: Callable[[str], None]) -> Path:
        folder = svq_folder(self.name, self.dataset_path, self.dataset_revision, task_file)
        say(f"reading SVQ from {folder}")
        return folder

    def _locale_utterances(self, folder: Path) -> list[SvqUtterance]:
        out = [u for u in svq_utterances(folder, self.name).values() if u.locale == self.locale]
        if not out:
            raise DatasetError(f"{self.name}: {INDEX_FILE} has no utterance of {self.locale}")
        return out

    def _locale_rows(
        self, folder: Path, task_file: str
    ) -> Iterator[tuple[dict[str, Any], SvqUtterance, str]]:
        """The task file's rows of the locale, each with its utterance and where it is; none
        at all is an error."""
        found = False
        for found_row in svq_locale_rows(folder, task_file, self.locale, self.name):
            found = True
            yield found_row
        if not found:
            raise DatasetError(f"{self.name}: {task_file} has no rows of locale {self.locale}")


def _environment(row: dict[str, Any], utt: SvqUtterance) -> dict[str, str]:
    environment = row.get("environment") or utt.environment
    return {"environment": str(environment)} if environment else {}


def _texts(row: dict[str, Any], key: str, where: str) -> list[str]:
    value = row.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise DatasetError(f"{where}: {key!r} must be a non-empty list of texts")
    return value


class SvqClustering(_SvqLocale, ClusteringTask):
    """Every utterance of the locale, clustered by MSEB's three speaker targets."""

    options = ClusteringTask.Options(protocol="mseb")

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        utterances = self._locale_utterances(self._folder(INDEX_FILE, say))
        clips = []
        for utt in utterances:
            # MSEB labels each target by the index's value as it stands (an unknown age too).
            targets = {t: str(utt.speaker.get(t)) for t in CLUSTERING_TARGETS}
            clips.append(
                Clip(
                    id=utt.id,
                    audio=utt.audio,
                    label=targets["speaker_gender"],
                    text=utt.text,
                    metadata=targets | _environment({}, utt),
                )
            )
        return clips


class SvqSpeakerGender(_SvqLocale, ZeroShotClassificationTask):
    """The locale's utterances labelled Female or Male, against the two label texts."""

    options = ZeroShotClassificationTask.Options(protocol="mseb", classes=GENDERS)

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        utterances = self._locale_utterances(self._folder(INDEX_FILE, say))
        clips, other = [], 0
        for utt in utterances:
            gender = str(utt.speaker.get("speaker_gender") or "").capitalize()
            if gender not in GENDERS:
                other += 1
                continue
            clips.append(
                Clip(id=utt.id, audio=utt.audio, label=gender, metadata=_environment({}, utt))
            )
        if other:
            say(f"{self.name}: left out {other} utterance(s) labelled neither Female nor Male")
        if not clips:
            raise DatasetError(f"{self.name}: no utterance of {self.locale} is Female or Male")
        return clips


class _SvqReranking(_SvqLocale, RerankingTask):
    """A spoken query against its candidate texts; MSEB's reference is ``positives[0]``."""

    options = RerankingTask.Options(protocol="mseb", candidate_modality="text")
    task_file: ClassVar[str]
    candidates_key: ClassVar[str]
    truth_key: ClassVar[str]

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        folder = self._folder(self.task_file, say)
        clips = []
        for row, utt, where in self._locale_rows(folder, self.task_file):
            candidates = _texts(row, self.candidates_key, where)
            truth = _texts(row, self.truth_key, where)
            clips.append(
                Clip(
                    id=utt.id,
                    audio=utt.audio,
                    subset=self.locale,
                    split="query",
                    text=utt.text,
                    metadata={"candidates": candidates, "positives": truth}
                    | _environment(row, utt),
                )
            )
        return clips


class SvqQueryReranking(_SvqReranking):
    task_file = "query_reranking.jsonl"
    candidates_key = truth_key = "candidates"  # the first candidate is the true transcript


class SvqSalientTermReranking(_SvqReranking):
    task_file = "salient_term.jsonl"
    candidates_key, truth_key = "candidate_salient_terms", "topk_salient_terms"


class SvqRetrieval(_SvqLocale, RetrievalTask):
    """Spoken questions against SVQ's text index; one relevant document per question."""

    options = RetrievalTask.Options(protocol="mseb", document_modality="text")
    task_file: ClassVar[str]
    index_file: ClassVar[str]
    #: The query row's reference key, and the index's id and text keys.
    reference_key: ClassVar[str]
    id_key: ClassVar[str]
    text_key: ClassVar[str]

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        folder = self._folder(self.task_file, say)
        self._folder(self.index_file, lambda _: None)  # the same copy; fetched if from the hub
        corpus: dict[str, Clip] = {}
        for row in svq_rows(folder, self.index_file, self.name):
            where = f"{self.name}: {self.index_file} line {row['_line']}"
            doc_id, text = row.get(self.id_key), row.get(self.text_key)
            if not isinstance(doc_id, str) or not isinstance(text, str):
                raise DatasetError(f"{where}: needs {self.id_key!r} and {self.text_key!r} texts")
            if doc_id in corpus:
                raise DatasetError(f"{where}: document {doc_id!r} is listed twice")
            title = row.get("title")
            corpus[doc_id] = Clip(
                id=doc_id,
                audio=TextOnly(f"document {doc_id!r}"),
                split="corpus",
                text=text,
                metadata={"title": title} if isinstance(title, str) else {},
            )
        queries = []
        for row, utt, where in self._locale_rows(folder, self.task_file):
            reference = row.get(self.reference_key)
            if not isinstance(reference, str):
                raise DatasetError(
                    f"{where}: needs {self.reference_key!r}, the relevant document's id"
                )
            queries.append(
                Clip(
                    id=utt.id,
                    audio=utt.audio,
                    split="query",
                    text=utt.text,
                    metadata={"relevant": [reference]} | _environment(row, utt),
                )
            )
        if set(corpus) & {q.id for q in queries}:
            raise DatasetError(f"{self.name}: a document id is also an utterance id")
        return queries + list(corpus.values())


def _retrieval(task: str, reference: str, index: str, id_key: str, text_key: str) -> type:
    attributes = {
        "task_file": f"{task}.jsonl",
        "index_file": f"{index}.jsonl",
        "reference_key": reference,
        "id_key": id_key,
        "text_key": text_key,
        "__module__": __name__,
    }
    return type(f"Svq_{index}", (SvqRetrieval,), attributes)


_PASSAGE = ("passage_id", "id", "context")
_DOCUMENT = ("page_title", "title", "text")
_IN, _CROSS, _ALL = SVQ_IN_LANG_LOCALES, SVQ_CROSS_LANG_LOCALES, tuple(SVQ_LOCALES)

#: MSEB kind -> (base class, locales, main score, what it scores).
_KINDS: dict[str, tuple[type, tuple[str, ...], str, str]] = {
    "Clustering": (
        SvqClustering,
        _ALL,
        "targets_mean_v_measure",
        "every utterance clustered (one seeded MiniBatchKMeans) by speaker gender, age and id; "
        "MSEB's V-measure of each, main score their mean (MSEB's leaderboard score)",
    ),
    "SpeakerGenderClassification": (
        SvqSpeakerGender,
        _ALL,
        "accuracy",
        "the speaker's gender (Female, Male) by the raw dot product with the label texts; "
        "MSEB's accuracy, also per recording environment",
    ),
    "QueryReranking": (
        SvqQueryReranking,
        _ALL,
        "map",
        "the spoken query's candidate transcripts reranked, the true one first in the data; "
        "MSEB's MAP (main), NDCG, MRR, WER and CER, also per recording environment",
    ),
    "SalientTermReranking": (
        SvqSalientTermReranking,
        _ALL,
        "ndcg",
        "the utterance's candidate salient terms reranked against its top salient terms; "
        "MSEB's NDCG (main), MAP, MRR, WER and CER, also per recording environment",
    ),
    "PassageInLangRetrieval": (
        _retrieval(
            "passage_retrieval_in_lang",
            *_PASSAGE[:1],
            "passage_retrieval_in_lang_index",
            *_PASSAGE[1:],
        ),
        _IN,
        "mrr",
        "the spoken question's passage among SVQ's passage index (same language); MSEB's "
        "MRR (main), EM, Recall@10 and NDCG@10, also per recording environment",
    ),
    "PassageCrossLangRetrieval": (
        _retrieval(
            "passage_retrieval_cross_lang",
            *_PASSAGE[:1],
            "passage_retrieval_cross_lang_index",
            *_PASSAGE[1:],
        ),
        _CROSS,
        "mrr",
        "the spoken question's English passage among SVQ's passage index; MSEB's MRR "
        "(main), EM, Recall@10 and NDCG@10, also per recording environment",
    ),
    "DocumentInLangRetrievalSmallIndex": (
        _retrieval(
            "document_retrieval_in_lang",
            *_DOCUMENT[:1],
            "document_retrieval_in_lang_small_index",
            *_DOCUMENT[1:],
        ),
        _IN,
        "mrr",
        "the spoken question's Wikipedia page among SVQ's small document index (same "
        "language); MSEB's MRR (main), EM, Recall@10 and NDCG@10, also per environment",
    ),
    "DocumentCrossLangRetrievalSmallIndex": (
        _retrieval(
            "document_retrieval_cross_lang",
            *_DOCUMENT[:1],
            "document_retrieval_cross_lang_small_index",
            *_DOCUMENT[1:],
        ),
        _CROSS,
        "mrr",
        "the spoken question's English Wikipedia page among SVQ's small document index; "
        "MSEB's MRR (main), EM, Recall@10 and NDCG@10, also per recording environment",
    ),
}


def _svq_task(kind: str, locale: str) -> type[Task]:
    base, _, main, what = _KINDS[kind]
    name = f"SVQ{SVQ_LOCALES[locale][0]}{kind}"
    # Reranking's subset is the locale: MSEB's normaliser follows it.
    subsets = {"subsets": (locale,)} if issubclass(base, _SvqReranking) else {}
    metadata = TaskMetadata(
        **subsets,
        name=name,
        description=f"MSEB's {name} (SVQ, locale {locale}): {what}.",
        # MSEB labels SVQ 1.0.0 and reads the default branch: unpinned.
        dataset=SVQ_SOURCE,
        splits=("test",),
        main_score=main,
        domains=("speech",),
        license=SVQ_LICENSE,
        citation=SVQ_CITATION,
        reference=SVQ_REFERENCE,
    )
    attributes = {"locale": locale, "metadata": metadata, "__module__": __name__}
    return type(name, (base,), attributes)


#: MSEB's 176 SVQ tasks of the embedding families under MSEB's names.
SVQ_EMBEDDING_TASKS: tuple[type[Task], ...] = tuple(
    _svq_task(kind, locale) for kind, (_, locales, _, _) in _KINDS.items() for locale in locales
)
