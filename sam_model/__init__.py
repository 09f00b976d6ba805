"""sam_model: a trainable, state-adaptive memory (SAM) for long-horizon LLM agents, and Janus."""

__version__ = "0.1.0"


def __getattr__(name: str):
    # Lazy, so `import sam_model.data` does not pay for torch and transformers.
    if name == "SAMRetriever":
        from sam_model.retriever import SAMRetriever

        return SAMRetriever
    if name == "MemoryIndex":
        from sam_model.index import MemoryIndex

        return MemoryIndex
    raise AttributeError(f"module 'sam_model' has no attribute {name!r}")


__all__ = ["MemoryIndex", "SAMRetriever", "__version__"]
