"""Janus: deploy only the memory updates that hold up.

Wrap any memory updater in a :class:`JanusController`; a gate (the memory momentum trigger or a
baseline) decides which candidates to compare on a small hybrid evaluation set before deploying.
"""

from sam_model.janus.controller import JanusController, StepDecision
from sam_model.janus.evalset import EvalSelection, HybridEvalSet
from sam_model.janus.gates import AlwaysGate, NoGate, PeriodicGate, RandomGate, RandomSubsetGate, make_gate
from sam_model.janus.protocols import Evaluator, Gate, Memory, MemoryEncoder, TaskEncoder, Updater
from sam_model.janus.trigger import MemoryMomentumTrigger, cosine

__all__ = [
    "AlwaysGate", "EvalSelection", "Evaluator", "Gate", "HybridEvalSet", "JanusController", "Memory",
    "MemoryEncoder", "MemoryMomentumTrigger", "NoGate", "PeriodicGate", "RandomGate", "RandomSubsetGate",
    "StepDecision", "TaskEncoder", "Updater", "cosine", "make_gate",
]
