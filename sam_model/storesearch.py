"""The one search over a MemoryStore's memories, whatever the caller (SAMRetriever.search, the memory bank,
ScopedMemory, the LangChain retriever, evaluate.py):

1. candidates: the exact top ``max(k, D)`` of the index by q·m, filtered *inside* the index search by episode,
   user, agent and run (a user never sees another user's memories, and a small scope is never starved by a
   global top-k), and never a memory of the query's episode at or after the query's step (the agent's current
   event, added before the search: evaluate.py ranks a decision point's earlier events; a query made now, the
   default, leaves none out); D = ``StoreConfig.rerank_depth``. Memories tied with the last of them are fetched too and the
   cut is made by score and tie key (step 2), not by the order the index holds ties in (an IVF re-trained on
   load holds them in another);
2. scores are recomputed in float64 from the stored float32 vectors and sorted, exact ties broken by a seeded
   hash of the write order (sam_model.rerank.tie_keys): the same ranking from every path that wrote the same
   memories in the same order, whatever batch sizes the encoder saw;
3. the top D are re-ranked (needed-slot match, a caller's prior such as the bank's importance, then provenance
   links: sam_model.rerank); the rest follow in score order. So the top k of a deeper search starts with the
   k of a shallower one: evaluate.py's depth-100 rankings begin with what ``search(k=5)`` returns.

Apart from the store because the search is its own idea, read top to bottom here: StoreSearch is a mixin of
sam_model.store.MemoryStore (its only user), reading the store's entries, scopes, chunks and index, and the helpers
every listing shares with it (``_within``, ``_payload``, ``_hit``) stay with the store. _Allowed's annotation names
MemoryStore, which this module cannot import (sam_model.store imports it): that line says so with ``noqa: F821``.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from sam_model.data.reuse import ANY_SLOT, USED_ORDERS, needed_used, recency, used_first
from sam_model.data.schema import State, as_state
from sam_model.data.text import state_to_text
from sam_model.hit import Hit
from sam_model.limits import MAX_K, check_k, check_step, check_text
from sam_model.locking import locked
from sam_model.rerank import best_first, lexical_bonus, slot_bonus, tie_keys
from sam_model.rerank import rerank as rerank_candidates
from sam_model.storechecks import check_episode, check_scopes


class _Allowed:
    """Membership in a search's scope: what a provenance link may point to."""

    def __init__(self, store: MemoryStore, episode_id, within: set | None, gone: Collection[Any] = (),  # noqa: F821
                 late: Callable[[Any], bool] | None = None):
        self.store, self.episode_id, self.within, self.gone, self.late = store, episode_id, within, gone, late

    def __contains__(self, i: object) -> bool:
        store = self.store
        return i in store._entries and (self.episode_id is None or store.index.episode_of(i) == self.episode_id) \
            and (self.within is None or i in self.within) and i not in self.gone \
            and (self.late is None or not self.late(i))


