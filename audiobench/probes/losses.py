"""Training losses of the neural probes beyond torch's own: the asymmetric multi-label loss.

Asymmetric loss (ASL; Ridnik et al., "Asymmetric Loss For Multi-Label Classification", ICCV
2021), for independent per-class sigmoids ``p = sigmoid(logit)``:

- a positive (``y = 1``) costs ``-(1 - p)^γ+ · log(p)``;
- a negative (``y = 0``) costs ``-p_m^γ- · log(1 - p_m)`` with the shifted probability
  ``p_m = max(p - m, 0)``: a negative the model already gives less than ``m`` costs nothing,
  and the focusing term ``p_m^γ-`` shrinks the many easy negatives of a multi-label problem.

With ``γ+ = γ- = 0`` and ``m = 0`` it is binary cross-entropy. The defaults are ASL's
recommended values, ``γ+ = 0``, ``γ- = 4``, ``m = 0.05`` (:data:`ASL_DEFAULTS`). The loss of a
clip is the sum over its classes; a batch's is the mean over its clips (Ridnik et al. sum over
the batch too: a constant factor, which AdamW's normalised steps absorb). Logarithms are
clamped at ``eps`` as in their implementation; the gradient flows through the focusing
weights (the loss as written).
"""

from __future__ import annotations

from typing import Final

import torch

__all__ = ["ASL_DEFAULTS", "asymmetric_loss"]

#: ``(γ+, γ-, m)``: ASL's recommended focusing exponents and probability margin.
ASL_DEFAULTS: Final[tuple[float, float, float]] = (0.0, 4.0, 0.05)


def asymmetric_loss(
    logits: torch.Tensor,
    targets: torch.Tensor,
    *,
    gamma_pos: float = ASL_DEFAULTS[0],
    gamma_neg: float = ASL_DEFAULTS[1],
    margin: float = ASL_DEFAULTS[2],
    eps: float = 1e-8,
) -> torch.Tensor:
    """Mean over clips of the summed per-class asymmetric loss; ``targets`` is 0/1 ``[B, C]``."""
    if gamma_pos < 0 or gamma_neg < 0 or not 0 <= margin < 1:
        raise ValueError(
            f"need gamma_pos, gamma_neg >= 0 and 0 <= margin < 1, got "
            f"{gamma_pos}, {gamma_neg}, {margin}"
        )
    p = torch.sigmoid(logits)
    shifted = (p - margin).clamp(min=0) if margin > 0 else p
    positive = torch.log(p.clamp(min=eps))
    negative = torch.log((1 - shifted).clamp(min=eps))
    if gamma_pos > 0:
        positive = positive * (1 - p).pow(gamma_pos)
    if gamma_neg > 0:
        negative = negative * shifted.pow(gamma_neg)
    loss = targets * positive + (1 - targets) * negative
    return -loss.sum(dim=1).mean()
