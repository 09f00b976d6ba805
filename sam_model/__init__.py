"""sam_model: a trainable, state-adaptive memory (SAM) for long-horizon LLM agents, and Janus.

The public types, one import away (``from sam_model import SAMRetriever, State, Hit``):

- what an agent logs: :class:`State` (its task state) and :class:`Event` (one logged step);
- the retriever and what it is made of: :class:`SAMRetriever` (= :class:`SAMEncoder`, the network, + a
  :class:`MemoryStore`, the one search over a FAISS :class:`MemoryIndex`, tuned by :class:`StoreConfig`);
  :class:`Encoder` is what a store needs of any encoder; a search returns :class:`Hit` s;
- the run-time memories: :class:`SAMMemory` (the agent loop), :class:`ScopedMemory` (Mem0-style, per user, agent
  and run), :class:`MemoryBank` with its rules' :class:`MemoryConfig`;
- Janus: :class:`JanusController`;
- :class:`SAMFileError`: every bad file or config is one of these, in one line naming it.

They are loaded lazily, on first use: ``import sam_model`` (and ``import sam_model.data``) stays cheap and loads
neither torch nor transformers. (Issue 23's ``SAMStore`` joins this list when it lands.)
"""

__version__ = "0.1.0"

_LAZY = {  # name -> the module that defines it
    "State": "sam_model.data.schema",
    "Event": "sam_model.data.schema",
    "SAMRetriever": "sam_model.retriever",
    "SAMEncoder": "sam_model.encoder",
    "Encoder": "sam_model.encoding",
    "MemoryStore": "sam_model.store",
    "StoreConfig": "sam_model.store",
    "Hit": "sam_model.hit",
    "MemoryIndex": "sam_model.index",
    "SAMMemory": "sam_model.memory.agent",
    "ScopedMemory": "sam_model.memory.scoped",
    "MemoryBank": "sam_model.memory.bank",
    "MemoryConfig": "sam_model.memory.config",
    "JanusController": "sam_model.janus.controller",
    "SAMFileError": "sam_model.io",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value
    raise AttributeError(f"module 'sam_model' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = sorted(_LAZY) + ["__version__"]