class StoreSearch:
    """A MemoryStore's search (mixin of sam_model.store.MemoryStore; see the module doc)."""

    @locked
    def search(self, state: State | Mapping, observation: str, k: int = 5, *, episode_id: Any = None,
               user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
               step: int | None = None, task_start: int | None = None, rerank: bool = True,
               ids: Collection[Any] | None = None, query_vector: np.ndarray | None = None,
               fold: bool = False, exclude: Collection[Any] = (), query_episode: Any = None,
               used: Collection[Any] | None = None, used_order: str | None = None,
               supplied: Mapping[Any, Collection[str]] | None = None) -> list[Hit]:
        """The k best memories for the agent's state and observation, best first (see the module doc).

        ``step``: the query's step in its episode (``query_episode``, default ``episode_id``); default: one past the
        episode's newest memory, i.e. now. The memories of that episode at or after the step are no candidates (the
        agent's current event, already written, and anything after it: evaluate.py ranks a decision point's earlier
        events, sam_model.data.examples.RetrievalExample.candidate_range); a search made now leaves none out, so an
        event written before a search that gives no step is among its candidates. ``query_episode``: the episode the
        query is made in, where the search is not filtered to it (a scoped search spans the scope's episodes); with
        neither, the query's episode is unknown and no step leaves a memory out. ``task_start``: the step where the
        current task began (default: where the episode's current task began as far as the events written so far
        tell, sam_model.data.examples.MemoryRecorder; None when unknown). Step and task start feed a model with time
        features. ``rerank=False``: the index order alone (what the
        re-rank adds, measured). ``ids``: search only these memories (a metadata filter's matches), intersected
        with the scopes inside the index search like them. ``query_vector``: this query already encoded (by a
        caller that batches concurrent queries into one encoder forward, sam_model.serve.batching).
        ``fold``: one hit per memory, its best chunk (max
        score per parent), so k memories come back however many of their chunks rank high. ``exclude``: memories
        left out of the search (a decision point's own event, which is its observation: ScopedMemory's search by
        call ranks what was written before it, as evaluate.py does). ``used``: the memories earlier tool calls of the
        query's task took values from, ``used_order`` whether they come first, and ``supplied`` the slots each one
        supplied (:meth:`search_vector`).
        """
        check_k(k)
        st = as_state(state)
        check_text(observation, "observation", empty=True)
        check_step(step), check_step(task_start, "task_start")
        check_episode(episode_id), check_episode(query_episode, "query_episode"), check_scopes(user_id, agent_id, run_id)
        if self.encoder is None:
            raise ValueError("this store has no encoder: search with search_vector(query_vector, ...)")
        episode = episode_id if query_episode is None else query_episode
        if step is None:
            step = self._next_step.get(episode)
        if task_start is None:
            task_start = self.recorder.task_start(episode)
        q = self.encoder.encode_queries([st], [observation], steps=[step], task_starts=[task_start])[0] \
            if query_vector is None else query_vector
        return self.search_vector(q, k, st.uncertainty_flags, episode_id=episode_id, user_id=user_id,
                                  agent_id=agent_id, run_id=run_id, rerank=rerank, ids=ids,
                                  query_text=state_to_text(st) if self.lexical or self.lexical_per_query else None, fold=fold, exclude=exclude,
                                  before=None if episode is None or step is None else (episode, step), used=used,
                                  used_order=used_order, supplied=supplied)

    @locked
    def search_vector(self, query: np.ndarray, k: int, needs: Sequence[str] = (), *, episode_id: Any = None,
                      user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                      rerank: bool = True, prior: Callable[[list], np.ndarray] | None = None,
                      ids: Collection[Any] | None = None, query_text: str | None = None,
                      fold: bool = False, exclude: Collection[Any] = (),
                      before: tuple[Any, int] | None = None, used: Collection[Any] | None = None,
                      used_order: str | None = None, supplied: Mapping[Any, Collection[str]] | None = None
                      ) -> list[Hit]:
        """:meth:`search` for a query vector the caller encoded (batched, as evaluate.py does), with the
        state's needed slots ``needs``. ``prior(ids)``: extra per-candidate scores added before the re-rank.
        ``query_text``: the state as text (sam_model.data.text.state_to_text), for the lexical match.
        ``fold``: one hit per memory (its best chunk). ``exclude``: memories (their chunks too) never candidates.
        ``before``: the query's place, (its episode, its step): that episode's memories at or after the step are no
        candidates (:meth:`search`'s rule, the one place every search applies it); None: no memory left out.
        ``used``: the ids of the memories earlier tool calls of the query's task took values from (a chunked memory's
        id: its chunks; ids not stored are passed over), None when the caller does not know them: each hit says
        whether it is one (Hit.used), and a model that scores reuse (SAMConfig.task_reuse) scores them with u_m = 1,
        as evaluate.py's replay does (:meth:`_used_scores`); such a model is refused a search without them. Or a
        mapping id -> k, the rank of each one's latest use (sam_model.data.reuse.use_ranks, as ScopedMemory and the
        replay give it), which a model that scores recency (SAMConfig.task_recency) needs: r_m = 1/k.
        ``used_order``: "model" puts the used memories first in the model's order, "latest" by the rank of their
        latest use (``used`` a mapping), ties in the model's order, then the rest, cut at k
        (sam_model.data.reuse.used_first: the rule evaluate's ``NAME+used`` rows are measured by); every used memory
        of the search's scopes is scored and placed, however far below the top k the model ranks it. "off": none;
        "needed" as "latest", but only the used memories that supplied a slot the call needs (``supplied``: each used
        memory's id -> the slots, sam_model.data.reuse.task_supplies, of the earlier decisions it was a label of;
        None: not known, every used memory lifted as "latest" lifts it;
        ``needs`` the call's needed paths; sam_model.data.reuse.needed_used), the task's other used memories in the
        model's order with the rest: a task turned to a new request does not get its earlier request's memories first.
        None: the store's ``StoreConfig.used_order`` (off unless set), which orders nothing for a search given no
        ``used``. Any model may use it (a rule, no training)."""
        check_k(k)
        check_scopes(user_id, agent_id, run_id)
        check_episode(episode_id)
        late = self.late(before)
        if used is not None and not isinstance(used, (Mapping, str, bytes)) and isinstance(used, Iterable):
            used = list(used)  # a generator is read once: the fold below searches again, told the same uses
        marked = self._used_ids(used)
        order = self._used_order(used_order, used)
        recent = self._used_recency(used) if marked and self.scores_recency else None
        lift = needed_used(used, self._supplied(supplied, used), needs) if order == "needed" and marked else used  # type: ignore[arg-type]
        first = (marked if order != "needed" else self._used_ids(lift)) if order and marked else frozenset()  # placed
        # first: scored whatever the index's top
        ranks = self._used_ranks(lift) if first and order in ("latest", "needed") else None  # type: ignore[arg-type]
        if ids is not None:
            if isinstance(ids, (str, bytes, Mapping)) or not isinstance(ids, Iterable):
                raise TypeError(f"ids must be a list of memory ids, got {type(ids).__name__}")
            ids = list(ids)  # a generator is read once; the fold below may search again
        if fold and self._chunks:  # deepen until k distinct memories (or every candidate) are in
            want = k
            while True:
                hits = self.search_vector(query, min(want, len(self), MAX_K), needs, episode_id=episode_id,
                                          user_id=user_id, agent_id=agent_id, run_id=run_id, rerank=rerank,
                                          prior=prior, ids=ids, query_text=query_text, exclude=exclude,
                                          before=before, used=used, used_order=order or "off", supplied=supplied)
                seen: set = set()
                folded = [h for h in hits if not (h.memory_id in seen or seen.add(h.memory_id))]
                if len(folded) >= k or len(hits) < min(want, len(self), MAX_K) or want >= min(len(self), MAX_K):
                    return folded[:k]  # at MAX_K chunks deep, the memories found so far
                want *= 4
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise ValueError(f"query vector has dim {q.shape[0]} but the store holds dim {self.dim}")
        within = self._within(user_id, agent_id, run_id)
        if ids is not None:
            ids = {j for i in ids for j in self._chunks.get(i, (i,))}  # a chunked memory's id: its chunks
            within = {i for i in ids if i in self._entries} if within is None else within.intersection(ids)
        # left out as a rollback's stray vectors are: the index asked for as many more, then dropped (an id filter of
        # every other memory of the scope would cost a set of the scope per search, and a Qdrant server that list)
        gone = {j for i in exclude for j in self._chunks.get(i, (i,))} & self._entries.keys()
        if len(self) == 0 or (within is not None and (not within or len(within) <= len(gone) and within <= gone)):
            return []
        depth = self.config.rerank_depth
        n = min(max(k, depth), len(self))
        scoring = marked if self.scores_uses else frozenset()
        scope = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        if not scoring or n + len(scoring) < MAX_K:
            cand = self._candidates(q, n + len(scoring), episode_id, within, ids is not None, scope, len(gone), late)
        else:  # the index is asked at most MAX_K deep, which the used ones' places may fill (a negative w_u sinks
            # them, and the others they held out are missed): the top n of the others, among them alone
            others = {i for i in (self._entries if within is None else within) if i not in scoring}
            cand = self._candidates(q, n, episode_id, others, True, scope, len(gone), late)
        cand += [i for i in sorted((scoring | first) - set(cand), key=lambda i: self._entries[i].seq)  # u_m = 1 may
                 # lift them; the ones placed first are placed whatever their score
                 if (episode_id is None or self.index.episode_of(i) == episode_id)]
        if within is not None:  # an engine filtering by its own payloads: a point whose payload names another
            cand = [i for i in cand if i in within]  # scope than the memory's (a damaged save) is not let through
        cand = [i for i in cand if i in self._entries and i not in gone and not (late and late(i))]  # not a vector
        # of no memory (one a rollback left: _take_out), nor one left out, nor one at or after the query's step
        if not cand:
            return []
        q64 = q.astype(np.float64)
        scores = self._used_scores(cand, q64, scoring, recent)
        ties = tie_keys([self._entries[i].seq for i in cand], self.config.tie_seed)
        best = [j for r, j in enumerate(best_first(scores, ties)) if r < n or cand[j] in first]
        cand, scores, ties = [cand[j] for j in best], scores[best], ties[best]
        score_of = dict(zip(cand, scores.tolist()))
        if not ((rerank and self.reranks) or prior is not None):
            return [self._hit(self._entries[i], score_of[i], 0.0, used=marked)
                    for i in (used_first(cand, first, ranks) if first else cand)[:k]]
        top = cand[:depth]
        use = rerank and self.reranks
        extra = None if prior is None else np.asarray(prior(top), dtype=np.float64)
        weight = self.query_lexical(q) if use else 0.0  # this query's own w(v_s) for a per-query store
        if use and weight and query_text is not None:
            lex = lexical_bonus(query_text, [self._entries[i].text for i in top], weight)
            extra = lex if extra is None else extra + lex
        placed = rerank_candidates(top, scores[:depth], ties[:depth], needs, self._sets_of, self.slot_match if use else 0.0,
                         self._links if use and self.provenance else None, _Allowed(self, episode_id, within, gone, late), extra)
        seen = {c for c, _, _ in placed}
        placed += [(c, 0.0, None) for c in cand[depth:] if c not in seen]
        if first:  # the rule over the whole ranking: a used memory the re-rank left below the top k comes up
            at = {p[0]: p for p in placed}
            placed = [at[c] for c in used_first(list(at), first, ranks)]
        out = []
        for i, bonus, src in placed[:k]:
            if bonus is None:  # a linked source outside the re-ranked top: its own score and bonus
                if i not in score_of:
                    score_of[i] = float(self._used_scores([i], q64, scoring, recent)[0])
                bonus = float(slot_bonus(needs, [self._sets_of(i)], self.slot_match if use else 0.0)[0])
                if prior is not None:
                    bonus += float(prior([i])[0])
            out.append(self._hit(self._entries[i], score_of[i], bonus, src, used=marked))
        return out

    def _used_ids(self, used: Collection[Any] | None) -> frozenset | None:
        """The stored ids (chunks for a chunked memory's id) of ``used``, None when not given; a one-line refusal
        for a model that scores reuse when not given (its score would miss w_u on every used memory)."""
        if used is None:
            if self.scores_uses:
                raise ValueError("this model scores whether an earlier tool call of the task used a memory "
                                 "(model.net.task_reuse): search with used= (the ids of those memories; ScopedMemory "
                                 "traces them from its conversation), or serve a model trained without it")
            return None
        if isinstance(used, (str, bytes)) or not isinstance(used, Iterable):
            raise TypeError(f"used must be a list of memory ids (or a mapping id -> rank), got {type(used).__name__}")
        if self.scores_recency and not isinstance(used, Mapping):
            raise ValueError("this model scores how recently an earlier tool call of the task used a memory "
                             "(model.net.task_recency): give used= as a mapping id -> rank of its latest use "
                             "(sam_model.data.reuse.use_ranks; ScopedMemory traces them from its conversation)")
        if isinstance(used, Mapping):  # every id's rank, stored or not: a bad one is the caller's error either way
            for i, k in used.items():
                if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:  # numpy's too
                    raise ValueError(f"used[{i!r}] must be the rank of its latest use, an integer from 1, got {k!r}")
        return frozenset(j for i in used for j in self._chunks.get(i, (i,)) if j in self._entries)

    def _used_recency(self, used: Mapping[Any, int]) -> dict[Any, float]:
        """r_m = 1/k (sam_model.data.reuse.recency) of each stored id (a chunked memory's chunks: its k) of ``used``
        (:meth:`_used_ranks`)."""
        return {j: recency(k) for j, k in self._used_ranks(used).items()}

    def _used_ranks(self, used: Mapping[Any, int]) -> dict[Any, int]:
        """The rank k of each stored id (a chunked memory's chunks: its k) of ``used``, id -> rank k, a positive
        integer (:meth:`_used_ids`, called first, refuses any other, of a stored id or not)."""
        out = {}
        for i, k in used.items():
            out.update((j, int(k)) for j in self._chunks.get(i, (i,)) if j in self._entries)
        return out

    def _used_order(self, used_order: str | None, used: Collection[Any] | None) -> str | None:
        """The search's order of its used memories (:meth:`search_vector`), None for none; a one-line refusal for an
        unknown one, for one asked of a search given no ``used``, and for "latest" given them as a bare list ("needed"
        too where the caller asked it; the store's default "needed" orders a bare list as "model")."""
        if used_order is not None and used_order != "off" and used_order not in USED_ORDERS:
            raise ValueError(f"used_order must be {', '.join(map(repr, USED_ORDERS))}, 'off' or None (the store's "
                             f"StoreConfig.used_order), got {used_order!r}")
        given = used_order is not None
        if not given:
            if used is None:  # the store's default orders what a search is told of, and nothing otherwise
                return None
            used_order = self.config.used_order
        elif used is None and used_order != "off":
            raise ValueError(f"used_order={used_order!r} needs used= (the memories the task's earlier tool calls "
                             "took values from; ScopedMemory traces them from its conversation)")
        if used_order == "needed" and not given and not isinstance(used, Mapping):  # the packaged model's default,
            # told keys alone (a LangGraph graph's used=): no ranks nor slots, so every used memory first in the
            # model's order ("latest" with every rank tied); refused, the default broke searches that worked before it
            return "model"
        if used_order in ("latest", "needed") and not isinstance(used, Mapping):  # the store's default: said so, a
            # caller who gave no order is told where it comes from and how to search without it
            whose = "" if given else " (this store's StoreConfig.used_order)"
            fix = "" if given else ": give the ranks, or search with used_order='model' or 'off'"
            raise ValueError(f"used_order={used_order!r}{whose} needs used= as a mapping id -> rank of its latest use "
                             f"(sam_model.data.reuse.use_ranks; ScopedMemory traces them), got a bare list{fix}")
        return None if used_order == "off" else used_order

    @staticmethod
    def _supplied(supplied: Mapping[Any, Collection[str]] | None, used: Mapping[Any, int]) -> Mapping[Any, Collection[str]]:
        """``supplied`` checked for used_order "needed": a mapping of used memory ids to their slots (strings), a
        one-line refusal for anything else; None (a caller who knows the uses but not their slots: a LangGraph
        graph's ``used=``, a direct search of a store whose config orders "needed") makes every slot unknown, so
        every used memory is lifted, as "latest" lifts them (sam_model.data.reuse.ANY_SLOT)."""
        if supplied is None:
            return {i: (ANY_SLOT,) for i in used}
        if not isinstance(supplied, Mapping):
            raise ValueError("supplied must be a mapping of used memory ids to the slots the task's earlier calls they "
                             "supplied needed (sam_model.data.reuse.task_supplies; ScopedMemory traces them), got "
                             f"{type(supplied).__name__}")
        for i, slots in supplied.items():
            if isinstance(slots, (str, bytes)) or not isinstance(slots, Iterable) or \
                    not all(isinstance(x, str) for x in slots):
                raise ValueError(f"supplied[{i!r}] must be a list of slot names (strings), got {slots!r}")
        return supplied

    def _used_scores(self, ids: Sequence[Any], q64: np.ndarray, scoring: Collection[Any],
                     recent: Mapping[Any, float] | None = None) -> np.ndarray:
        """q·m in float64 over the stored vectors, u_m (their last part) 1 for the memories in ``scoring``: the scores
        of an index that held u_m = 1 where the task's calls used the memory (sam_model.models.reuse; what
        evaluate.py's replay did by updating the index until 2026-12-06), while the index keeps u_m = 0 as written
        and no search writes (nor a save holds one search's marks). The caller makes them candidates, with as many
        more of the index's top as there are of them (a negative w_u lowers them, letting others up). Each row is
        summed on its own (not a matrix product, whose BLAS kernel sums a block's last rows otherwise): equal vectors
        score equal wherever they stand among the candidates, so the tie key alone orders them (step 2)."""
        m = self.index.get_vectors(list(ids)).astype(np.float64)
        if scoring:
            rows = [n for n, i in enumerate(ids) if i in scoring]
            end = m.shape[1] - self.vector_tail  # u_m (and r_m) end the vector but for a lexical_state model's 0
            if recent is None:
                m[rows, end - 1] = 1.0
            else:  # [.., u_m, r_m]: a model with task_recency
                m[rows, end - 2] = 1.0
                m[rows, end - 1] = [recent[ids[n]] for n in rows]
        return (m * q64).sum(axis=1)

    def _candidates(self, q: np.ndarray, n: int, episode_id: Any, within: set | None, by_ids: bool,
                    scope: dict, skip: int = 0, late: Callable[[Any], bool] | None = None) -> list:
        """The index's top ``n`` for ``q``, and every memory whose index score ties the n-th's.

        Which of several equal-scored memories an index returns at its cut depends on its internal order (an
        IVF list's order changes when a bank is loaded and its lists re-trained), so the cut is made here, by
        the score and the write-order tie key: the index is asked for one more than ``n`` and, while that one
        ties the n-th, for twice as many (at most MAX_K), so the same memories give the same candidates
        whatever order the index holds them in. ``skip``: how many memories the caller leaves out of what comes back
        (asked past, as the vectors of no memory are; the tie check looks as far past the n-th place as they may stand
        above it, since the n-th memory kept may stand that far down); ``late``: the test of a memory at or after the query's step
        (:meth:`late`), which the caller drops too: the index is asked past them, twice as many as came back each
        time more come (a search at an early step of a long episode, whose top is all late, asks a few times, not
        once per ``n`` of them), and where MAX_K places hold too few others (more late memories than one search may
        ask past), once more among the memories that are not late (:meth:`_not_late`), the cut made by their
        scores alone."""
        by_payload = getattr(self.index, "filters_scopes", False)  # the engine filters scopes itself (Qdrant)
        stray = max(0, len(self.index) - len(self)) + skip  # vectors of no memory a rollback left (_take_out), and
        # the memories left out: asked past
        cap = min(len(self) + stray, MAX_K)
        want, dropped = n, 0
        while True:
            ask = min(want + 1 + stray + dropped, cap)
            found, got = self.index.search(q[None], ask, episode_id=episode_id,
                                           within=within if by_ids or not by_payload else None,
                                           **self._payload(scope))
            cand = [i for i in found[0] if i is not None]
            if late is None:
                scores = got[0][:len(cand)]
            else:
                keep = [j for j, i in enumerate(found[0]) if i is not None and not late(i)]
                more = len(cand) - len(keep)
                if more > dropped and ask < cap:  # the late ones took places: ask past twice as many
                    dropped = 2 * more
                    continue
                if len(keep) <= want and ask >= cap and cap < len(self) + stray:  # MAX_K deep, still short
                    return self._candidates(q, n, episode_id, self._not_late(late, within), True, scope,
                                            skip)
                scores = got[0][keep]
            if len(scores) <= want or ask >= cap or scores[-1] < scores[min(n - 1 + stray, len(scores) - 1)]:
                return cand
            want *= 2

    def _not_late(self, late: Callable[[Any], bool], within: set | None) -> set:
        """The memories of the search's scopes (``within``; every memory when None: the index applies the episode
        and a payload's scopes itself) that are not late: what a search whose late memories outnumber MAX_K searches
        among (one pass over them, then one index search filtered to them)."""
        return {i for i in (self._entries if within is None else within) if i in self._entries and not late(i)}

    @locked
    def late(self, before: tuple[Any, int] | None) -> Callable[[Any], bool] | None:
        """The test "memory i is of the query's episode, at or after its step" for ``before`` = (episode, step), or
        None when no memory can be (no place given, or a step past the episode's newest memory: a query made now,
        the default, costs nothing). What evaluate.py's candidates leave out of a decision point's search: its own
        event and the later ones (RetrievalExample.candidate_range); a memory without a step never is. The search
        drops these memories; the memory bank's expansion does not reach them."""
        if before is None:
            return None
        if not isinstance(before, tuple) or len(before) != 2:
            raise TypeError(f"before must be (episode_id, step), got {before!r}")
        episode, step = before
        check_episode(episode, "before's episode_id"), check_step(step, "before's step")
        if step is None or step >= self._next_step.get(episode, 0):
            return None

        def late(i: Any) -> bool:
            e = self._entries.get(i)
            return e is not None and e.step is not None and e.step >= step and self.index.episode_of(i) == episode

        return late


__all__ = ["StoreSearch"]
