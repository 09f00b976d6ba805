"""MemoryStore: the one place memories live and are searched. No Lightning.

Everything that searches memories goes through :meth:`MemoryStore.search` — ``SAMRetriever.search``, the run-time
memory bank (``SAMMemory``), the Mem0-style ``ScopedMemory``, the LangChain retriever and ``evaluate.py`` — so
a figure in the README is what a deployment gets. The store owns the index, each memory's text, kind, step,
episode and scopes (user, agent, run) with free metadata, the provenance links and the re-rank data; the
encoder (sam_model.encoder) is stateless and only turns states and memories into vectors.

The one search (sam_model.storesearch, its steps in that module's doc): the exact top candidates of the index,
filtered inside the index search by episode and scopes and never a memory at or after the query's step, scored
again in float64 with a seeded tie order, the top re-ranked (sam_model.rerank).

Each :class:`Hit` says why it ranked: its inner product, the re-rank bonus and, when a provenance link placed
it, the hit that linked to it (sam_model.hit); where the search was told which memories earlier tool calls of the
query's task used (``used``), whether it is one, which a reuse model scores (sam_model.models.reuse). ``save``/``load`` write one folder atomically (sam_model.storefile).

Threads: a store is safe to share between threads. Every public method holds the store's re-entrant lock
(``store.lock``, sam_model.locking), so adds, updates, deletes, searches and saves run one at a time and a
search never sees half an add; ``save`` holds it only while it copies the store into memory, not while it
writes. Every input is checked first (k at most sam_model.limits.MAX_K, texts non-blank and at most MAX_TEXT_CHARS,
steps non-negative integers, scopes and episodes strings or None), with one line naming the argument; a refused call
changes nothing.

One idea a module: this one keeps the memories (settings, container, adds, updates, deletes, vectors); MemoryStore
inherits its search (sam_model.storesearch) and its save and load (sam_model.storefile); a stored memory's record is
sam_model.storeentry, the input checks sam_model.storechecks, the settings sam_model.storeconfig.StoreConfig.

    store = MemoryStore(SAMRetriever.load("checkpoints/demo/export").encoder, StoreConfig(slot_match=0.3))
    store.add(events, user_id="ana")                       # Events in step order, or MemoryRecords
    for hit in store.search(state, "ok, go ahead", k=5, episode_id="trip-17", user_id="ana"):
        print(hit.score, hit.kind, hit.step, hit.text, hit.linked_from)
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from sam_model.backends import index_from_config
from sam_model.backends.points import all_or_nothing
from sam_model.data.chunks import chunk_records
from sam_model.data.examples import MemoryRecord, MemoryRecorder
from sam_model.data.provenance import ProvenanceLinker
from sam_model.data.schema import Event
from sam_model.encoding import Encoder
from sam_model.hit import Hit
from sam_model.index import MemoryIndex
from sam_model.io import (
    SAMFileError,
)
from sam_model.limits import check_batch_size, check_metadata, check_scope_characters, check_step, check_text
from sam_model.locking import locked, new_lock
from sam_model.storechecks import SCOPES, check_episode, check_memory, check_scopes
from sam_model.storeconfig import StoreConfig
from sam_model.storeentry import _Entry
from sam_model.storefile import StoreFiles
from sam_model.storesearch import StoreSearch

log = logging.getLogger(__name__)


def reads_openings(encoder: Any) -> bool:
    """Whether ``encoder`` (a SAMEncoder, or one seen through a served tenant's log, ``inner``) scores whether a memory
    opened its task (SAMConfig.task_opening, sam_model.models.opening): then every memory it encodes must say so
    (``opens_task``), and a store keeps the flag in its saves."""
    inner = getattr(encoder, "inner", encoder)
    return getattr(getattr(inner, "net", None), "opening", None) is not None


def reads_reuse(encoder: Any) -> bool:
    """Whether ``encoder`` scores reuse within a task (SAMConfig.task_reuse, sam_model.models.reuse): its memory
    vectors end in u_m, 0 as encoded, which a search scores as 1 for the memories it is told earlier calls of the
    query's task used (MemoryStore.search_vector's ``used``)."""
    inner = getattr(encoder, "inner", encoder)
    return getattr(getattr(inner, "net", None), "reuse", None) is not None


def reads_recency(encoder: Any) -> bool:
    """Whether ``encoder`` scores how recently the task used a memory too (SAMConfig.task_recency): its memory vectors
    end in [u_m, r_m], and a search must be told each used memory's rank (``used`` as a mapping id -> k)."""
    inner = getattr(encoder, "inner", encoder)
    return getattr(getattr(getattr(inner, "net", None), "reuse", None), "recency", None) is not None


def lexical_tail(encoder: Any) -> int:
    """How many parts end ``encoder``'s vectors after the reuse marks: 1 for a network with SAMConfig.lexical_state
    (the query's w(v_s), the memory's 0; sam_model.models.lexstate), else 0."""
    inner = getattr(encoder, "inner", encoder)
    return int(getattr(getattr(inner, "net", None), "lexical_tail", 0) or 0)


def refuse_reuse(model: Any, who: str) -> None:
    """Refuse, in one line, a model that scores reuse within a task (:func:`reads_reuse`) for ``who``, which keeps no
    conversation (SAMMemory, SAMStore, the memory bank's Janus adapters): none can tell a search which memories earlier
    tool calls used, so every memory would score u_m = 0, silently. The one rule and words of each refusal."""
    if reads_reuse(encoder_of(model)):
        raise ValueError(f"{who} does not track which memories earlier tool calls used, which this model scores "
                         "(model.net.task_reuse), so every memory would score as unused: serve it through "
                         "ScopedMemory, or a model without it")


