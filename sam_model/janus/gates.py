"""Gate policies: when to compare a candidate memory before deploying it.

``none`` deploys every candidate (the base updater alone), ``always`` compares every one,
``periodic(n)`` every n-th, ``random(p, seed)`` each with probability p, ``randomk(k, n, seed)`` exactly k
of n at random (the benchmark's random baseline, at MMT's count), and ``mmt`` is the memory momentum trigger.
``make_gate("periodic(5)")`` builds one from the spelling used in configs and manifests.
"""

from __future__ import annotations

import re

import numpy as np

from sam_model.janus.trigger import MemoryMomentumTrigger


class _Stateless:
    needs_encoding = False

    def commit(self, t: int, z: np.ndarray | None, accepted: bool) -> None:
        pass

    def state_dict(self) -> dict:
        return {"name": self.name}

    def load_state_dict(self, state: dict) -> None:
        if state.get("name") != self.name:
            raise ValueError(f"state is for gate {state.get('name')!r}, not {self.name!r}")


class NoGate(_Stateless):
    """Never compares: every candidate is deployed."""

    name = "none"

    def check(self, t: int, z: np.ndarray | None) -> tuple[bool, float | None]:
        return False, None


class AlwaysGate(_Stateless):
    """Compares every candidate: the most expensive, the reference for comparison counts."""

    name = "always"

    def check(self, t: int, z: np.ndarray | None) -> tuple[bool, float | None]:
        return True, None


class PeriodicGate(_Stateless):
    """Compares at the first update past each multiple of n: t = n, 2n, 3n, ... for an integer n (t counts
    updates from 1). A real n spaces comparisons evenly, so that T updates get exactly floor(T / n) of
    them: what a baseline matched to another gate's count needs (51 / 36 is not an integer)."""

    def __init__(self, n: float):
        if not n >= 1:
            raise ValueError(f"periodic(n) needs n >= 1, got {n}")
        self.n = int(n) if float(n).is_integer() else float(n)
        self.name = f"periodic({self.n:.12g})"

    def check(self, t: int, z: np.ndarray | None) -> tuple[bool, float | None]:
        eps = 1e-6  # n parsed from 12 digits: t / n may fall a hair short of the integer it stands for
        return int(t / self.n + eps) > int((t - 1) / self.n + eps), None


class RandomGate:
    """Compares each candidate with probability p, from its own seeded stream (resumable)."""

    needs_encoding = False

    def __init__(self, p: float, seed: int = 0):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"random(p) needs p in [0, 1], got {p}")
        self.p, self.seed = p, seed
        self.name = f"random({p:g},{seed})"
        self.rng = np.random.default_rng(seed)

    def check(self, t: int, z: np.ndarray | None) -> tuple[bool, float | None]:
        return bool(self.rng.random() < self.p), None

    def commit(self, t: int, z: np.ndarray | None, accepted: bool) -> None:
        pass

    def state_dict(self) -> dict:
        return {"name": self.name, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict) -> None:
        if state.get("name") != self.name:
            raise ValueError(f"state is for gate {state.get('name')!r}, not {self.name!r}")
        self.rng.bit_generator.state = state["rng"]


class RandomSubsetGate(_Stateless):
    """Compares exactly k of the updates t = 1..n, a seeded uniform draw: the random baseline at another gate's
    exact count (``random(p)`` matches a count only in expectation)."""

    def __init__(self, k: int, n: int, seed: int = 0):
        if not 0 <= k <= n or n < 1:
            raise ValueError(f"randomk(k,n) needs 0 <= k <= n and n >= 1, got k={k}, n={n}")
        self.k, self.n, self.seed = k, n, seed
        self.name = f"randomk({k},{n},{seed})"
        self.steps = {int(t) + 1 for t in np.random.default_rng(seed).choice(n, k, replace=False)}

    def check(self, t: int, z: np.ndarray | None) -> tuple[bool, float | None]:
        return t in self.steps, None


GATE_HELP = ("none | always | periodic(N) | random(P[,SEED]) | randomk(K,N[,SEED]) | mmt[(BETA,TAU[,WARMUP])] | mmtq(BETA,BUDGET[,TAU]) "
             "| mmtp(BETA,TAU[,WARMUP]) | mmtpq(BETA,BUDGET[,TAU])  (mmtp*: the momentum follows every proposed step; "
             "a u after mmt or mmtp, e.g. mmtu(0.9,-0.6), averages the steps' directions instead of the steps)")


def make_gate(spec: str) -> NoGate | AlwaysGate | PeriodicGate | RandomGate | RandomSubsetGate | MemoryMomentumTrigger:
    """Parse a gate spelling such as ``periodic(5)``, ``random(0.2,1)``, ``mmt(0.9,0.0)`` or ``mmtq(0.9,0.25)``
    (MMT with a comparison budget: the threshold is the 0.25-quantile of recent cosines; an optional third
    argument is τ, the threshold until enough cosines have been seen, 0 by default)."""
    m = re.fullmatch(r"\s*([a-z]+)\s*(?:\(([^)]*)\))?\s*", spec)
    if not m:
        raise ValueError(f"cannot parse gate {spec!r}; expected {GATE_HELP}")
    name, args = m.group(1), [a.strip() for a in (m.group(2) or "").split(",") if a.strip()]
    try:
        if name == "none" and not args:
            return NoGate()
        if name == "always" and not args:
            return AlwaysGate()
        if name == "periodic" and len(args) == 1:
            return PeriodicGate(float(args[0]))
        if name == "randomk" and len(args) in (2, 3):
            return RandomSubsetGate(int(args[0]), int(args[1]), int(args[2]) if len(args) == 3 else 0)
        if name == "random" and len(args) in (1, 2):
            return RandomGate(float(args[0]), int(args[1]) if len(args) == 2 else 0)
        follow = "proposed" if name.startswith("mmtp") else "deployed"
        unit = name.removesuffix("q").endswith("u")
        plain = name.replace("u", "", 1) if name.startswith("mmt") and unit else name
        if plain in ("mmt", "mmtp") and len(args) in (0, 2, 3):
            if not args:
                return MemoryMomentumTrigger(follow=follow, unit=unit)
            return MemoryMomentumTrigger(float(args[0]), float(args[1]), int(args[2]) if len(args) == 3 else 0,
                                         follow=follow, unit=unit)
        if plain in ("mmtq", "mmtpq") and len(args) in (2, 3):
            tau = float(args[2]) if len(args) == 3 else 0.0
            return MemoryMomentumTrigger(float(args[0]), tau, budget=float(args[1]), follow=follow, unit=unit)
    except ValueError as exc:
        raise ValueError(f"bad gate {spec!r}: {exc}") from None
    raise ValueError(f"unknown gate {spec!r}; expected {GATE_HELP}")
