"""sam-serve: one SAM memory for many agents, users and processes — over HTTP (FastAPI) and MCP.

    sam-serve --keys keys.json                                   # embedded FAISS, data under ./sam-serve-data
    sam-serve --keys keys.json --qdrant-url http://qdrant:6333   # the vectors in a Qdrant server or cluster

- sam_model.serve.http: the Mem0-style HTTP API (add, search, get, get_all, update, delete, history);
- sam_model.serve.mcp: the MCP tools remember / recall / forget, mounted at /mcp (or over stdio);
- sam_model.serve.tenants: one memory per API key (tenant), its write-ahead log and checkpoints;
- sam_model.serve.wal: the write-ahead log that makes an acknowledged write survive kill -9;
- sam_model.serve.cli: the command. The inference path only: no Lightning (tests/test_layering.py).
"""
