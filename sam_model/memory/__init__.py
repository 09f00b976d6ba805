"""SAM at run time: a memory bank that grows, links, strengthens, fades and is pruned by the agent's state.

- :mod:`unit` — one memory (text, provenance, facts, dynamic importance, edges; its vector lives in the index);
- :mod:`graph` — typed edges and retrieval expansion along them;
- :mod:`tiers` — a working tier searched exactly and a long-term IVF tier;
- :mod:`bank` — the units, their memory store (sam_model.store: the one search), and atomic persistence;
- :mod:`rules` — the state-driven rules (filter, link, correct, decay, reinforce, suppress, prune, tier);
- :mod:`agent` — ``SAMMemory``: the calls an agent loop makes;
- :mod:`scoped` — ``ScopedMemory``: a Mem0-style memory API (add / search / get_all / delete / reset per user,
  agent and run) over one store;
- :mod:`encoders` — stand-in encoders with the SAMEncoder API.

Nothing here imports Lightning.
"""

from sam_model.memory.agent import SAMMemory, build_prompt, parse_reply
from sam_model.memory.bank import MemoryBank
from sam_model.memory.config import MemoryConfig
from sam_model.memory.encoders import ContentEncoder, HashingEncoder
from sam_model.memory.graph import EDGE_TYPES, MemoryGraph
from sam_model.memory.rules import BankRules
from sam_model.memory.scoped import ScopedMemory
from sam_model.memory.unit import MemoryUnit

__all__ = [
    "EDGE_TYPES",
    "BankRules",
    "ContentEncoder",
    "HashingEncoder",
    "MemoryBank",
    "MemoryConfig",
    "MemoryGraph",
    "MemoryUnit",
    "SAMMemory",
    "ScopedMemory",
    "build_prompt",
    "parse_reply",
]
