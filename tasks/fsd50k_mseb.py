"""FSD50K as MSEB reads it (``Fhrozen/FSD50k``): ``FSD50KTestClassification`` and
``FSD50KTestClustering``.

The repository holds ``labels/eval.csv`` (``fname``, ``labels``: class names joined by
``,``) and the clips ``clips/eval/<fname>.wav``. MSEB's classification is multi-label,
zero-shot against the class names' texts (main score mAP); its clustering groups the clips by
their first label (main score V-measure). Both are scored under MSEB's protocol by default.
MSEB versions the data by a label (1.0.0) and reads the default branch: the results record it
as unpinned. A local copy (``--dataset DIR``) is read the same way. (audiobench's own
``FSD50K`` task reads another copy of the dataset, with trained probes.)
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

from audiobench.audio import Clip, FileAudioRef
from audiobench.families import ClassificationTask, ClusteringTask
from audiobench.sources import DatasetError
from audiobench.task import DatasetSource, TaskMetadata

__all__ = ["FSD50KTestClassification", "FSD50KTestClustering", "read_fsd50k_eval"]

FSD50K_SOURCE = DatasetSource(kind="huggingface", path="Fhrozen/FSD50k", revision="main")
_LABELS = "labels/eval.csv"
_CITATION = (
    "Fonseca et al. FSD50K: An Open Dataset of Human-Labeled Sound Events. IEEE/ACM TASLP, 2022."
)


def _folder(name: str, local_copy: Path | None, revision: str | None) -> Path:
    if local_copy is not None:
        return Path(local_copy).expanduser()
    from huggingface_hub import snapshot_download

    try:
        return Path(
            snapshot_download(
                repo_id=FSD50K_SOURCE.path,
                repo_type="dataset",
                revision=revision or FSD50K_SOURCE.revision,
                allow_patterns=[_LABELS, "clips/eval/*.wav"],
            )
        )
    except Exception as exc:  # offline, unknown revision, no access: all say the same
        raise DatasetError(
            f"{name}: could not fetch {FSD50K_SOURCE.path}: {exc}; download it and pass "
            "--dataset DIR"
        ) from exc


def read_fsd50k_eval(folder: Path, name: str, *, first_label: bool) -> list[Clip]:
    """The evaluation clips of ``labels/eval.csv``: each clip's labels joined by ``,`` (or,
    with ``first_label``, its first one). Errors name the file and line."""
    path = folder / _LABELS
    if not path.is_file():
        raise DatasetError(f"{name}: {path} not found (is {folder} a copy of FSD50K?)")
    clips = []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if not {"fname", "labels"} <= set(reader.fieldnames or ()):
            raise DatasetError(f"{name}: {path} needs the columns fname and labels")
        for line, row in enumerate(reader, 2):
            labels = [label for label in (row["labels"] or "").split(",") if label]
            if not row["fname"] or not labels:
                raise DatasetError(f"{name}: {path} line {line}: needs a fname and labels")
            wav = folder / "clips" / "eval" / f"{row['fname']}.wav"
            if not wav.is_file():
                raise DatasetError(f"{name}: {path} line {line}: {wav} not found")
            label = labels[0] if first_label else ",".join(labels)
            clips.append(Clip(id=row["fname"], audio=FileAudioRef(wav), label=label))
    return clips


def _metadata(name: str, what: str, main: str) -> TaskMetadata:
    return TaskMetadata(
        name=name,
        description=f"MSEB's {name}: the FSD50K evaluation clips, {what}.",
        # MSEB labels the data 1.0.0 and reads the default branch: unpinned.
        dataset=FSD50K_SOURCE,
        splits=("test",),
        main_score=main,
        domains=("sound events",),
        license="CC-BY-4.0",
        citation=_CITATION,
        reference="https://huggingface.co/datasets/Fhrozen/FSD50k",
    )


class FSD50KTestClassification(ClassificationTask):
    metadata = _metadata(
        "FSD50KTestClassification",
        "multi-label, by the raw dot product with the class names' texts (threshold 0.5); "
        "MSEB's mAP (main), micro and macro F1, Hamming loss and subset accuracy",
        "map",
    )
    options = ClassificationTask.Options(protocol="mseb", multilabel=True)

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        folder = _folder(self.name, self.dataset_path, self.dataset_revision)
        say(f"reading FSD50K from {folder}")
        return read_fsd50k_eval(folder, self.name, first_label=False)


class FSD50KTestClustering(ClusteringTask):
    metadata = _metadata(
        "FSD50KTestClustering",
        "clustered (one seeded MiniBatchKMeans) by their first label; MSEB's V-measure",
        "v_measure",
    )
    options = ClusteringTask.Options(protocol="mseb")

    def read_clips(self, say: Callable[[str], None], *, missing_ok: bool) -> list[Clip]:
        folder = _folder(self.name, self.dataset_path, self.dataset_revision)
        say(f"reading FSD50K from {folder}")
        return read_fsd50k_eval(folder, self.name, first_label=True)
