"""The memory momentum trigger (MMT): compare a candidate only when it turns away.

A good updater moves the memory in a fairly steady direction; a step that points away
from where the memory has been going (drift towards the latest tasks, a bad batch,
forgetting) is the one worth checking. With φ the memory's features (a fixed-size vector):

    z_t = φ(M̂_t) − φ(M_{t−1})              the proposed step
    fire  ⇔  cos(z_t, m_{t−1}) < τ          compare M̂_t with M_{t−1} before deploying
    m_t = β·m_{t−1} + (1−β)·z_t             momentum of the *deployed* trajectory, m_0 = 0

Edge cases, defined here and tested:

- **First updates.** m_0 = 0, so cos is undefined until a step has been deployed: the
  trigger fires (cos reported as None). ``warmup`` additionally forces a comparison on the
  first ``warmup`` deployed steps, for updaters whose early steps are noisy.
- **Zero-length updates.** ‖z_t‖ ≤ ``zero_tol``: the candidate equals the deployed memory,
  deploying it changes nothing, so the trigger does not fire and m is left as it is (a no-op
  is not a step; it neither decays the momentum nor counts towards warm-up).
- **Comparison budget (optional).** How negative a "turn" is depends on φ and on the updater
  (an updater that overshoots and corrects gives cosines around −0.4 all the time), so a fixed τ
  does not transfer between setups. With ``budget=q`` the threshold is instead the q-quantile of
  the last ``window`` cosines (τ until ``min_history`` have been seen): the trigger compares about
  a fraction q of the updates — the ones that turn the most.
- **Rejected candidates do not move m.** If M̂_t is rejected the memory stays at M_{t−1}: the
  step actually taken is zero. Folding the rejected z_t into m would teach the trigger the very
  direction it just refused, so the next similar (bad) proposal would pass unchecked. Keeping
  m on the deployed trajectory means a repeatedly bad direction keeps being checked.
  ``follow="proposed"`` is the literal reading, m_t = β·m_{t−1} + (1−β)·z_t for every proposed
  (non-zero) step, accepted or not: m is then the updater's usual direction, defined from the
  first proposal on (gate spellings ``mmtp`` / ``mmtpq``).
- **Vectors or directions.** By default m is an EMA of the steps themselves, their lengths included: one large
  deployed step steers it for about 1/(1−β) steps. ``unit=True`` averages the steps' directions instead,
  m_t = β·m_{t−1} + (1−β)·z_t/‖z_t‖ (the literal "EMA of update directions"; spellings with ``u``: ``mmtu``,
  ``mmtpu``, ``mmtuq``, ``mmtpuq``), so every step weighs the same whatever its size.
"""

from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger(__name__)


def cosine(a: np.ndarray, b: np.ndarray, tol: float = 0.0) -> float | None:
    """cos(a, b), or None when either vector has norm ≤ tol (the angle is undefined). Computed on the vectors
    scaled to a largest entry of 1, so steps of any finite size give a cosine (1e200 overflowed the norm: NaN, and
    the step deployed unchecked)."""
    with np.errstate(over="ignore"):  # an overflowing norm is still > tol
        na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na <= tol or nb <= tol:
        return None
    a, b = a / np.abs(a).max(), b / np.abs(b).max()
    return float(np.clip(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)), -1.0, 1.0))


