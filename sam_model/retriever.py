"""SAMRetriever: the trained retriever at inference time — encode, index, search. No Lightning.

    r = SAMRetriever.load("checkpoints/demo/export")
    r.add_memories(memories)                       # MemoryRecords (or anything with .id/.text/.kind/.phase)
    ids, scores = r.search(state, "ok, go ahead", k=5, episode_id="trip-17")

Queries are q = [α·W_sᵀ v_s, (1−α)·c_obs] and memories [v_m, c_m], so one inner-product
index over memories serves state-adaptive search (see sam_model.models.sam). With
``provenance`` on (the default of a trained SAM), each hit is followed by the earlier memory
its state's new values came from (sam_model.data.provenance), and ``slot_match`` favours memories
that set the slots the state still needs: both re-rank the exact search's top candidates (sam_model.rerank).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from sam_model.data.examples import MemoryRecord, memory_record
from sam_model.data.provenance import ProvenanceLinker
from sam_model.data.schema import Event, State
from sam_model.data.text import state_to_text
from sam_model.index import MemoryIndex
from sam_model.io import SAMFileError, atomic_dir, reading
from sam_model.models.sam import SAMNet
from sam_model.rerank import RERANK_DEPTH, rerank

RERANK_FILE = "rerank.json"  # provenance links and set slots of the indexed memories


def _as_state(s: State | Mapping[str, Any]) -> State:
    return s if isinstance(s, State) else State.from_json(dict(s))


def _as_memory(m: Any) -> Any:
    return memory_record(m, None) if isinstance(m, Event) else m


class SAMRetriever:
    def __init__(self, net: SAMNet, index_config: dict | None = None):
        self.net = net.eval()
        self.index_config = index_config or {"kind": "flat"}
        self.index: MemoryIndex | None = None
        self.linker = ProvenanceLinker(net.cfg.source_kinds)
        self.links: dict[Any, tuple] = {}  # memory id -> ids of the memories its adopted values came from
        self.sets: dict[Any, tuple] = {}  # memory id -> constraint slots its event set (for slot_match)
        self._last_state: dict[Any, State] = {}  # per episode, for Events given one at a time
        self._next_step: dict[Any, int] = {}  # per episode: one past the newest memory's step ("now")

    @property
    def provenance(self) -> bool:
        """Whether search follows provenance links (a trained SAM's default; never for the content-only
        ablation, which must not see the agent's state)."""
        return bool(self.net.cfg.provenance) and not self.net.content_only

    @property
    def source_kinds(self) -> list[str]:
        return list(self.net.cfg.source_kinds)

    @property
    def slot_match(self) -> float:
        """Weight of the needed-slot re-rank (never for the content-only ablation)."""
        return 0.0 if self.net.content_only else float(self.net.cfg.slot_match)

    def _records(self, memories: Sequence[Any]) -> list[Any]:
        """MemoryRecords; Events get the previous state of their episode (for their "sets"/adopted parts)."""
        out = []
        for m in memories:
            if isinstance(m, Event):
                out.append(memory_record(m, self._last_state.get(m.episode_id)))
                self._last_state[m.episode_id] = m.state
            else:
                out.append(m)
        return out

    @classmethod
    def load(cls, path: str | os.PathLike, device: str | None = None,
             index_config: dict | None = None) -> SAMRetriever:
        """Load an export folder (``python -m sam_model.export``); an index saved in ``path/index`` comes too.

        The folder is held still while it is read (sam_model.io.reading), so network, index and re-rank data
        are always one version, even while another process saves to ``path``.
        """
        from sam_model.export import read_export

        with reading(path) as folder:
            r = cls(read_export(folder, device), index_config)
            if (folder / "index").exists():
                r.index = MemoryIndex.load(folder / "index", expected_dim=r.dim)
                r._load_provenance(folder / "index" / RERANK_FILE)
        return r

    def _load_provenance(self, path: Path) -> None:
        if not path.exists():
            return
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            self.linker = ProvenanceLinker.from_state_dict(d["linker"])
            self.links = {k: tuple(v) for k, v in d["links"]}
            self.sets = {k: tuple(v) for k, v in d["sets"]}
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
            raise SAMFileError(f"{path}: unreadable re-rank data ({err}); delete the file to search without "
                               "provenance links and slot match, or rebuild the index with add_memories") from err

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
                       batch_size: int = 64, progress: bool = False, steps: Sequence[int | None] | None = None,
                       task_starts: Sequence[int | None] | None = None) -> np.ndarray:
        """q vectors (n, dim), float32: search them against ``encode_memories`` by inner product.

        ``steps`` / ``task_starts``: each query's step and the step where its task began, for a model with time
        features (SAMConfig.time_features); None leaves that part of the score out.
        """
        if len(states) != len(observations):
            raise ValueError(f"got {len(states)} states but {len(observations)} observations; give one each")
        st = [_as_state(s) for s in states]
        texts, phases, obs = [state_to_text(s) for s in st], [s.phase for s in st], list(observations)
        return self._batched(len(st), batch_size, progress, "queries", lambda sl: self.net.encode_queries(
            texts[sl], phases[sl], obs[sl], None if steps is None else list(steps[sl]),
            None if task_starts is None else list(task_starts[sl])))

    def encode_memories(self, memories: Sequence[Any], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """v_m vectors (n, dim), float32, for MemoryRecords, Events, or anything with .text/.kind/.phase (and
        .step, for the time part)."""
        ms = [_as_memory(m) for m in memories]
        texts, kinds, phases = [m.text for m in ms], [m.kind for m in ms], [m.phase for m in ms]
        contents = [getattr(m, "content", "") or m.text for m in ms]
        steps = [getattr(m, "step", None) for m in ms]
        return self._batched(len(ms), batch_size, progress, "memories", lambda sl: self.net.encode_memories(
            texts[sl], kinds[sl], phases[sl], contents[sl], steps[sl]))

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
        """Encode memories and add them to the retriever's index (created on first use), in write order.

        Give an episode's memories in step order: each new memory is linked to the earlier memories its
        adopted state values came from (MemoryRecord.adopted; Events get it from their episode's last state).
        """
        ms = self._records(memories)
        if self.index is None:
            self.index = MemoryIndex.from_config(self.dim, self.index_config)
        vectors = self.encode_memories(ms, batch_size, progress)
        ids = [m.id for m in ms]
        self.index.add(ids, vectors, episode_ids=[getattr(m, "episode_id", None) for m in ms])
        for i, links in zip(ids, self.linker.add(ms, ids)):
            if links:
                self.links[i] = links
        self.sets.update((m.id, tuple(m.sets)) for m in ms if getattr(m, "sets", ()))
        for m in ms:
            ep, step = getattr(m, "episode_id", None), getattr(m, "step", None)
            if step is not None:
                self._next_step[ep] = max(self._next_step.get(ep, 0), int(step) + 1)

    def search(self, state: State | Mapping, observation: str, k: int = 5, episode_id: str | None = None,
               step: int | None = None, task_start: int | None = None) -> tuple[list, np.ndarray]:
        """Top-k memory ids and scores for one query (scope ``episode`` when episode_id is given).

        ``step``: the query's step (default: one past the newest memory of ``episode_id``, i.e. now);
        ``task_start``: the step where the current task began, if the agent knows it (default: unknown). Both
        only matter to a model with time features.

        With a re-rank on (``provenance``, ``slot_match``) the ids are in re-ranked order and each score
        is still that memory's inner product with the query, so scores need not decrease down the list.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")  # as MemoryIndex.search says it
        if not isinstance(state, (State, Mapping)):
            raise TypeError(f"state must be a State or a state mapping (phase, constraints, ...), got "
                            f"{type(state).__name__}")
        if not isinstance(observation, str):
            raise TypeError(f"observation must be a string, got {type(observation).__name__}")
        if self.index is None or len(self.index) == 0:
            raise ValueError("the retriever's memory index is empty: call add_memories(...) first")
        k = int(k)
        if step is None:
            step = self._next_step.get(episode_id)
        q = self.encode_queries([state], [observation], steps=[step], task_starts=[task_start])
        links = self.links if self.provenance and self.links else None
        if links is None and not self.slot_match:
            ids, scores = self.index.search(q, k, episode_id=episode_id)
            return ids[0], scores[0]
        ids, scores = self.index.search(q, max(k, RERANK_DEPTH), episode_id=episode_id)
        hits = [i for i in ids[0] if i is not None]
        out = rerank(hits, scores[0][: len(hits)], _as_state(state).uncertainty_flags,
                     lambda i: self.sets.get(i, ()), self.slot_match, links, allowed=self.index, depth=k)
        s = np.full(k, -np.inf, dtype=np.float32)
        if out:
            s[: len(out)] = self.index.get_vectors(out) @ q[0]  # a followed link shows its own score
        return out + [None] * (k - len(out)), s

    def save(self, path: str | os.PathLike) -> Path:
        """Export the network (and the index with its re-rank data, if any) as a folder that ``load`` reads.

        Atomic as a whole (sam_model.io.atomic_dir): the complete folder is built in a staging folder and
        swapped in last, so a kill at any point leaves the previous version, and concurrent saves to one
        path end with one of them complete (the last to finish).
        """
        from sam_model.export import write_export

        out = Path(path)
        with atomic_dir(out) as tmp:
            write_export(self.net, tmp)
            if self.index is not None:
                self.index.save(tmp / "index")
                (tmp / "index" / RERANK_FILE).write_text(json.dumps(
                    {"linker": self.linker.state_dict(), "links": [[k, list(v)] for k, v in self.links.items()],
                     "sets": [[k, list(v)] for k, v in self.sets.items()]}), encoding="utf-8")
        return out


__all__ = ["SAMRetriever", "MemoryRecord"]
