"""StoreConfig: how a MemoryStore searches (re-rank weights and depth, provenance links, the vector backend, the tie
seed, chunking, the used memories' order), checked field by field.

Apart from the store because it travels without one: an export folder's ``config.json`` (field ``store``), a
training config's ``model.store`` and every saved store carry it, and a config read back from a file is refused in
one line naming its field before any store is made. README names it as ``sam_model.store.StoreConfig``, which
resolves too (the store imports it).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sam_model.backends import check_index_config
from sam_model.data.chunks import Chunking
from sam_model.data.reuse import USED_ORDERS
from sam_model.io import json_type
from sam_model.rerank import RERANK_DEPTH


@dataclass
class StoreConfig:
    """How the store searches. Saved with the store and in export folders (``config.json`` field ``store``).

    Args:
        slot_match: weight w of the needed-slot re-rank (sam_model.rerank); 0 = off. Training ignores it:
            choose it on held-out training data.
        provenance: place after each hit the earlier memory its state's adopted values came from.
        source_kinds: memory kinds a provenance link may point to (the kinds the training labels call useful,
            set by training); empty = every kind.
        rerank_depth: how many of the index's top candidates the re-rank reorders (one depth for every path).
        lexical: weight of the lexical match between the state text and each re-ranked candidate (BM25 scaled
            by the best candidate's, sam_model.rerank.lexical_bonus); 0 = off. Training ignores it.
        index: the vector backend (sam_model.backends): a FAISS index (sam_model.index.MemoryIndex.from_config),
            e.g. {"kind": "ivf", "nprobe": 32}, or a Qdrant collection, e.g. {"kind": "qdrant", "url": ...}.
        tie_seed: seed of the tie order among exactly equal scores.
        chunking: split memories longer than the encoder's window into chunks, each searched on its own
            (sam_model.data.chunks.Chunking: ``{"size": 180, "overlap": 50}`` characters, or ``{"tokens": 64,
            "overlap": 50}``: each chunk's text at most 64 of the memory encoder's tokens, by its tokenizer); None =
            off. Short memories are unchanged; ``search(fold=True)`` keeps the best chunk per memory.
        used_order: the memories the task's earlier tool calls took values from first (a search given ``used``;
            ScopedMemory and sam-serve always give it), in the model's order (``"model"``) or by their latest use,
            ties in the model's order (``"latest"``), or by their latest use but only those that supplied a slot
            the call needs (``"needed"``: a task turned to a new request keeps its earlier request's memories in
            the model's order; sam_model.data.reuse.needed_used), then the rest (sam_model.data.reuse.used_first);
            None = off.
            The default of every search of the store (a call's ``used_order`` overrides it), so an agent served
            from a saved store or an export gets it without a flag. A rule: any model may use it.
        lexical_per_query: each query's lexical weight is the last part of its vector, w(v_s) of a network
            trained with SAMConfig.lexical_state (sam_model.models.lexstate), in place of the one ``lexical``:
            set by sam_model.export.served_store for such a network. A fixed weight set after loading wins
            (:meth:`with_lexical`, which every path that sets one goes through, turns this off). Saved only when on.
    """

    slot_match: float = 0.0
    provenance: bool = True
    source_kinds: list[str] = field(default_factory=list)
    rerank_depth: int = RERANK_DEPTH
    index: dict[str, Any] = field(default_factory=lambda: {"kind": "flat"})
    tie_seed: int = 0
    lexical: float = 0.0
    chunking: dict[str, int] | None = None
    used_order: str | None = None
    lexical_per_query: bool = False

    def __post_init__(self) -> None:
        self.check()

    def check(self, where: str = "store config") -> None:
        """Raise ValueError naming ``<where>.<field>`` for a value of the wrong type or range."""
        checks = [
            ("slot_match", isinstance(self.slot_match, (int, float)) and not isinstance(self.slot_match, bool)
             and math.isfinite(self.slot_match) and self.slot_match >= 0, "a finite number >= 0"),
            ("provenance", isinstance(self.provenance, bool), "true or false"),
            ("source_kinds", isinstance(self.source_kinds, (list, tuple))
             and all(isinstance(k, str) for k in self.source_kinds), "a list of strings"),
            ("rerank_depth", isinstance(self.rerank_depth, int) and not isinstance(self.rerank_depth, bool)
             and self.rerank_depth >= 1, "an integer >= 1"),
            ("index", isinstance(self.index, Mapping), "an object such as {\"kind\": \"flat\"}"),
            ("tie_seed", isinstance(self.tie_seed, int) and not isinstance(self.tie_seed, bool), "an integer"),
            ("lexical", isinstance(self.lexical, (int, float)) and not isinstance(self.lexical, bool)
             and math.isfinite(self.lexical) and self.lexical >= 0, "a finite number >= 0"),
            ("lexical_per_query", isinstance(self.lexical_per_query, bool), "true or false"),
            ("used_order", self.used_order is None or self.used_order in USED_ORDERS,
             " or ".join(map(json.dumps, USED_ORDERS)) + " or null"),
        ]
        for name, ok, want in checks:
            if not ok:
                raise ValueError(f"field '{where}.{name}' must be {want}, got {json.dumps(getattr(self, name), default=repr)}")
        check_index_config(dict(self.index), f"{where}.index")
        Chunking.from_dict(self.chunking, f"{where}.chunking")

    @property
    def chunker(self) -> Chunking | None:
        """The chunking in use (None: memories are stored whole)."""
        return Chunking.from_dict(self.chunking)

    def to_dict(self) -> dict[str, Any]:
        """The fields as saved; ``lexical_per_query`` only when on, so every other store and export saves what it
        saved before the field existed, and older sam_model versions (which refuse an unknown field) load it."""
        d = dataclasses.asdict(self)
        if not d["lexical_per_query"]:
            del d["lexical_per_query"]
        return d

    def with_lexical(self, weight: float) -> StoreConfig:
        """This config with the fixed lexical weight ``weight`` for every query: a weight set after loading (the
        lodo bench's grid, train.py fit's export.lexical, a choice's record, evaluate's settings) replaces a
        network's per-query one (``lexical_per_query`` off)."""
        return dataclasses.replace(self, lexical=float(weight), lexical_per_query=False)

    @classmethod
    def from_dict(cls, d: object, where: str = "store") -> StoreConfig:
        """A config read back from a file: unknown fields and wrong types raise ValueError naming the field."""
        if not isinstance(d, Mapping):
            raise ValueError(f"'{where}' must be an object, got {json_type(d)}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"'{where}' has unknown field(s) {unknown}; known: {sorted(names)}")
        self = cls.__new__(cls)
        defaults = cls()
        for f in dataclasses.fields(cls):
            setattr(self, f.name, d.get(f.name, getattr(defaults, f.name)))
        self.check(where)
        self.source_kinds, self.index = list(self.source_kinds), dict(self.index)
        return self

    @classmethod
    def from_legacy(cls, sam: Mapping[str, Any], where: str = "sam") -> StoreConfig:
        """The search settings an older export or checkpoint kept in its network config (SAMConfig's
        ``source_kinds``, ``provenance``, ``slot_match``): read into a store config so it searches as it did.
        One saved before provenance links existed (no ``source_kinds``) searches without them; a missing
        ``slot_match`` is an error, as it was."""
        if "source_kinds" not in sam:
            return cls(slot_match=_legacy_slot_match(sam, where), provenance=False, source_kinds=[])
        return cls.from_dict({"slot_match": _legacy_slot_match(sam, where), "provenance": sam.get("provenance", True),
                              "source_kinds": sam["source_kinds"]}, where)


def _legacy_slot_match(sam: Mapping[str, Any], where: str) -> float:
    if "slot_match" not in sam:
        raise ValueError(f"field '{where}.slot_match' is missing")
    return sam["slot_match"]


__all__ = ["StoreConfig"]
