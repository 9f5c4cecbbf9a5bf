"""Write the example's weights: a seeded 256 -> 8 projection and its bias, as float32 .npz.

Run from this folder (``python scripts/make_weights.py``); the output is committed as package
data, so installing the plugin installs its weights. The numbers are random, seeded: the
example shows where real weights go, not what they learnt.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

IN, OUT = 256, 8  # the log-mel statistics of SpectralStatsEncoder -> an 8-dimensional embedding
TARGET = Path(__file__).parent.parent / "src" / "audiobench_plugin_example" / "weights"


def main() -> None:
    rng = np.random.default_rng(20261128)
    matrix = (rng.standard_normal((IN, OUT)) / np.sqrt(IN)).astype(np.float32)
    bias = np.zeros(OUT, dtype=np.float32)
    TARGET.mkdir(parents=True, exist_ok=True)
    # Uncompressed and without pickles: np.load(..., allow_pickle=False) reads it.
    np.savez(TARGET / "projection.npz", matrix=matrix, bias=bias)


if __name__ == "__main__":
    main()
