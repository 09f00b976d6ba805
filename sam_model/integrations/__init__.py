"""Adapters to agent frameworks. Each submodule imports its framework; nothing here is imported by the core.

- :mod:`sam_model.integrations.langchain` — a ``langchain_core`` retriever scoped on every Runnable path, and a
  ``VectorStore`` (``pip install 'sam_model[langchain]'``);
- :mod:`sam_model.integrations.langgraph` — ``SAMStore``, LangGraph's long-term memory ``BaseStore``.
- :mod:`sam_model.integrations.autogen` — ``SAMAutoGenMemory``, AutoGen's ``Memory`` protocol (an
  ``AssistantAgent``'s ``memory=``; ``pip install autogen-agentchat``).
- :mod:`sam_model.integrations.smolagents` — ``SAMStepCallback``, a smolagents step callback storing each finished
  step, and ``SAMRecallTool``, a ``Tool`` the agent calls to recall (``pip install smolagents``).
- :mod:`sam_model.integrations.llamaindex` — ``SAMMemoryBlock``, a memory block of LlamaIndex's ``Memory`` storing the
  agent's history and recalling for its state (``pip install llama-index-core``).
- :mod:`sam_model.integrations.adk` — ``SAMMemoryService``, Google ADK's ``BaseMemoryService``: each session added
  stored once as the ``adk`` reader reads it, searched by app and user (``pip install google-adk``).
- :mod:`sam_model.integrations.pydantic_ai` — ``SAMCapability``, a Pydantic AI capability recalling before each run
  (framed as data in the requests, not the instructions nor the history) and storing its new messages after it (``pip install
  pydantic-ai-slim``).
- :mod:`sam_model.integrations.fitting` — no framework: a message too long for a memory cut as the importer cuts it,
  for the adapters storing as the agent runs.
- :mod:`sam_model.integrations.scopes` — no framework: the adapters' scopes checked when made, the filter of a
  memory of no user, the recall's numbered text.
"""
