"""Janus: deploy only the memory updates that hold up.

Wrap any memory updater in a :class:`JanusController`; a gate (the memory momentum trigger or a
baseline) decides which candidates to compare on a small hybrid evaluation set before deploying.
"""

from sam_model.janus.controller import JanusController, StepDecision, StepSavedError
from sam_model.janus.evalset import EvalSelection, HybridEvalSet
from sam_model.janus.gates import AlwaysGate, NoGate, PeriodicGate, RandomGate, RandomSubsetGate, make_gate
from sam_model.janus.protocols import Evaluator, Gate, Memory, MemoryFeatures, TaskFeatures, Updater
from sam_model.janus.trigger import MemoryMomentumTrigger, cosine

MemoryEncoder = MemoryFeatures  # deprecated names: "Encoder" is the retriever's (sam_model.encoding.Encoder)
TaskEncoder = TaskFeatures

__all__ = [
    "AlwaysGate", "EvalSelection", "Evaluator", "Gate", "HybridEvalSet", "JanusController", "Memory",
    "MemoryFeatures", "MemoryMomentumTrigger", "NoGate", "PeriodicGate", "RandomGate", "RandomSubsetGate",
    "StepDecision", "StepSavedError", "TaskFeatures", "Updater", "cosine", "make_gate", "MemoryEncoder", "TaskEncoder",
]
