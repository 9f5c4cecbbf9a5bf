"""Speech-MASSIVE (``FBK-MT/Speech-MASSIVE-test``): MSEB's intent and speaker-gender tasks.

The repository holds one folder per locale (``de-DE``...) of parquet files
``test-?????-of-?????.parquet`` with, per spoken utterance: ``audio`` (WAV bytes), ``path``
(its id), ``utt`` (the transcript), ``intent_str`` (one of MASSIVE's 60 intents) and speaker
fields (``speaker_sex``, ``speaker_age``...). MSEB declares two tasks per locale (12):

- ``SpeechMassive<Loc>IntentClassification``: the intent, against the intent names' texts;
- ``SpeechMassive<Loc>SpeakerGenderClassification``: ``Female`` or ``Male`` (others are left
  out, as MSEB leaves them out).

Both are zero-shot classification scored under MSEB's protocol by default (raw dot product
with the label texts). The intent classes are the intents found in the locale's files, in
sorted order; MSEB fixes the list of 60 in its task file, which is the same set wherever a
locale's test split holds every intent. MSEB reads the default branch and versions the data
by a label (2024.08.08): the results record it as unpinned. A local copy (``--dataset DIR``)
is read the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from audiobench.audio import ArrowAudioRef, Clip
from audiobench.families import ZeroShotClassificationTask
from audiobench.sources import DatasetError
from audiobench.task import DatasetSource, Task, TaskMetadata

__all__ = ["SPEECH_MASSIVE_SOURCE", "SPEECH_MASSIVE_TASKS", "SpeechMassiveTask"]

SPEECH_MASSIVE_SOURCE = DatasetSource(
    kind="huggingface", path="FBK-MT/Speech-MASSIVE-test", revision="main"
)
#: Speech-MASSIVE's 12 locales in MSEB: locale -> the task-name part.
SPEECH_MASSIVE_LOCALES: dict[str, str] = {
    "ar_sa": "ArSa",
    "de_de": "DeDe",
    "es_es": "EsEs",
    "fr_fr": "FrFr",
    "hu_hu": "HuHu",
    "ko_kr": "KoKr",
    "nl_nl": "NlNl",
    "pl_pl": "PlPl",
    "pt_pt": "PtPt",
    "ru_ru": "RuRu",
    "tr_tr": "TrTr",
    "vi_vn": "ViVn",
}
_PATTERN = "test-*.parquet"
_COLUMNS = ("audio", "path", "intent_str", "speaker_sex")


@dataclass(eq=False)
class _Rows:
    """The audio cells of one parquet file, by row (``ArrowAudioRef``'s dataset)."""

    cells: list[Any] = field(repr=False)

    def __getitem__(self, row: int) -> dict[str, Any]:
        return {"audio": self.cells[row]}


def hub_folder(locale: str) -> str:
    """The repository's folder of ``locale`` (``de_de`` -> ``de-DE``)."""
    language, _, region = locale.partition("_")
    return f"{language}-{region.upper()}"


class SpeechMassiveTask(ZeroShotClassificationTask):
    """One locale of Speech-MASSIVE; ``label_key`` names the column that is the label."""

    locale: ClassVar[str]
    label_key: ClassVar[str]
    options = ZeroShotClassificationTask.Options(protocol="mseb")

    def _files(self, say: Callable[[str], None]) -> list[Path]:
        folder = hub_folder(self.locale)
        if self.dataset_path is not None:
            root = Path(self.dataset_path).expanduser()
        else:
            from huggingface_hub import snapshot_download

            revision = self.dataset_revision or SPEECH_MASSIVE_SOURCE.revision
            try:
                root = Path(
                    snapshot_download(
                        repo_id=SPEECH_MASSIVE_SOURCE.path,
                        repo_type="dataset",
                        revision=revision,
                        allow_patterns=[f"{folder}/{_PATTERN}"],
                    )
                )
            except Exception as exc:  # offline, unknown revision, no access: all say the same
                raise DatasetError(
                    f"{self.name}: could not fetch {SPEECH_MASSIVE_SOURCE.path}@{revision}: "
                    f"{exc}; download it and pass --dataset DIR"
                ) from exc
        files = sorted((root / folder).glob(_PATTERN))
        if not files:
            raise DatasetError(
                f"{self.name}: no {folder}/{_PATTERN} in {root} (is it a copy of "
                f"{SPEECH_MASSIVE_SOURCE.path}?)"
            )
        say(f"reading {len(files)} Speech-MASSIVE file(s) from {root / folder}")
        return files

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        import pyarrow.parquet as pq

        clips: list[Clip] = []
        left_out = 0
        for path in self._files(say):
            names = pq.read_schema(path).names
            missing = [c for c in _COLUMNS if c not in names]
            if missing:
                raise DatasetError(f"{self.name}: {path} has no column(s) {', '.join(missing)}")
            table = pq.read_table(path, columns=list(_COLUMNS))
            rows = _Rows(table.column("audio").to_pylist())
            ids, labels = table.column("path").to_pylist(), table.column(self.label_key).to_pylist()
            for row, (clip_id, label) in enumerate(zip(ids, labels, strict=True)):
                if self.label_key == "speaker_sex" and label not in ("Female", "Male"):
                    left_out += 1
                    continue
                if not isinstance(label, str) or not isinstance(clip_id, str):
                    raise DatasetError(
                        f"{self.name}: {path} row {row}: needs 'path' and {self.label_key!r}"
                    )
                audio = ArrowAudioRef(
                    dataset=rows, row=row, column="audio", dataset_name=f"{path.name}"
                )
                clips.append(Clip(id=clip_id, audio=audio, label=label))
        if left_out:
            say(f"{self.name}: left out {left_out} utterance(s) labelled neither Female nor Male")
        return clips


def _task(locale: str, part: str, kind: str) -> type[Task]:
    gender = kind == "SpeakerGenderClassification"
    name = f"SpeechMassive{part}{kind}"
    what = "the speaker's gender (Female, Male)" if gender else "the utterance's intent"
    metadata = TaskMetadata(
        name=name,
        description=(
            f"MSEB's {name} (Speech-MASSIVE, {hub_folder(locale)}): {what} by the raw dot "
            "product with the label texts; MSEB's accuracy, top-5, balanced accuracy and "
            "weighted precision, recall and F1."
        ),
        # MSEB labels the data 2024.08.08 and reads the default branch: unpinned.
        dataset=SPEECH_MASSIVE_SOURCE,
        splits=("test",),
        main_score="accuracy",
        domains=("speech",),
        license="CC-BY-NC-SA-4.0",
        reference="https://huggingface.co/datasets/FBK-MT/Speech-MASSIVE-test",
    )
    attributes: dict[str, Any] = {
        "locale": locale,
        "label_key": "speaker_sex" if gender else "intent_str",
        "metadata": metadata,
        "__module__": __name__,
    }
    if gender:
        attributes["options"] = ZeroShotClassificationTask.Options(
            protocol="mseb", classes=("Female", "Male")
        )
    return type(name, (SpeechMassiveTask,), attributes)


#: MSEB's 24 Speech-MASSIVE tasks, intent and gender per locale (entry point
#: ``speech-massive`` of ``audiobench.task_catalogues``).
SPEECH_MASSIVE_TASKS: tuple[type[Task], ...] = tuple(
    _task(locale, part, kind)
    for locale, part in SPEECH_MASSIVE_LOCALES.items()
    for kind in ("IntentClassification", "SpeakerGenderClassification")
)
