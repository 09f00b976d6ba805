"""The names the backends share (kept apart so that sam_model.backends and its engines never import each other)."""

QDRANT = "qdrant"  # StoreConfig.index["kind"] of a Qdrant collection
QDRANT_FORMAT = "sam_model.QdrantIndex"  # meta.json "format" of a Qdrant-backed index folder
QDRANT_EDGE = "qdrant-edge"  # StoreConfig.index["kind"] of an embedded Qdrant Edge shard (qdrant-edge-py)
QDRANT_EDGE_FORMAT = "sam_model.QdrantEdgeIndex"  # meta.json "format" of a Qdrant-Edge-backed index folder