class MemoryMomentumTrigger:
    """Fires when cos(z_t, m_{t−1}) < τ; see the module docstring for the edge cases."""

    name = "mmt"
    needs_encoding = True

    def __init__(self, beta: float = 0.9, tau: float = 0.0, warmup: int = 0, zero_tol: float = 1e-9,
                 budget: float | None = None, window: int = 64, min_history: int = 8, follow: str = "deployed",
                 unit: bool = False):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"beta must be in [0, 1), got {beta}")
        if not -1.0 <= tau <= 1.0:
            raise ValueError(f"tau is a cosine threshold in [-1, 1], got {tau}")
        if warmup < 0:
            raise ValueError(f"warmup must be >= 0, got {warmup}")
        if budget is not None and not 0.0 < budget <= 1.0:
            raise ValueError(f"budget is a fraction of updates in (0, 1], got {budget}")
        if follow not in ("deployed", "proposed"):
            raise ValueError(f"follow is 'deployed' or 'proposed', got {follow!r}")
        if not (isinstance(zero_tol, (int, float)) and zero_tol >= 0):  # NaN fails this too
            raise ValueError(f"zero_tol must be a number >= 0, got {zero_tol}")
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be an integer >= 1 (recent cosines kept), got {window!r}")
        if isinstance(min_history, bool) or not isinstance(min_history, int) or not 1 <= min_history <= window:
            raise ValueError(f"min_history must be an integer from 1 to window ({window}), got {min_history!r}")
        if not isinstance(unit, bool):
            raise ValueError(f"unit must be true or false, got {unit!r}")
        self.follow, self.unit = follow, unit
        self.beta, self.tau, self.warmup, self.zero_tol = beta, tau, warmup, zero_tol
        self.budget, self.window, self.min_history = budget, window, min_history
        self.name = self._spelling()
        self.m: np.ndarray | None = None  # None until the first non-zero step is deployed (m_0 = 0)
        self.deployed_steps = 0
        self.history: list[float] = []  # recent cosines (budget mode)
        self._last_cos: float | None = None

    def _check_dim(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.float64).reshape(-1)
        if self.m is not None and z.shape != self.m.shape:
            raise ValueError(f"memory encoding changed size: {z.shape[0]} vs momentum {self.m.shape[0]}; "
                             "φ must return vectors of one fixed size")
        if not np.all(np.isfinite(z)):  # a NaN step let through unchecked, then stopped the gate for good
            raise ValueError("the step z_t is not finite (NaN or inf in φ): φ must return finite vectors")
        return z

    def is_noop(self, z: np.ndarray) -> bool:
        with np.errstate(over="ignore"):  # an overflowing norm is no no-op
            return float(np.linalg.norm(z)) <= self.zero_tol

    def check(self, t: int, z: np.ndarray | None) -> tuple[bool, float | None]:
        """(fire, cos(z_t, m_{t−1})) for the proposed step z_t; does not change any state."""
        if z is None:
            raise ValueError("the momentum trigger needs z_t = φ(M̂_t) − φ(M_{t−1}), got None")
        z = self._check_dim(z)
        self._last_cos = None
        if self.is_noop(z):
            return False, None
        cos = None if self.m is None else cosine(z, self.m, self.zero_tol)
        self._last_cos = cos
        if cos is None or self.deployed_steps < self.warmup:
            return True, cos
        return cos < self.threshold(), cos

    def threshold(self) -> float:
        """τ, or in budget mode the budget-quantile of the recent cosines."""
        if self.budget is None or len(self.history) < self.min_history:
            return self.tau
        return float(np.quantile(self.history[-self.window :], self.budget))

    def commit(self, t: int, z: np.ndarray | None, accepted: bool) -> None:
        """Move the momentum along a non-zero step: a deployed one, or with ``follow="proposed"`` any."""
        if self._last_cos is not None:
            self.history = (self.history + [self._last_cos])[-self.window :]
            self._last_cos = None
        if z is None or (not accepted and self.follow == "deployed"):
            return
        z = self._check_dim(z)
        if self.is_noop(z):
            return
        m = np.zeros_like(z) if self.m is None else self.m
        if self.unit:  # its direction alone (scaled first: a step of 1e200 has a direction too)
            z = z / np.abs(z).max()
            z = z / np.linalg.norm(z)
        self.m = self.beta * m + (1.0 - self.beta) * z
        self.deployed_steps += int(accepted)

    def state_dict(self) -> dict:
        return {"name": self.name, "beta": self.beta, "tau": self.tau, "warmup": self.warmup,
                "zero_tol": self.zero_tol, "deployed_steps": self.deployed_steps, "budget": self.budget,
                "window": self.window, "min_history": self.min_history, "history": list(self.history),
                "m": None if self.m is None else self.m.tolist(), "follow": self.follow, "unit": self.unit}

    def _spelling(self) -> str:
        """The gate's spelling (sam_model.janus.gates), so a manifest says which one decided: mmt, p when m follows
        every proposed step, u when it averages directions, q in budget mode."""
        return ("mmtp" if self.follow == "proposed" else "mmt") + ("u" if self.unit else "") + (
            "q" if self.budget is not None else "")

    def load_state_dict(self, state: dict) -> None:
        saved = state.get("name")  # mmt and mmtq (budget mode) are one trigger: the saved settings are taken below
        if not isinstance(saved, str) or saved.removesuffix("q") != self.name.removesuffix("q"):
            raise ValueError(f"state is for gate {saved!r}, not {self.name!r}")
        # The saved state is the gate the run was started with (its settings included), checked as the constructor
        # checks them: a hand-edited NaN momentum or a beta of 5 would otherwise stop or skew the gate silently.
        beta, tau = state["beta"], state["tau"]
        if not (isinstance(beta, (int, float)) and 0.0 <= beta < 1.0):
            raise ValueError(f"the saved beta must be in [0, 1), got {beta!r}")
        if not (isinstance(tau, (int, float)) and -1.0 <= tau <= 1.0):
            raise ValueError(f"the saved tau must be in [-1, 1], got {tau!r}")
        steps = state["deployed_steps"]
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise ValueError(f"deployed_steps must be an integer >= 0, got {steps!r}")
        history = state.get("history", [])
        if not (isinstance(history, list) and all(isinstance(c, (int, float)) and np.isfinite(c) for c in history)):
            raise ValueError("the saved history of cosines must be a list of finite numbers (a NaN stops the gate)")
        m = None if state["m"] is None else np.asarray(state["m"], dtype=np.float64)
        if m is not None and (m.ndim != 1 or not np.all(np.isfinite(m))):
            raise ValueError("the saved momentum m is not a finite vector (NaN would stop the gate for good)")
        changed = [k for k in ("beta", "tau", "warmup", "budget", "window") if state.get(k, getattr(self, k)) !=
                   getattr(self, k)]
        if changed:
            log.warning("resuming with the run's own gate settings (%s), not this gate's",
                        ", ".join(f"{k}={state[k]!r}" for k in changed))
        self.beta, self.tau, self.warmup = beta, tau, state["warmup"]
        self.zero_tol, self.deployed_steps = state["zero_tol"], steps
        self.budget, self.window = state.get("budget"), state.get("window", self.window)
        self.min_history, self.history = state.get("min_history", self.min_history), list(state.get("history", []))
        self.m = m
        self.follow, self.unit = state.get("follow", "deployed"), bool(state.get("unit", False))
        self.name = self._spelling()
