"""Adapters to agent frameworks. Each submodule imports its framework; nothing here is imported by the core.

- :mod:`sam_model.integrations.langchain` — a ``langchain_core`` retriever (``pip install 'sam_model[langchain]'``).
"""
