"""Pair classification tasks: the offline mock (MAEB's pair tasks live in ``tasks/maeb.py``).

``MockPairClassification``: generated sounds (:mod:`audiobench.synthetic.pairs`), 6 classes,
4 renditions each, 60 pairs alternating same class / different class; is a pair the same
sound class? Main score ``max_ap``. Runs offline with any audio model.
"""

from __future__ import annotations

from audiobench.families import PairClassificationTask
from audiobench.task import Columns, Synthetic, TaskMetadata

__all__ = ["MockPairClassification"]


class MockPairClassification(PairClassificationTask):
    metadata = TaskMetadata(
        name="MockPairClassification",
        description=(
            "Generated sounds of 6 classes, 4 renditions each, in 60 pairs (half of one class, "
            "half of two): are the two sounds of one class? Cosine, dot, euclidean and "
            "manhattan similarity; main score max_ap. Runs offline."
        ),
        dataset=Synthetic(
            generator="audiobench.synthetic.pairs:write_sound_pairs",
            seed=41,
            params={"classes": 6, "renditions": 4, "n_pairs": 60},
        ),
        columns=Columns(extra=("pair",)),
        main_score="max_ap",
        domains=("synthetic",),
        license="Apache-2.0",
    )
