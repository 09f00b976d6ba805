"""SAM at run time: a memory bank that grows, links, strengthens, fades and is pruned by the agent's state.

- :mod:`unit` — one memory (text, embedding, provenance, facts, dynamic importance, edges);
- :mod:`graph` — typed edges and retrieval expansion along them;
- :mod:`tiers` — a working tier searched exactly and a long-term IVF tier;
- :mod:`bank` — the units, their search, and atomic persistence;
- :mod:`updater` — the state-driven rules (filter, link, correct, decay, reinforce, suppress, prune, tier);
- :mod:`agent` — ``SAMMemory``: the calls an agent loop makes;
- :mod:`retrievers` — stand-in retrievers with the SAMRetriever API.

Nothing here imports Lightning.
"""

from sam_model.memory.agent import SAMMemory, build_prompt, parse_reply
from sam_model.memory.bank import Hit, MemoryBank
from sam_model.memory.config import MemoryConfig
from sam_model.memory.graph import EDGE_TYPES, MemoryGraph
from sam_model.memory.retrievers import ContentRetriever, HashingRetriever
from sam_model.memory.unit import MemoryUnit
from sam_model.memory.updater import Updater

__all__ = [
    "EDGE_TYPES",
    "ContentRetriever",
    "HashingRetriever",
    "Hit",
    "MemoryBank",
    "MemoryConfig",
    "MemoryGraph",
    "MemoryUnit",
    "SAMMemory",
    "Updater",
    "build_prompt",
    "parse_reply",
]
