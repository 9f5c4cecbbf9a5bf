"""A model with weights, the shape a real plugin has: weights shipped as package data.

``example-projection`` projects the log-mel statistics of :class:`SpectralStatsEncoder`
(per-band mean and spread, 256 numbers) to 8 dimensions with a matrix and a bias read from
``weights/projection.npz`` inside this package (written by ``scripts/make_weights.py``,
seeded). ``-o weights=PATH`` loads another ``.npz`` of the same layout from a local path.

What it shows (docs/PLUGINS.md explains each):

- ``load()`` (``_load``) reads the weights, once, never at import or in ``__init__``;
- the weights are found with ``importlib.resources``, not a path relative to the source file,
  so they load the same from a wheel, an editable install or a zip;
- ``meta.source`` / ``meta.revision`` name the shipped weights, and :meth:`describe` adds a
  digest of the file actually read, so the cache key follows the weights' content (a new
  file under the same name, or ``-o weights=PATH``, never serves stale embeddings);
- each clip is encoded on its own, so an embedding does not depend on its batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from audiobench.encoder import Encoder, EncoderOptions, ModelMeta, OutputKind
from audiobench.models.baselines import log_mel_spectrogram
from audiobench.models.digest import weights_digest

SHIPPED = "weights/projection.npz"


class ProjectionEncoder(Encoder):
    meta = ModelMeta(
        name="example-projection",
        revision="v1",
        source=f"audiobench_plugin_example/{SHIPPED}",
        sample_rate=16000,
        output_kind=OutputKind.VECTOR,
        embedding_dim=8,
        n_parameters=256 * 8 + 8,
        license="Apache-2.0",
        description="Plugin example with weights: log-mel statistics through a projection "
        "shipped as package data.",
    )

    class Options(EncoderOptions):
        weights: str | None = Field(
            default=None,
            description="A local .npz (arrays 'matrix' 256x8 and 'bias' 8) instead of the "
            "shipped weights.",
        )
        # The path is no identity (a copy elsewhere is the same model); the digest is.
        unrecorded = frozenset({"weights"})

    options: Options

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.options.weights is not None:
            self.source = str(Path(self.options.weights).expanduser().resolve())
        self._digest: str | None = None

    def weights_path(self) -> Path:
        """The file ``load()`` reads: ``-o weights=PATH``, else the package's own."""
        if self.options.weights is not None:
            return Path(self.options.weights).expanduser()
        shipped = resources.files("audiobench_plugin_example").joinpath(SHIPPED)
        return Path(str(shipped))

    def describe(self) -> dict[str, Any]:
        description = super().describe()
        if self._digest is None:
            # Hashed once per instance (and cached by file stat across runs): a few KB here,
            # gigabytes for a real checkpoint.
            self._digest = weights_digest(self.weights_path())
        description["weights_digest"] = self._digest
        return description

    def _load(self) -> None:
        path = self.weights_path()
        if not path.is_file():
            raise FileNotFoundError(f"model {self.meta.name!r}: no weights file at {path}")
        with np.load(path, allow_pickle=False) as data:
            matrix, bias = data["matrix"], data["bias"]
        if matrix.shape != (256, 8) or bias.shape != (8,):
            raise ValueError(
                f"model {self.meta.name!r}: {path} holds matrix {matrix.shape} and bias "
                f"{bias.shape}; expected (256, 8) and (8,)"
            )
        self.matrix = matrix.astype(np.float32)
        self.bias = bias.astype(np.float32)

    def encode_audio(self, waveforms: Sequence[np.ndarray]) -> list[np.ndarray]:
        self.require_loaded()
        out = []
        for w in waveforms:  # one clip at a time: no padding, no batch statistics
            mel = log_mel_spectrogram(w, self.meta.sample_rate)
            stats = np.concatenate([mel.mean(axis=0), mel.std(axis=0)]).astype(np.float32)
            out.append(stats @ self.matrix + self.bias)
        return out
