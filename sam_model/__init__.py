"""sam_model: a trainable, state-adaptive memory (SAM) for long-horizon LLM agents, and Janus."""

__version__ = "0.1.0"

_LAZY = {  # name -> module; lazy, so `import sam_model.data` does not pay for torch and transformers
    "SAMRetriever": "sam_model.retriever",
    "SAMEncoder": "sam_model.encoder",
    "MemoryStore": "sam_model.store",
    "StoreConfig": "sam_model.store",
    "MemoryIndex": "sam_model.index",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sam_model' has no attribute {name!r}")


__all__ = ["MemoryIndex", "MemoryStore", "SAMEncoder", "SAMRetriever", "StoreConfig", "__version__"]
