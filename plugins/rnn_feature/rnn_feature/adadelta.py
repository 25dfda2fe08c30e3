"""Adadelta (Zeiler 2012) that updates only the rows a minibatch used, with gradient-norm clipping.

The paper trains with Adadelta (rho 0.95, epsilon 1e-6) and GroundHog clips the gradient's norm at
1 (``cutoff``). torch's Adadelta takes no sparse gradients, so every update rewrote the whole
embedding matrices and softmax rows (14-16% of an update's time), of which a minibatch touches a
few hundred rows. Here a sparse gradient (``nn.Embedding(sparse=True)``, ``F.embedding(...,
sparse=True)``) updates the accumulators and weights of its rows only; a row no minibatch touches
keeps its accumulators instead of decaying them (the "lazy" variant, as in TensorFlow's and
PyTorch's sparse optimizers). Dense gradients get exactly ``torch.optim.Adadelta``'s update.

Clipping scales every gradient by ``min(1, clip_norm / (norm + 1e-6))``, the norm taken over all
parameters together, dense and sparse (``torch.nn.utils.clip_grad_norm_``'s rule, which sparse
gradients cannot go through).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch


class SparseAdadelta(torch.optim.Optimizer):
    """Adadelta with lazy sparse rows and global gradient-norm clipping (``clip_norm`` None: none)."""

    def __init__(
        self,
        params: Iterable[torch.nn.Parameter],
        rho: float = 0.9,
        eps: float = 1e-6,
        lr: float = 1.0,
        clip_norm: float | None = None,
    ) -> None:
        super().__init__(params, {"rho": rho, "eps": eps, "lr": lr, "clip_norm": clip_norm})

    @torch.no_grad()
    def step(self, closure: None = None) -> None:  # type: ignore[override]
        """One update from the gradients in ``.grad`` (dense or sparse)."""
        grads: dict[torch.nn.Parameter, torch.Tensor] = {}
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    grads[p] = p.grad.coalesce() if p.grad.is_sparse else p.grad
        self.clip(list(grads.values()))
        for group in self.param_groups:
            rho, eps, lr = group["rho"], group["eps"], group["lr"]
            for p in group["params"]:
                if p not in grads:
                    continue
                state = self.state[p]
                if not state:
                    state["square_avg"] = torch.zeros_like(p)
                    state["acc_delta"] = torch.zeros_like(p)
                grad = grads[p]
                if grad.is_sparse:
                    rows = grad.indices()[0]
                    square_avg = state["square_avg"].index_select(0, rows)
                    acc_delta = state["acc_delta"].index_select(0, rows)
                    delta = adadelta_delta(square_avg, acc_delta, grad.values(), rho, eps)
                    state["square_avg"].index_copy_(0, rows, square_avg)
                    state["acc_delta"].index_copy_(0, rows, acc_delta)
                    p.index_add_(0, rows, delta, alpha=-lr)
                else:
                    p.add_(adadelta_delta(state["square_avg"], state["acc_delta"], grad, rho, eps), alpha=-lr)

    def clip(self, grads: list[torch.Tensor]) -> None:
        """Scale the gradients (in place; sparse ones coalesced) so that their global norm is at most ``clip_norm``.

        The factor stays a tensor (1 when the norm is below the cut): no GPU synchronization per update.
        """
        clip = self.param_groups[0]["clip_norm"]
        if clip is None or not grads:
            return
        tensors = [g.values() if g.is_sparse else g for g in grads]
        norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(tensors)))
        torch._foreach_mul_(tensors, torch.clamp(clip / (norm + 1e-6), max=1.0))


def adadelta_delta(
    square_avg: torch.Tensor, acc_delta: torch.Tensor, grad: torch.Tensor, rho: float, eps: float
) -> torch.Tensor:
    """Update the running averages in place and return the step (before ``lr``), as torch's Adadelta does."""
    square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
    delta = acc_delta.add(eps).sqrt_().div_(square_avg.add(eps).sqrt_()).mul_(grad)
    acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
    return delta
