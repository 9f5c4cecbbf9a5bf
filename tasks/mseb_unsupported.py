"""MSEB's tasks that audiobench does not score yet, each with the reason.

MSEB (1.0.0) registers 429 tasks. The ones audiobench declares are registered under MSEB's
names by the ``audiobench.task_catalogues`` entry points (``svq-*``); the rest are listed here,
so that ``audiobench list tasks --json`` accounts for all 429 (``"unsupported"`` holds the
reason) and ``--task NAME`` on one of them is an error giving the reason. A reason starting
"needs" names what audiobench lacks. The names are generated from the same locale tables as
the declared tasks (:mod:`audiobench.tasks.svq`).
"""

from __future__ import annotations

from audiobench.registry import UnsupportedTask
from audiobench.tasks.svq import SVQ_CROSS_LANG_LOCALES, SVQ_IN_LANG_LOCALES, SVQ_LOCALES

__all__ = ["MSEB_UNSUPPORTED"]

_SVQ = "google/svq"
_BIRDSET_ID = "DBD-research-group/BirdSet"
_IMAGE = "needs image input (audiobench encodes audio and text only)"
_BRAIN = (
    "needs fMRI responses (HuthLab story recordings, not a hub dataset) and a brain-encoding "
    "family (ridge regression over time-aligned frames); audiobench has neither"
)
_WIKIPEDIA = (
    "needs the full Wikipedia of the question's language as documents, which MSEB reads from "
    "TensorFlow Datasets (wikipedia/20190301.<lang>), not from the hub; audiobench reads hub "
    "datasets and local copies (the SmallIndex variant of this task is the same queries "
    "against SVQ's own document index)"
)
_BIRDSET = (
    "needs a reader for BirdSet's 5-second test segments with their eBird class lists "
    "(DBD-research-group/BirdSet, a local cache in MSEB), not written yet"
)
#: BirdSet's 10 test configurations in MSEB.
_BIRDSET_CONFIGS = ("HSN", "NBP", "NES", "PER", "POW", "SNE", "SSW", "UHH", "XCL", "XCM")

_RETRIEVAL = ("retrieval", "MRR")
_IN, _CROSS = SVQ_IN_LANG_LOCALES, SVQ_CROSS_LANG_LOCALES

#: SVQ kinds not declared (the others are in :mod:`audiobench.tasks.svq_catalogue`):
#: kind -> (MSEB type, (family, MSEB main metric), locales, reason).
_SVQ_KINDS: dict[str, tuple[str, tuple[str, str], tuple[str, ...], str]] = {
    "DocumentInLangRetrieval": ("DocumentInLangRetrieval", _RETRIEVAL, _IN, _WIKIPEDIA),
    "DocumentCrossLangRetrieval": ("DocumentCrossLangRetrieval", _RETRIEVAL, _CROSS, _WIKIPEDIA),
}


def _entry(
    name: str, kind: str, family_main: tuple[str | None, str], dataset: str, reason: str
) -> UnsupportedTask:
    family, main = family_main
    return UnsupportedTask(
        name=name,
        source=f"MSEB 1.0.0 {kind}",
        family=family,
        dataset=dataset,
        revision=None,  # MSEB versions its data by labels, not hub commits
        reason=reason,
        protocol="mseb",
        main_score=main,
    )


def _entries() -> list[UnsupportedTask]:
    out = [
        _entry(f"SVQ{SVQ_LOCALES[locale][0]}{kind}", mseb_type, family_main, _SVQ, reason)
        for kind, (mseb_type, family_main, locales, reason) in _SVQ_KINDS.items()
        for locale in locales
    ]
    for corpus, dataset in (
        ("Flickr8k", "Flickr8k Audio (groups.csail.mit.edu, not a hub dataset)"),
        ("SpokenCoco", "SpokenCOCO (groups.csail.mit.edu, not a hub dataset)"),
    ):
        for kind in ("ImageRetrieval", "SpeechRetrieval"):
            out.append(_entry(f"{corpus}En{kind}", kind, _RETRIEVAL, dataset, _IMAGE))
    brain = (None, "MeanCorrelation")
    out.append(_entry("HuthLabBrainEncoding", "BrainEncoding", brain, "HuthLab fMRI", _BRAIN))
    multilabel, clustering = ("classification", "mAP"), ("clustering", "VMeasure")
    for config in _BIRDSET_CONFIGS:
        name = f"Birdset{config}Classification"
        out.append(_entry(name, "Classification", multilabel, _BIRDSET_ID, _BIRDSET))
        name = f"BirdsetClustering{config}"
        out.append(_entry(name, "Clustering", clustering, _BIRDSET_ID, _BIRDSET))
    return out


MSEB_UNSUPPORTED: tuple[UnsupportedTask, ...] = tuple(_entries())
