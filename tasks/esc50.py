"""ESC-50, shared by the tasks that use it: one hub copy, one revision, one citation.

``ashraq/esc50`` columns: filename, fold (1-5), target (0-49), category (class
name), esc10, src_file, take, audio. The revision is the one MTEB's ESC-50
tasks pin.
"""

from __future__ import annotations

from audiobench.task import Columns, DatasetSource

__all__ = ["ESC50_CITATION", "ESC50_COLUMNS", "ESC50_LICENSE", "ESC50_REFERENCE", "ESC50_SOURCE"]

ESC50_SOURCE = DatasetSource(
    kind="huggingface", path="ashraq/esc50", revision="e3e2a63ffff66b9a9735524551e3818e96af03ee"
)
#: Class names as labels, file names as ids, the 5 folds in clip metadata.
ESC50_COLUMNS = Columns(audio="audio", label="category", id="filename", extra=("fold",))
ESC50_CITATION = (
    "Piczak, K. J. ESC: Dataset for Environmental Sound Classification. "
    "Proceedings of the 23rd ACM International Conference on Multimedia, 2015, 1015-1018. "
    "doi:10.1145/2733373.2806390"
)
ESC50_LICENSE = "CC-BY-NC-3.0"
ESC50_REFERENCE = "https://github.com/karolpiczak/ESC-50"