class MemoryStore(StoreSearch, StoreFiles):
    """Memories (text, metadata, scopes, links, vectors) and the one search over them (see the module doc)."""

    def __init__(self, encoder: Encoder | None = None, config: StoreConfig | None = None, dim: int | None = None, index=None):
        """``encoder``: an :class:`~sam_model.encoding.Encoder`, or None for a store that is only given vectors (then
        ``dim`` is needed). ``index``: an index object with MemoryIndex's API (the memory bank's tiers);
        default: ``MemoryIndex.from_config(dim, config.index)``."""
        if encoder is None and dim is None:
            raise ValueError("MemoryStore needs an encoder, or the dim of the vectors it will be given")
        self.encoder = encoder
        self.config = config or StoreConfig()
        if self.config.lexical_per_query and encoder is not None and not lexical_tail(encoder):
            # its vectors' last part is a content dimension, or w_u of a reuse model: read as a weight, silently
            raise ValueError("store.lexical_per_query is on but the encoder's network was not trained with "
                             "lexical_state (its vectors' last part is no lexical weight): set store.lexical_per_query "
                             "false (a fixed weight: store.lexical)")
        self.dim = int(dim if dim is not None else encoder.dim)
        self.index = index if index is not None else index_from_config(self.dim, self.config.index)
        self.linker = ProvenanceLinker(self.config.source_kinds)
        self.recorder = MemoryRecorder()
        # keep each memory's opens_task (and save the recorder's task openers) though the encoder does not read them:
        # a memory bank's store, encoded by the bank's model (SAMMemory sets it), or a store loaded from a save that
        # kept them (:attr:`keeps_openings`)
        self.keep_openings = False
        # whether every memory's opens_task is known: false once memories were added to a store that does not keep
        # the flag, or loaded from a save that did not (older, or of a model that does not read it), which a
        # task_opening model refuses (:meth:`check_openings`)
        self.openings_known = True
        self._entries: dict[Any, _Entry] = {}
        self._scopes: dict[tuple[str, Any], set] = {}  # (scope field, value) -> ids
        self._links: dict[Any, tuple] = {}  # id -> ids its provenance links point to (only non-empty)
        self._next_step: dict[Any, int] = {}  # per episode: one past the newest memory's step ("now")
        self._seq = 0
        self._chunks: dict[Any, list] = {}  # memory id -> the ids of its chunks (only chunked memories)
        self.lock = new_lock()  # every public method holds it (sam_model.locking)
        if encoder is not None:  # chunks sized in tokens need this encoder's tokenizer: refused now, not at an add
            self._token_count()

    # ---- settings ------------------------------------------------------------------------------------------

    @property
    def content_only(self) -> bool:
        return bool(getattr(self.encoder, "content_only", False))

    @property
    def slot_match(self) -> float:
        """The needed-slot weight in use (never for the content-only ablation, which must not see the state)."""
        return 0.0 if self.content_only else float(self.config.slot_match)

    @property
    def provenance(self) -> bool:
        return bool(self.config.provenance) and not self.content_only

    @property
    def lexical(self) -> float:
        """Weight of the lexical re-rank (0 for a content-only model, whose queries read no state)."""
        return 0.0 if self.content_only else float(self.config.lexical)

    @property
    def lexical_per_query(self) -> bool:
        """Whether each query's lexical weight is its vector's last part (StoreConfig.lexical_per_query: a network
        trained with lexical_state), in place of :attr:`lexical`."""
        return bool(self.config.lexical_per_query) and not self.content_only

    def query_lexical(self, query: np.ndarray) -> float:
        """The lexical weight of the search for ``query``: its last part, w(v_s) >= 0, for a per-query store (a
        vector whose last part is negative is not of such a network: refused in one line), else :attr:`lexical`."""
        if not self.lexical_per_query:
            return self.lexical
        w = float(query[-1])
        if not w >= 0.0:
            raise ValueError(f"store.lexical_per_query reads each query's lexical weight off its vector's last part, "
                             f"which is {w:g} here (a weight is >= 0): search with vectors of the network trained "
                             "with lexical_state, or set store.lexical_per_query false")
        return w

    @property
    def keeps_openings(self) -> bool:
        """Whether the store keeps each memory's opens_task (the memories it adds, and its saves with the recorder's
        task openers: store.json ``openings``): where the model reads them (sam_model.models.opening) or
        :attr:`keep_openings` says so. A store of a model that does not read them keeps none and saves what it saved
        before the flag existed, byte for byte."""
        return self.keep_openings or reads_openings(self.encoder)

    def check_openings(self, where: str, encoder: Any = None) -> None:
        """Refuse (SAMFileError naming ``where``) a task_opening model (``encoder``, default: this store's) over memories
        whose opens_task the save did not keep: it would score each as opening no task, and flag the next user event
        of a task already opened."""
        if reads_openings(encoder if encoder is not None else self.encoder) and not self.openings_known:
            raise SAMFileError(f"{where}: this save does not say which memory opened its task (saved before memory "
                               "stores kept opens_task, or with a model that does not read it), and this model "
                               "(task_opening) scores it: add the memories' events again to a new store with this "
                               "model, or load the save with a model trained without task_opening")

    @property
    def reranks(self) -> bool:
        return bool(self.slot_match) or self.provenance or bool(self.lexical) or self.lexical_per_query

    @property
    def scores_uses(self) -> bool:
        """Whether this store's encoder scores reuse within a task (:func:`reads_reuse`): a search must then be told
        which memories earlier calls of the query's task used (``used``), and scores them with u_m = 1."""
        return reads_reuse(self.encoder)

    @property
    def vector_tail(self) -> int:
        """The parts after the reuse marks at each vector's end (:func:`lexical_tail`): where u_m sits from the end."""
        return lexical_tail(self.encoder)

    @property
    def scores_recency(self) -> bool:
        """Whether this store's encoder scores how recently the task used a memory (:func:`reads_recency`): a search
        must then be told each used memory's rank (``used``: id -> k), and scores it with r_m = 1/k."""
        return reads_recency(self.encoder)

    def _token_count(self):
        """The memory encoder's token count (SAMEncoder.memory_tokens) when ``config.chunking`` sizes chunks in
        tokens, else None; a one-line error when this encoder has no tokenizer or reads fewer tokens than that."""
        chunker = self.config.chunker
        if chunker is None or chunker.tokens is None:
            return None
        count = getattr(self.encoder, "memory_tokens", None)
        if count is None:
            raise ValueError(f"store.chunking: tokens needs the memory encoder's tokenizer, and "
                             f"{type(self.encoder).__name__ if self.encoder is not None else 'a store without an encoder'}"
                             " has none: give a SAMEncoder, or chunk by size in characters ({'size': 180, 'overlap': 50})")
        chunker.check_encoder(count.max_length, "store.chunking")
        return count

    def _chunk(self, recs: Sequence[Any]) -> list:
        """``recs`` as the store keeps them: long memories as their chunks (``config.chunking``)."""
        whole = [r for r in recs if getattr(r, "parent", None) is None]  # chunks given as chunks need no tokenizer
        return chunk_records(recs, self.config.chunker, self._token_count() if whole else None)

    # ---- container -----------------------------------------------------------------------------------------

    # these hold the lock too: a chunked memory's update (old chunks out, new ones in) is never seen half done
    @locked
    def __len__(self) -> int:
        return len(self._entries)

    @locked
    def __contains__(self, i: object) -> bool:
        return i in self._entries

    @locked
    def ids(self) -> list:
        return list(self._entries)

    @locked
    def next_step(self, episode_id: Any) -> int | None:
        """One past the newest memory of the episode ("now" for a query), None when it has none."""
        return self._next_step.get(check_episode(episode_id))

    @locked
    def links(self) -> dict:
        """memory id -> the ids its provenance links point to (only memories that have links)."""
        return dict(self._links)

    @locked
    def sets_of(self, i: Any) -> tuple[str, ...]:
        return self._sets_of(i)

    def _sets_of(self, i: Any) -> tuple[str, ...]:
        e = self._entries.get(i)
        return e.sets if e is not None else ()

    @locked
    def opens_task(self, i: Any) -> bool:
        """Whether memory ``i`` opened its task (MemoryRecord.opens_task; a chunked memory's id: its chunks say it
        alike); KeyError if it is not stored. An update that rewrites its words keeps it (ScopedMemory.update)."""
        chunks = self._chunks.get(i)
        e = self._entries.get(chunks[0] if chunks else i)
        if e is None:
            raise KeyError(f"memory {i!r} is not in the store")
        return e.opens_task

    @locked
    def has(self, i: object) -> bool:
        """Whether ``i`` names a stored memory: one stored whole, one of its chunks, or a chunked memory's id."""
        return i in self._entries or i in self._chunks

    @locked
    def memory(self, i: Any) -> Hit:
        """The memory ``i`` whole, as a Hit without scores: :meth:`get`'s for a memory stored whole or a chunk; for
        a chunked memory's id, its first chunk's Hit with the memory's id and its whole text (the chunks' windows
        joined back at their spans). KeyError if it is not stored."""
        chunks = self._chunks.get(i)
        if not chunks:
            return self.get(i)
        parts = sorted((self._entries[c] for c in chunks), key=lambda e: e.chunk)
        body = ""
        for e in parts:  # each chunk's content ends with its window, body[start:end]
            start, end = e.span
            body = body[:start] + (e.content[len(e.content) - (end - start):] if end > start else "")
        first = self._hit(parts[0], 0.0, 0.0, via="id")
        head = first.text[: len(first.text) - (parts[0].span[1] - parts[0].span[0])]
        return dataclasses.replace(first, id=i, text=head + body, content=f"[{first.kind}] {body}", parent_id=None,
                                   chunk=0, span=None)

    @locked
    def get(self, i: Any) -> Hit:
        """The memory ``i`` as a Hit without scores (KeyError if it is not stored)."""
        if i not in self._entries:
            chunks = self._chunks.get(i)
            raise KeyError(f"memory {i!r} is not in the store" + (
                f" as one memory: it is stored as {len(chunks)} chunks, {chunks[0]!r} ... (get each by its chunk id; "
                "search, update and delete take the memory's id)" if chunks else ""))
        return self._hit(self._entries[i], 0.0, 0.0, via="id")

    @locked
    def get_all(self, episode_id: Any = None, user_id: str | None = None, agent_id: str | None = None,
                run_id: str | None = None) -> list[Hit]:
        """Every memory of the scope, in write order."""
        check_scopes(user_id, agent_id, run_id)
        check_episode(episode_id)
        within = self._within(user_id, agent_id, run_id)
        return [self._hit(e, 0.0, 0.0, via="id") for i, e in self._entries.items()
                if (episode_id is None or self.index.episode_of(i) == episode_id) and (within is None or i in within)]

    @locked
    def holds_scope(self, name: str, value: Any, within: Mapping[str, Any] | None = None) -> bool:
        """Whether a memory is stored under exactly this ``user_id``, ``agent_id`` or ``run_id`` value (and the
        other scopes of ``within`` given, not None): a scope no add may name any more (limits.scope_flaw) is still
        read and erased where it holds memories (limits.check_scope's ``held``), as it was written, never another
        id. ``within``: held by another user's memories alone, the value is as one nobody holds, so a caller naming
        it beside their own user_id learns no other's scope name."""
        scopes = {**{n: None for n in ("user_id", "agent_id", "run_id")}, **(within or {}), name: value}
        return bool(self._within(scopes["user_id"], scopes["agent_id"], scopes["run_id"]))

    @locked
    def has_episode(self, episode_id: Any, user_id: str | None = None, agent_id: str | None = None,
              run_id: str | None = None) -> bool:
        """Whether a memory of the episode is stored, looked for among the scopes' memories (every memory when none
        is given): a scoped memory asks it at each delete, where get_all(episode_id=...) read every memory."""
        check_scopes(user_id, agent_id, run_id)
        within = self._within(user_id, agent_id, run_id)
        return any(self.index.episode_of(i) == episode_id for i in (self._entries if within is None else within))

    # ---- writing -------------------------------------------------------------------------------------------

    @locked
    def add(self, memories: Sequence[Any], vectors: np.ndarray | None = None, *, user_id: str | None = None,
            agent_id: str | None = None, run_id: str | None = None, metadata: Mapping[str, Any] | None = None,
            batch_size: int = 64, progress: bool = False) -> list:
        """Store memories in write order; returns their ids.

        ``memories``: Events (each compared with the state before it in its task: give an episode's events in
        step order) or MemoryRecords (or anything with their fields). ``vectors``: their memory vectors when
        the caller has them (else the encoder's). Scopes and metadata apply to all of them. With
        ``config.chunking`` a long memory is stored as its chunks (ids ``<id>/<n>``, sam_model.data.chunks), and
        the returned ids are the chunks'; given vectors must then be the chunks' (records already chunked).
        """
        check_batch_size(batch_size)
        scope = check_scopes(user_id, agent_id, run_id)
        for name, value in scope.items():  # no control character: what no scoped call may name (check_scope)
            check_scope_characters(value, name)
        return self._add_in(memories, vectors, scope, metadata, batch_size, progress)

    def _add_in(self, memories: Any, vectors: np.ndarray | None, scope: dict, metadata: Mapping[str, Any] | None,
                batch_size: int, progress: bool) -> list:
        """:meth:`add` in ``scope``, checked by its caller: a chunked memory's update stores its new chunks in the
        memory's own scopes, which a save from before 2026-12-06 may give a control character that add refuses (its
        update was then refused, naming a scope the caller never gave)."""
        if isinstance(memories, (str, bytes, Mapping)) or not isinstance(memories, Iterable):
            raise TypeError(f"memories must be a list of Events or MemoryRecords, got {type(memories).__name__}")
        memories = list(memories)
        check_metadata(metadata)
        for n, m in enumerate(memories):  # before anything is recorded: a refused add changes nothing
            check_memory(m, f"memories[{n}]")
        mark = self.recorder.mark(m.episode_id for m in memories if isinstance(m, Event))
        try:
            return self._add(memories, vectors, scope, metadata, batch_size, progress)
        except BaseException:  # refused (a duplicate id, bad vectors) or interrupted: the next add starts afresh
            self.recorder.rollback(mark)
            raise

    def _add(self, memories: list, vectors: np.ndarray | None, scope: dict, metadata: Mapping[str, Any] | None,
             batch_size: int, progress: bool) -> list:
        recs = [self.recorder.record(m) if isinstance(m, Event) else m for m in memories]
        if self.config.chunking is not None and all(isinstance(r, MemoryRecord) for r in recs):
            chunked = self._chunk(recs)
            if vectors is not None and len(chunked) != len(recs):
                raise ValueError(f"{len(recs)} memories make {len(chunked)} chunks but {len(recs)} vectors were "
                                 "given: give the chunks' vectors (sam_model.data.chunks.chunk_records) or none")
            recs = chunked
        if not recs:
            return []
        self._check_free(recs)
        x = self._vectors(recs, vectors, batch_size, progress)
        ids = [r.id for r in recs]
        self._take_out_strays()
        seq, next_step = self._seq, dict(self._next_step)
        try:
            self.index.add(ids, x, episode_ids=[getattr(r, "episode_id", None) for r in recs], **self._payload(scope))
            self._enter(recs, ids, scope, metadata)
        except BaseException:  # refused, failed after the backend wrote (its answer lost) or interrupted: all taken back
            self._drop_entries(ids)  # the bookkeeping first (it cannot fail), then the index, which may fail again
            self.linker.forget(ids)
            self._seq, self._next_step = seq, next_step
            self._take_out(ids)  # none of them is a stored memory (_check_free): whatever the index holds is this add's
            raise
        return ids

    def _take_out(self, ids: Iterable[Any], strict: bool = False) -> bool:
        """Take out of the index, in a rollback, the vectors of ``ids`` it holds, asking twice (a backend call that
        failed once, a timeout, may go through the next), after the rollback put its bookkeeping back: a removal that
        raised first had stopped the rollback there, with the store half put back. The index's second refusal is
        raised when ``strict``, else logged and False returned; the vectors it kept are then of no memory, which a
        search passes over and the next add or save takes out (:meth:`_take_out_strays`)."""
        for last in (False, True):
            held = [i for i in dict.fromkeys(ids) if i in self.index]
            if not held:
                return True
            try:
                self.index.remove(held)
                return True
            except Exception as err:
                if last and strict:
                    raise
                if last:
                    log.warning("the index kept %d vector(s) a rollback took back (%s: %s); they are taken out at the "
                                "next add or save", len(held), type(err).__name__, str(err)[:200])
        return False

    def _take_out_strays(self, strict: bool = False) -> bool:
        """Take out of the index the vectors of no memory that a rollback could not (:meth:`_take_out`); the counts
        are compared first, so a store without any pays nothing. True when none is left."""
        if len(self.index) == len(self._entries):
            return True
        return self._take_out([i for i in self.index.ids() if i not in self._entries], strict)

    def _check_free(self, recs: Sequence[Any], own: Collection[Any] = ()) -> None:
        """Refuse (ValueError naming it) a record whose id, or whose memory's id (a chunk's parent), is a stored
        memory's, a chunked memory's or another record's of the batch; ``own``: ids an update replaces. A whole
        memory named like another's chunked one (or chunks of a stored whole one) joined it: a delete by the id
        left one of them, ``memory`` read the other's, a fold merged the two."""
        seen: set = set()
        parents: set = set()
        for r in recs:
            parent = getattr(r, "parent", None)
            names = [(r.id, (self._entries, self._chunks, seen, parents))]
            if parent is not None:  # its siblings share it: the batch's other parents are not a clash
                names.append((parent, (self._entries, self._chunks, seen)))
            for name, taken in names:
                if name not in own and any(name in t for t in taken):
                    raise ValueError(f"memory id {name!r} is already in the store: ids (episode#step) must be "
                                     "unique; delete it first to replace it")
            seen.add(r.id)
            if parent is not None:
                parents.add(parent)

    def _enter(self, recs: list, ids: list, scope: dict, metadata: Mapping[str, Any] | None) -> None:
        """The bookkeeping of an add whose vectors the index holds: links, entries, chunks, scopes, steps."""
        links = self.linker.add(recs, ids)
        keep = self.keeps_openings  # else no flag is kept: a save and its load are then one store
        if recs and not keep:
            self.openings_known = False
        for r, ls in zip(recs, links):
            step = getattr(r, "step", None)
            e = _Entry(r.id, r.text, getattr(r, "content", "") or r.text, r.kind, getattr(r, "phase", ""), step,
                       self._seq, tuple(getattr(r, "sets", ()) or ()), tuple(ls),
                       **scope, metadata=dict(metadata or {}), parent=getattr(r, "parent", None),
                       chunk=getattr(r, "chunk", 0), span=getattr(r, "span", None),
                       opens_task=keep and bool(getattr(r, "opens_task", False)))
            if e.parent is not None:
                self._chunks.setdefault(e.parent, []).append(r.id)
            self._seq += 1
            self._entries[r.id] = e
            if e.links:
                self._links[r.id] = e.links
            for name, value in scope.items():
                if value is not None:
                    self._scopes.setdefault((name, value), set()).add(r.id)
            if step is not None:
                ep = getattr(r, "episode_id", None)
                self._next_step[ep] = max(self._next_step.get(ep, 0), int(step) + 1)

    @locked
    def update(self, memory: Any, vector: np.ndarray | None = None) -> None:
        """Replace a stored memory by a new version of it (same id; it keeps its place in the write order and
        its scopes): a revised state (sam_model.data.transcripts.TranscriptState.feed) or a re-written summary.
        A chunked memory is replaced by its new chunks (at the end of the write order, with the old scopes).
        All or nothing: refused (a bad vector, an id taken) before anything changes, and failed later (the index
        or backend refused the new version after the old one left it, or took it and lost its answer; an interrupt)
        the old version is put back, the index asked twice to let the new one go (:meth:`_take_out`)."""
        if isinstance(memory, Event):
            raise TypeError("update takes a MemoryRecord, whose id names the memory it replaces (an Event has none: "
                            "sam_model.data.examples.memory_record makes one, or delete then add the event)")
        check_memory(memory, "memory")
        if memory.id in self._chunks or (self.config.chunking is not None and vector is None
                                         and len(self._chunk([memory])) > 1):
            old = self._entries[self._chunks[memory.id][0]] if memory.id in self._chunks else self._entries.get(memory.id)
            if old is None:
                raise KeyError(f"memory {memory.id!r} is not in the store; add it first")
            self._check_episode_kept(memory, old.id)
            recs = self._chunk([memory]) if self.config.chunking is not None else [memory]
            self._check_free(recs, {memory.id, *self._chunks.get(memory.id, ())})  # before its old version goes
            x = self._vectors(recs, None if vector is None or len(recs) > 1 else
                              np.asarray(vector, np.float32).reshape(1, -1), 1, False)  # refused: nothing changed
            olds = self._chunks.get(memory.id) or [memory.id]
            undo = (self._bookkeeping(memory.id, {name: getattr(old, name) for name in SCOPES}),
                    [self.version(i) for i in olds], [self.index.episode_of(i) for i in olds])
            try:  # its new chunks may take the old ones' ids: the old go first, and come back if the new fail
                self.delete([memory.id])
                self._add_in(recs, x, {name: getattr(old, name) for name in SCOPES}, old.metadata, 64, False)
            except BaseException:  # the index refused the new chunks (a backend error), or an interrupt
                self._undo_replace([r.id for r in recs], *undo)
                raise
            return
        e = self._entries.get(memory.id)
        if e is None:
            raise KeyError(f"memory {memory.id!r} is not in the store; add it first")
        self._check_episode_kept(memory, memory.id)
        x = self._vectors([memory], None if vector is None else np.asarray(vector, np.float32).reshape(1, -1), 1, False)
        episode = self.index.episode_of(memory.id)
        saved = self.version(memory.id)
        try:
            self.index.remove([memory.id])
            self.index.add([memory.id], x, episode_ids=[episode],
                           **self._payload({name: getattr(e, name) for name in SCOPES}))
            e.text, e.content = memory.text, getattr(memory, "content", "") or memory.text
            e.kind, e.phase = memory.kind, getattr(memory, "phase", e.phase)
            e.sets = tuple(getattr(memory, "sets", ()) or ())
            e.opens_task = self.keeps_openings and bool(getattr(memory, "opens_task", e.opens_task))
            self.linker.revise(memory.id, memory)  # later memories link by what it says now
            e.links = self.linker.links_of(memory)
            self._links.pop(e.id, None)
            if e.links:
                self._links[e.id] = e.links
        except BaseException:  # the index refused the new vector after the old went (a backend error), an interrupt
            self._put_back(saved, episode)
            raise

    def _check_episode_kept(self, memory: Any, stored: Any) -> None:
        """Refuse an update whose record names another episode than the memory's (``stored``: its id, or its first
        chunk's): a whole memory's update kept the stored episode while a chunked one's moved the memory to the
        record's, so one call did two things."""
        episode = self.index.episode_of(stored)
        if getattr(memory, "episode_id", episode) != episode:
            raise ValueError(f"memory.episode_id is {memory.episode_id!r} but memory {memory.id!r} is of episode "
                             f"{episode!r}: an update keeps its memory's episode (delete the memory and add it to "
                             "move it)")

    def _bookkeeping(self, memory_id: Any, scope: dict) -> tuple:
        """A copy of what replacing memory ``memory_id`` (stored in ``scope``) by delete and add changes besides the
        index: entries in write order, links, steps, the linker, its chunk list and its scopes' members; for
        :meth:`_undo_replace`. Dicts are copied whole (at C speed); the sets and lists inside only where they
        change."""
        scopes = {(name, v): set(self._scopes.get((name, v), ())) for name, v in scope.items() if v is not None}
        chunks = list(self._chunks.get(memory_id, ()))
        return (dict(self._entries), dict(self._links), dict(self._next_step), self._seq, self.linker.copy(),
                memory_id, chunks, scopes)

    def _undo_replace(self, new_ids: list, bookkeeping: tuple, versions: list, episodes: list) -> None:
        """Take back a chunked update that failed between deleting the old version and storing the new one: the
        bookkeeping is put back first (plain dicts: nothing there fails), then the new chunks that reached the index
        leave it (:meth:`_take_out`; a removal that failed here stopped the rollback before the bookkeeping, with
        the memory gone from the entries) and the old versions' vectors return. They return in one index call, all
        or none: one call per chunk, refused again midway, left some chunks back and the others stored without a
        vector. Refused again, the old version leaves the entries too (the memory is lost, the backend's error
        raised), so that they and the index agree."""
        self._entries, self._links, self._next_step, self._seq, self.linker, memory_id, chunks, scopes = bookkeeping
        self._chunks.pop(memory_id, None)
        if chunks:
            self._chunks[memory_id] = chunks
        for key, members in scopes.items():
            if members:
                self._scopes[key] = members
            else:
                self._scopes.pop(key, None)
        olds = [e.id for e, _ in versions]  # the chunks of one memory (or the memory whole): its scopes, one payload
        try:
            self._take_out(new_ids + olds, strict=True)
            self.index.add(olds, np.stack([x for _, x in versions]), episode_ids=episodes,
                           **self._payload({name: getattr(versions[0][0], name) for name in SCOPES}))
        except BaseException:
            self.linker.forget(olds)
            self._drop_entries(olds)
            raise

    @locked
    def version(self, i: Any) -> tuple[Any, np.ndarray]:
        """Memory ``i`` as stored now (what :meth:`update` changes of it: its entry and its vector), for
        :meth:`restore`: a caller whose update is one part of a larger write takes it back if a later part fails,
        exactly and with no encoder (which may be what failed). Not for chunked memories (an update re-adds
        their chunks)."""
        return dataclasses.replace(self._entries[i]), self.index.get_vectors([i])[0].copy()

    @locked
    def restore(self, version: tuple[Any, np.ndarray]) -> None:
        """Put back a :meth:`version` of a memory that is still stored (its text, kind, phase, sets, links and
        vector; its place in the write order never moved)."""
        e, _ = version
        if e.id not in self._entries:
            raise KeyError(f"memory {e.id!r} is not in the store; restore puts back a stored memory's version")
        self._put_back(version, self.index.episode_of(e.id))

    def _put_back(self, version: tuple[Any, np.ndarray], episode: Any) -> None:
        """:meth:`restore` of a memory whose vector the index may have lost (an update that failed between
        removing the old vector and adding the new one). The entry first, then the vector (:meth:`_take_out` of
        the new one, asking twice: a removal that failed here left the new vector under the old words); refused
        again, the memory leaves the entries too (lost, the backend's error raised), so that they and the index
        agree (a vector the index kept is then of no memory: :meth:`_take_out`)."""
        e, x = version
        self._entries[e.id] = e
        self.linker.revise(e.id, MemoryRecord(e.id, episode, e.step or 0, e.kind, e.phase, e.text, e.content))
        self._links.pop(e.id, None)
        if e.links:
            self._links[e.id] = e.links
        try:
            self._take_out([e.id], strict=True)
            self.index.add([e.id], x.reshape(1, -1), episode_ids=[episode],
                           **self._payload({name: getattr(e, name) for name in SCOPES}))
        except BaseException:
            self.linker.forget([e.id])
            self._drop_entries([e.id])
            raise

    @locked
    def revise(self, i: Any, text: str | None = None, sets: Iterable[str] | None = None,
               step: int | None = None) -> None:
        """Change a memory's text, the slots it counts as setting or its step, keeping its vector (a bank unit that
        took over a pruned unit's facts: a summary moves to the newest step it stands for, and a hit must say the
        step the bank's unit says; its vector changes through :meth:`update`)."""
        e = self._entries[i]
        if step is not None:
            check_step(step)
        if text is not None:
            e.text = check_text(text, "text")
        if step is not None:
            e.step = int(step)
            ep = self.index.episode_of(i)
            self._next_step[ep] = max(self._next_step.get(ep, 0), e.step + 1)
        if sets is not None:
            e.sets = tuple(sorted(set(sets)))

    @locked
    def delete(self, ids: Iterable[Any]) -> None:
        """Remove memories (all or nothing: an unknown id raises KeyError); links to them are not followed. The
        id of a chunked memory removes all its chunks."""
        ids = self._stored(ids)
        if not ids:
            return
        self.index.remove(ids)
        self.linker.forget(ids)
        self._drop_entries(ids)

    def _stored(self, ids: Iterable[Any]) -> list:
        """The stored ids ``ids`` name, once each, a chunked memory's id as its chunks; an unknown id raises KeyError
        before anything changes (delete and move are all or nothing)."""
        ids = list(dict.fromkeys(j for i in ids for j in self._chunks.get(i, [i])))
        missing = [i for i in ids if i not in self._entries]
        if missing:
            raise KeyError(f"memory {missing[0]!r} is not in the store")
        return ids

    def _drop_entries(self, ids: Iterable[Any]) -> None:
        """Forget these memories' entries, links, chunk lists and scopes (those that have any)."""
        for i in ids:
            e = self._entries.pop(i, None)
            if e is None:
                continue
            self._links.pop(i, None)
            if e.parent is not None and e.parent in self._chunks:
                self._chunks[e.parent].remove(i)
                if not self._chunks[e.parent]:
                    del self._chunks[e.parent]
            for name in SCOPES:
                value = getattr(e, name)
                if value is not None:
                    members = self._scopes.get((name, value))
                    if members is not None:
                        members.discard(i)
                        if not members:
                            del self._scopes[(name, value)]

    @locked
    def reset(self) -> None:
        """Forget every memory (the settings and the index kind stay)."""
        if self._entries:
            self.index.remove(list(self._entries))
        self.linker, self.recorder = ProvenanceLinker(self.config.source_kinds), MemoryRecorder()
        self._entries, self._scopes, self._links, self._next_step, self._seq = {}, {}, {}, {}, 0
        self.openings_known = True  # none is left whose flag a save did not keep
        self._chunks = {}

    def _vectors(self, recs: Sequence[Any], vectors, batch_size: int, progress: bool) -> np.ndarray:
        if vectors is None:
            if self.encoder is None:
                raise ValueError("this store has no encoder: give the memory vectors (vectors=...)")
            vectors = self.encoder.encode_memories(recs, batch_size, progress)
        x = np.asarray(vectors, dtype=np.float32)
        if x.ndim != 2 or x.shape != (len(recs), self.dim):
            raise ValueError(f"memory vectors have shape {x.shape}, expected ({len(recs)}, {self.dim})")
        if not np.isfinite(x).all():  # checked here, before an update removes the old vector
            raise ValueError("memory vectors hold NaN or infinity: give finite vectors")
        return x

    # ---- what every search and listing shares (the search: sam_model.storesearch) --------------------------

    def _payload(self, scope: dict) -> dict:
        """``{"scopes": scope}`` for an index that filters scopes as payload inside its own search, else nothing
        (FAISS filters them by the scope's id set, ``within``)."""
        return {"scopes": scope} if getattr(self.index, "filters_scopes", False) else {}

    def _within(self, user_id, agent_id, run_id) -> set | None:
        """The ids of the asked scopes (intersection), or None when no scope is asked."""
        sets = [self._scopes.get((name, value), set()) for name, value in
                (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)) if value is not None]
        if not sets:
            return None
        sets.sort(key=len)
        return set.intersection(*map(set, sets)) if len(sets) > 1 else set(sets[0])

    def _hit(self, e: _Entry, score: float, bonus: float, src: Any = None, via: str | None = None,
             used: Collection[Any] | None = None) -> Hit:
        return Hit(e.id, e.text, e.content, e.kind, e.phase, e.step, self.index.episode_of(e.id), score + bonus,
                   score, bonus, src, e.user_id, e.agent_id, e.run_id, dict(e.metadata),
                   via or ("link" if src is not None else "index"), parent_id=e.parent, chunk=e.chunk,
                   span=e.span, opens_task=e.opens_task if self.keeps_openings and self.openings_known else None,
                   used=None if used is None else e.id in used)

    # ---- vectors: re-encoded, moved (saving and loading: sam_model.storefile) ------------------------------

    @locked
    def reencode(self, batch_size: int = 64, progress: bool = False) -> int:
        """Encode every memory again with this store's encoder (from the texts it keeps) and replace its vectors:
        the memories move to another model. Returns how many were encoded. All or nothing: the index refusing the
        vectors of one scope after others went in (a backend error, an interrupt) gets the old vectors back
        (:meth:`_put_vectors`); one scope at a time, a failure left a mix of two models' vectors, and on a Qdrant
        server, whose collection outlives a failed load, the collection stayed half re-encoded."""
        if self.encoder is None:
            raise ValueError("this store has no encoder to re-encode its memories with")
        entries = list(self._entries.values())
        x = self._vectors(entries, None, batch_size, progress)  # refused or failed here: nothing changed
        if isinstance(self.index, MemoryIndex) and self.index.kind == "ivf" and self.index.trained:
            # its lists were the old model's k-means: the new vectors go into a new index, trained on them
            # (kept in the old lists, recall@10 fell to 0.04 where a fresh index had 0.46)
            fresh = MemoryIndex.from_config(self.dim, self.index.config())
            eps = [self.index.episode_of(e.id) for e in entries]
            fresh.add([e.id for e in entries], x, episode_ids=eps)
            self.index = fresh
            return len(entries)
        self._put_vectors(entries, x, old=self.index.get_vectors([e.id for e in entries]))
        return len(entries)

    def _put_vectors(self, entries: Sequence[_Entry], x: np.ndarray, episodes: Sequence[Any] | None = None,
                     old: np.ndarray | None = None) -> None:
        """Give stored memories these vectors in the index, each in ``episodes`` (default: its own) and its scopes'
        payload: a remove and an add per combination of scopes. ``old``: the vectors they hold now; then all or
        nothing, a scope refused after others went in (or its add's answer lost) puts them back, each in its own
        episode, in every scope written (sam_model.backends.points.all_or_nothing), the new vectors taken out
        asking twice (:meth:`_take_out`). Without it (memories whose points are gone: no vectors to keep) a failure
        stops where it is."""
        now = [self.index.episode_of(e.id) for e in entries]
        groups: dict[tuple, list[int]] = {}
        for n, e in enumerate(entries):
            groups.setdefault(tuple(getattr(e, name) for name in SCOPES), []).append(n)

        def put(vectors: np.ndarray, eps: Sequence[Any]) -> Callable[[Sequence[tuple]], None]:
            def write(batch: Sequence[tuple]) -> None:
                for scope, rows in batch:
                    ids = [entries[n].id for n in rows]
                    self._take_out(ids, strict=True)
                    self.index.add(ids, vectors[rows], episode_ids=[eps[n] for n in rows],
                                   **self._payload(dict(zip(SCOPES, scope))))
            return write

        new = put(x, now if episodes is None else episodes)
        if old is None:
            new(list(groups.items()))
            return
        try:
            all_or_nothing(list(groups.items()), 1, new, put(old, now), f"the store's index "
                           f"({type(self.index).__name__}): re-writing the vectors of {len(entries)} memories",
                           unit="scopes")
        except BaseException:  # put back, unless refused again: then a memory whose vector is gone leaves the
            lost = [e.id for e in entries if e.id not in self.index]  # entries too (as in _put_back), so that
            self.linker.forget(lost)  # they and the index agree
            self._drop_entries(lost)
            raise

    @locked
    def move(self, ids: Iterable[Any], episode_id: Any) -> None:
        """Put stored memories into another episode, their ids, texts, vectors, scopes and places in the write order
        kept (ScopedMemory moves a save's memories out of an episode that two scopes shared). A chunked memory's id
        moves its chunks. The episode's "now" (next_step) passes their steps; the ones they leave keep theirs (the
        moved ids still name them, so a later memory there must not take one). All or nothing: refused by the index
        midway, they go back to their episodes."""
        ids = self._stored(ids)
        if not ids:
            return
        entries = [self._entries[i] for i in ids]
        x = self.index.get_vectors(ids)
        self._put_vectors(entries, x, [episode_id] * len(ids), old=x)
        steps = [e.step for e in entries if e.step is not None]
        if steps:
            self._next_step[episode_id] = max(self._next_step.get(episode_id, 0), max(steps) + 1)

    def __repr__(self) -> str:
        return (f"MemoryStore(size={len(self)}, dim={self.dim}, slot_match={self.slot_match}, "
                f"provenance={self.provenance}, rerank_depth={self.config.rerank_depth})")


def encoder_of(model: Any) -> Any:
    """The encoder of a SAMRetriever (its ``encoder``), or the model itself when it is a bare encoder."""
    return getattr(model, "encoder", model)


def store_config_of(model: Any) -> StoreConfig:
    """The search settings that come with a model: a SAMRetriever's (its export's), else a plain search
    (no re-rank: nothing says a bare encoder was trained for one)."""
    store = getattr(model, "store", None)
    return dataclasses.replace(store.config) if isinstance(store, MemoryStore) else StoreConfig(provenance=False)


__all__ = ["MemoryRecord", "MemoryStore", "StoreConfig", "encoder_of", "reads_openings", "reads_recency", "reads_reuse",
           "refuse_reuse", "store_config_of"]
