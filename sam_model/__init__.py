"""sam_model: a trainable, state-adaptive memory (SAM) for long-horizon LLM agents, and Janus."""

__version__ = "0.1.0"
