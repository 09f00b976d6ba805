"""The point layout both Qdrant engines share (the client's collections and the embedded Edge shard): one memory
is one point whose id is derived from the memory id, with the scopes in its payload. Kept apart so that neither
engine's module imports the other's library (qdrant-client, qdrant-edge-py)."""

from __future__ import annotations

import json
import uuid

SCOPE_FIELDS = ("user_id", "agent_id", "run_id")
NAMESPACE = uuid.UUID("5b0c4a52-2f5e-4a8e-9a51-8f3c2f7a9e10")  # of the point ids; fixed: changing it orphans data


def point_id(i: str | int) -> str:
    """The Qdrant point id of memory id ``i`` (str and int ids never collide: the type is part of the name);
    Qdrant takes only ints and UUIDs."""
    return str(uuid.uuid5(NAMESPACE, json.dumps([type(i).__name__, str(i)])))


__all__ = ["NAMESPACE", "SCOPE_FIELDS", "point_id"]
