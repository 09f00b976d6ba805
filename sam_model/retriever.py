"""SAMRetriever: the trained retriever at inference time — encode, index, search. No Lightning.

    r = SAMRetriever.load("checkpoints/demo/export")
    r.add_memories(memories)                       # MemoryRecords (or anything with .id/.text/.kind/.phase)
    ids, scores = r.search(state, "ok, go ahead", k=5, episode_id="trip-17")

Queries are q = [α·W_sᵀ v_s, (1−α)·c_obs] and memories [v_m, c_m], so one inner-product
index over memories serves state-adaptive search (see sam_model.models.sam).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from sam_model.data.examples import MemoryRecord, memory_record
from sam_model.data.schema import Event, State
from sam_model.data.text import state_to_text
from sam_model.index import MemoryIndex
from sam_model.models.sam import SAMNet


def _as_state(s: State | Mapping[str, Any]) -> State:
    return s if isinstance(s, State) else State.from_json(dict(s))


def _as_memory(m: Any) -> Any:
    return memory_record(m, None) if isinstance(m, Event) else m


class SAMRetriever:
    def __init__(self, net: SAMNet, index_config: dict | None = None):
        self.net = net.eval()
        self.index_config = index_config or {"kind": "flat"}
        self.index: MemoryIndex | None = None

    @classmethod
    def load(cls, path: str | os.PathLike, device: str | None = None,
             index_config: dict | None = None) -> SAMRetriever:
        """Load an export folder (``python -m sam_model.export``); an index saved in ``path/index`` comes too."""
        from sam_model.export import load_exported

        r = cls(load_exported(path, device), index_config)
        if (Path(path) / "index").exists():
            r.index = MemoryIndex.load(Path(path) / "index", expected_dim=r.dim)
        return r

    @classmethod
    def from_checkpoint(cls, ckpt: str | os.PathLike, device: str | None = None) -> SAMRetriever:
        """Load straight from a Lightning ``.ckpt`` (torch.load; Lightning is only needed to unpickle it)."""
        from sam_model.export import net_from_checkpoint

        return cls(net_from_checkpoint(ckpt, device))

    def clear_cache(self) -> None:
        """Forget cached BERT vectors of texts (they grow with every new text seen by a frozen BERT)."""
        for module in self.net.modules():
            if hasattr(module, "clear_cache") and module is not self.net:
                module.clear_cache()

    @property
    def dim(self) -> int:
        return self.net.out_dim

    @property
    def device(self) -> torch.device:
        return self.net.alpha_logit.device

    def _batched(self, n: int, batch_size: int, progress: bool, desc: str, fn) -> np.ndarray:
        out = []
        with torch.inference_mode():
            for i in tqdm(range(0, n, batch_size), desc=desc, disable=not progress, unit="batch"):
                out.append(fn(slice(i, i + batch_size)).float().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, self.dim), dtype=np.float32)

    def encode_queries(self, states: Sequence[State | Mapping], observations: Sequence[str],
                       batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """q vectors (n, dim), float32: search them against ``encode_memories`` by inner product."""
        if len(states) != len(observations):
            raise ValueError(f"got {len(states)} states but {len(observations)} observations; give one each")
        st = [_as_state(s) for s in states]
        texts, phases, obs = [state_to_text(s) for s in st], [s.phase for s in st], list(observations)
        return self._batched(len(st), batch_size, progress, "queries",
                             lambda sl: self.net.encode_queries(texts[sl], phases[sl], obs[sl]))

    def encode_memories(self, memories: Sequence[Any], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """v_m vectors (n, dim), float32, for MemoryRecords, Events, or anything with .text/.kind/.phase."""
        ms = [_as_memory(m) for m in memories]
        texts, kinds, phases = [m.text for m in ms], [m.kind for m in ms], [m.phase for m in ms]
        contents = [getattr(m, "content", "") or m.text for m in ms]
        return self._batched(len(ms), batch_size, progress, "memories",
                             lambda sl: self.net.encode_memories(texts[sl], kinds[sl], phases[sl], contents[sl]))

    def _per_state(self, fn, desc: str, states, observations, batch_size: int) -> np.ndarray:
        st = [_as_state(s) for s in states]
        obs = list(observations) if observations is not None else [""] * len(st)
        texts, phases = [state_to_text(s) for s in st], [s.phase for s in st]
        return self._batched(len(st), batch_size, False, desc, lambda sl: fn(texts[sl], phases[sl], obs[sl]))

    def encode_states(self, states: Sequence[State | Mapping], observations: Sequence[str] | None = None,
                      batch_size: int = 64) -> np.ndarray:
        """v_s (n, d): the state embedding before projection (for diagnostics such as t-SNE)."""
        return self._per_state(self.net.encode_states, "states", states, observations, batch_size)

    def projection_weights(self, states: Sequence[State | Mapping], observations: Sequence[str] | None = None,
                           batch_size: int = 64) -> np.ndarray:
        """The diagonal of W_s per state (n, d): which dimensions each state turns up or down."""
        return self._per_state(self.net.projection_diagonal, "projection", states, observations, batch_size)

    def add_memories(self, memories: Sequence[Any], batch_size: int = 64, progress: bool = False) -> None:
        """Encode memories and add them to the retriever's index (created on first use)."""
        ms = [_as_memory(m) for m in memories]
        if self.index is None:
            self.index = MemoryIndex.from_config(self.dim, self.index_config)
        vectors = self.encode_memories(ms, batch_size, progress)
        self.index.add([m.id for m in ms], vectors, episode_ids=[getattr(m, "episode_id", None) for m in ms])

    def search(self, state: State | Mapping, observation: str, k: int = 5,
               episode_id: str | None = None) -> tuple[list, np.ndarray]:
        """Top-k memory ids and scores for one query (scope ``episode`` when episode_id is given)."""
        if self.index is None or len(self.index) == 0:
            raise ValueError("the retriever's memory index is empty: call add_memories(...) first")
        q = self.encode_queries([state], [observation])
        ids, scores = self.index.search(q, k, episode_id=episode_id)
        return ids[0], scores[0]

    def save(self, path: str | os.PathLike) -> Path:
        """Export the network (and the index, if any) as a folder that ``load`` reads back."""
        from sam_model.export import save_exported

        out = save_exported(self.net, path)
        if self.index is not None:
            self.index.save(out / "index")
        return out


__all__ = ["SAMRetriever", "MemoryRecord"]
