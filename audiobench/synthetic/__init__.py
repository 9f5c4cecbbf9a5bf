"""Generated datasets, so that every family has a task that runs offline.

Each module holds one kind of generated sound and a generator that writes
WAV files plus a ``labels.csv`` (through :func:`write_labels`, the one
writer). A mock task names its generator declaratively,
``dataset=Synthetic(generator="audiobench.synthetic.vocalisations:write_dataset",
seed=..., params={...})``; nothing is imported or generated until a run
needs the data. The same seed always gives the same files, bit for bit.
"""

from __future__ import annotations

from audiobench.synthetic.vocalisations import (
    CallType,
    SubsetSpec,
    render_call,
    sample_call_types,
    write_dataset,
)
from audiobench.synthetic.writer import write_labels

__all__ = [
    "CallType",
    "SubsetSpec",
    "render_call",
    "sample_call_types",
    "write_dataset",
    "write_labels",
]
