"""Every knob of the run-time memory in one place.

The bank saves its config with its units, so a bank reloaded tomorrow keeps
forgetting, linking and pruning by the same rules it was built with. ``MemoryConfig()`` is the
full set of priors (for encoders without learned time features); ``MemoryConfig.for_encoder``
picks the defaults a given encoder was measured to want.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from sam_model.memory.graph import EDGE_TYPES

# Expansion weights per edge type: (forward, backward). Forward follows the edge
# from its source to its target (a decision to the constraint it was derived from);
# backward goes the other way (an outdated value to the unit that corrected it).
DEFAULT_EDGE_WEIGHTS: dict[str, tuple[float, float]] = {
    "derived_from": (0.9, 0.3),
    "corrects": (0.5, 0.9),
    "confirms": (0.6, 0.6),
    "same_entity": (0.6, 0.6),
    "conflicts_with": (0.4, 0.4),
    "temporal_next": (0.5, 0.5),
}


LEGACY_FIELDS = ("pool",)  # read from older banks and ignored: the store's rerank_depth is the one depth now


@dataclass
class MemoryConfig:
    """How the bank writes, links, forgets, prunes, tiers and expands.

    ``keep_kinds`` maps a phase to the event kinds written in it; ``"*"`` is the
    default for phases not listed, and a missing ``"*"`` keeps every kind. This is
    how the state filters writes (e.g. drop chit-chat while booking).
    """

    # writes filtered by state
    keep_kinds: dict[str, list[str]] = field(default_factory=dict)
    # importance
    half_life: float = 100.0  # ticks (events) for importance to halve; 0 = no decay
    reinforce: float = 1.0  # added to a unit's importance when it is retrieved and used
    max_importance: float = 5.0
    suppress: float = 0.5  # factor on a finished phase's details when the task moves on
    demote: float = 0.5  # factor on a unit whose slot value was corrected
    fact_bonus: float = 0.5  # extra initial importance of a unit that sets slot values
    # linking
    correct_kinds: list[str] | None = None  # kinds whose slot changes count as corrections (None: all)
    decision_kinds: list[str] = field(default_factory=lambda: ["action", "thought", "system"])
    max_entity_links: int = 4
    # capacity (0 = unbounded): the most units after each write, summaries included (a hard bound, see
    # BankRules.enforce_capacity: what no unit within it can hold is forgotten)
    capacity: int = 0
    prune_batch: float = 0.02  # prune this fraction of capacity at once (amortises the sort)
    summary_importance: float = 1.0
    # tiers (working_size 0 = one flat exact store)
    working_size: int = 0
    ivf_nlist: int | None = None  # IVF lists of the long-term tier (None: ~4*sqrt(n), trained at ~24k units)
    ivf_nprobe: int = 32  # lists probed per query; the index benchmark keeps recall@10 ~0.95 at 1M with 32
    # retrieval expansion along edges
    expand: bool = True
    edge_weights: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_EDGE_WEIGHTS))
    hop_decay: float = 0.7
    max_hops: int = 2
    max_expanded: int = 10
    temperature: float = 0.05  # similarity / temperature = logit (SAM is trained with an InfoNCE softmax)
    off_need_factor: float = 0.2  # expansion factor on units holding none of the state's needed slots
    superseded_factor: float = 0.5  # score factor of a unit whose facts were all corrected
    importance_weight: float = 0.6  # weight of log(importance relative to the best candidate) in the logit

    def __post_init__(self) -> None:
        self._check_types()
        checks = [
            (self.reinforce >= 0 and self.fact_bonus >= 0 and self.summary_importance > 0,
             "reinforce and fact_bonus must be >= 0, summary_importance > 0"),
            (self.max_importance >= 1, "max_importance must be >= 1 (a new unit's importance without facts)"),
            (0 < self.hop_decay <= 1 and self.max_hops <= 100, "hop_decay must be in (0, 1] and max_hops at most 100"),
            (self.ivf_nprobe >= 1 and (self.ivf_nlist is None or self.ivf_nlist >= 1) and self.max_entity_links >= 0,
             "ivf_nprobe and ivf_nlist must be >= 1, max_entity_links >= 0"),
            (self.half_life >= 0, "half_life must be >= 0 (0 = no decay)"),
            (0 < self.suppress <= 1 and 0 < self.demote <= 1, "suppress and demote must be in (0, 1]"),
            (0 <= self.superseded_factor <= 1 and 0 <= self.off_need_factor <= 1,
             "superseded_factor and off_need_factor must be in [0, 1]"),
            (self.importance_weight >= 0 and self.temperature > 0, "importance_weight >= 0, temperature > 0"),
            (self.capacity >= 0 and self.working_size >= 0, "capacity and working_size must be >= 0"),
            (0 <= self.prune_batch < 1, "prune_batch must be in [0, 1)"),
            (self.max_hops >= 0 and self.max_expanded >= 0, "max_hops and max_expanded must be >= 0"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ValueError(f"memory config: {msg}")
        bad = sorted(set(self.edge_weights) - set(EDGE_TYPES))
        if bad:
            raise ValueError(f"memory config: unknown edge type(s) {bad} in edge_weights; known: {EDGE_TYPES}")

    def _check_types(self) -> None:
        """Every field of the type it is read as, in one line naming it: a config loaded from a bank file, or
        built from a user's YAML, with ``capacity: "10"`` or ``reinforce: .nan`` failed later, or inverted the
        rules (a NaN reinforcement, a string of kinds matched by substring)."""
        def bad(name: str, want: str) -> None:
            raise ValueError(f"memory config: {name} must be {want}, got {getattr(self, name)!r}")

        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.type == "float":
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    bad(f.name, "a finite number")
            elif f.type in ("int", "int | None") and not (v is None and f.type == "int | None"):
                if isinstance(v, bool) or not isinstance(v, int):
                    bad(f.name, "an integer")
            elif f.type == "bool" and not isinstance(v, bool):
                bad(f.name, "true or false")

        def names(v: Any) -> bool:
            return isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)

        if not isinstance(self.keep_kinds, dict) or not all(isinstance(k, str) and names(v)
                                                            for k, v in self.keep_kinds.items()):
            bad("keep_kinds", "a mapping phase -> list of kinds")
        if not names(self.decision_kinds):
            bad("decision_kinds", "a list of kinds")
        if self.correct_kinds is not None and not names(self.correct_kinds):
            bad("correct_kinds", "a list of kinds or null")
        if not isinstance(self.edge_weights, dict) or not all(
                isinstance(w, (list, tuple)) and len(w) == 2 and all(
                    not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x) and x >= 0 for x in w)
                for w in self.edge_weights.values()):
            bad("edge_weights", "a mapping edge type -> (forward, backward) weights >= 0")

    @classmethod
    def for_encoder(cls, encoder: Any) -> MemoryConfig:
        """The default rules for a bank served by ``encoder``, set by what ``python -m sam_model.bench.memory``
        measures over agent lives (README, "Run-time memory").

        A SAM model with learned time features (SAMConfig.time_features > 0) already ranks the current task's
        memories first: on top of it the importance priors (decay, finished-phase suppression, corrected units)
        change MRR by less than 0.01, and graph expansion costs recall. So the bank searches exactly as the
        store does (what evaluate.py measures): importance and corrections do not reorder the search, there is
        no expansion; decay and suppression still decide what is pruned when a capacity is set. Any other
        encoder (no time features, or content-only) keeps every prior and expansion: without time features they
        are what finds the current task (+0.47 MRR on the synthetic lives).
        """
        net = getattr(getattr(encoder, "encoder", encoder), "net", None)
        if int(getattr(getattr(net, "cfg", None), "time_features", 0) or 0) > 0:
            return cls(importance_weight=0.0, superseded_factor=1.0, expand=False)
        return cls()

    def kinds_kept(self, phase: str) -> list[str] | None:
        """Kinds written in ``phase`` (None = all)."""
        if phase in self.keep_kinds:
            return self.keep_kinds[phase]
        return self.keep_kinds.get("*")

    @property
    def decay(self) -> float:
        """Importance factor per tick."""
        return 0.5 ** (1.0 / self.half_life) if self.half_life > 0 else 1.0

    def to_json(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["edge_weights"] = {k: list(v) for k, v in self.edge_weights.items()}
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any], where: str = "memory config") -> MemoryConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(obj) - names - set(LEGACY_FIELDS))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown}; known: {sorted(names)}")
        obj = {k: v for k, v in obj.items() if k not in LEGACY_FIELDS}
        if "edge_weights" in obj:
            obj["edge_weights"] = {k: tuple(v) for k, v in obj["edge_weights"].items()}
        return cls(**obj)
