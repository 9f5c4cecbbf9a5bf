"""The option every family with an MSEB definition shares: which evaluator scores it."""

from __future__ import annotations

from pydantic import Field

from audiobench.evaluators.evaluator import EvaluatedOptions

__all__ = ["MsebProtocolOptions"]


class MsebProtocolOptions(EvaluatedOptions):
    """Base of the options of families scored as MSEB scores them by default."""

    protocol: str = Field(
        "mseb",
        pattern=r"^[a-z][a-z0-9_]*$",
        description="The evaluator that scores the task: 'mseb' (MSEB's definition), or a "
        "plugin's protocol.",
    )
