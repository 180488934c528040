"""A replay's variant, for showing what the reference rule (test/helpers/reference.ts) lets through and what it
catches. ZEROWIRE_REF_VARIANT picks one; unset, the replay is the plain one.

  permute     each step's samples in another order (seeded by the step): the loss is their mean, so only fp32
              rounding can move the result; the rule must pass it
  ulp         every gradient one ulp off (the tied table's sum of two terms included); the rule must pass it
  unscaled    gradients ZEROWIRE_REF_WORLD (4) times too large: a missing 1/N in the averaging; must fail
  bias-step   Adam's step count one ahead from the second step on (a wrong bias correction); must fail
  drop-micro  the second half of each step's samples dropped (a lost micro-batch); must fail
"""
import os

import torch

VARIANT = os.environ.get("ZEROWIRE_REF_VARIANT", "plain")
KNOWN = ("plain", "permute", "ulp", "unscaled", "bias-step", "drop-micro")
if VARIANT not in KNOWN:
    raise SystemExit(f"ZEROWIRE_REF_VARIANT={VARIANT}: not one of {', '.join(KNOWN)}")


def rows(t, rows):
    """The samples step t trains on."""
    if VARIANT == "permute":
        g = torch.Generator().manual_seed(1000 + t)
        return rows[torch.randperm(len(rows), generator=g)]
    if VARIANT == "drop-micro":
        return rows[: len(rows) // 2]
    return rows


def grads(params):
    """Called between backward() and the optimizer's step."""
    if VARIANT not in ("ulp", "unscaled"):
        return
    with torch.no_grad():
        for p in params:
            if p.grad is None:
                continue
            if VARIANT == "ulp":
                p.grad.copy_(torch.nextafter(p.grad, torch.full_like(p.grad, float("inf"))))
            else:
                p.grad.mul_(float(os.environ.get("ZEROWIRE_REF_WORLD", "4")))


def stepped(opt, t):
    """Called after the optimizer's step t (0-based)."""
    if VARIANT == "bias-step" and t == 0:
        for state in opt.state.values():
            state["step"] += 1
