"""How a MemoryStore is saved and loaded: one folder, ``store.json`` (the format below), ``store.json.sha256`` (its
SHA-256, checked by a load: a hand-edited or damaged store.json loaded other texts or scopes where its JSON held) and
``index/`` (the vector index's own files, with their digests), written atomically as a whole
(sam_model.io.atomic_dir: a kill leaves the previous version, concurrent saves end with one) and read held still
(sam_model.io.reading).

store.json holds the format name and version, the vectors' width, the StoreConfig, every memory's entry
(sam_model.storeentry) in write order, the write counter, the provenance linker's and the recorder's state, each
episode's next step, whether the save keeps each memory's opens_task, and the encoder's vectors of three fixed
PROBE memories: a load checks that the model it is given makes the same ones, so memories are never searched with
another model's queries silently (``reencode`` moves them to it instead).

Apart from the store because the file is its own idea, read alone: StoreFiles is a mixin of
sam_model.store.MemoryStore (its only user), whose entries, scopes, links, chunks, index, linker and recorder it
writes and reads back; the class's other methods (adding, searching) never touch the files. The classmethods
return ``cls``, a MemoryStore, a name this module cannot import (sam_model.store imports it): their annotations say
it with ``noqa: F821``.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from sam_model.backends import load_index
from sam_model.data.examples import MemoryRecord, MemoryRecorder
from sam_model.data.provenance import ProvenanceLinker
from sam_model.encoding import Encoder
from sam_model.index import MemoryIndex
from sam_model.io import (
    SAMFileError,
    atomic_dir,
    check_digest,
    read_format_json,
    reading,
    refuse_links,
    write_json_lists,
)
from sam_model.locking import gc_paused, locked
from sam_model.storechecks import SCOPES, flawed_scopes
from sam_model.storeconfig import StoreConfig
from sam_model.storeentry import _ENTRY_ROW, _Entry, _entry_json_with_openings, _entry_json_without_openings

log = logging.getLogger(__name__)

FORMAT = "sam_model.MemoryStore"
VERSION = 1
STORE_FILE = "store.json"
# store.json's SHA-256, as ``sha256sum store.json`` writes it (so ``sha256sum -c`` checks it too): written with it in
# one atomic folder, checked before store.json is read (a save without it, from before 2026-12-07, loads unchecked)
DIGEST_FILE = "store.json.sha256"
# Three fixed memories: a store saves its encoder's vectors of them, and a load checks that the encoder it is given
# makes the same ones (cosine >= PROBE_COSINE: backends and bfloat16 stay above 0.999). Memories written by another
# model searched with this one ranked at 0.627 MRR where either model alone ranked 0.905 (held-out airline).
PROBE = (("user", "I'd like to change my flight to Boston on March 3rd, booking ABC123"),
         ("result", "get_reservation: {\"status\": \"confirmed\", \"flights\": [\"HAT017\"], \"total\": 412}"),
         ("action", "CALL cancel_reservation(reservation_id=ABC123, reason=change of plans)"))
PROBE_COSINE = 0.98


def _recorded_digest(path: Path) -> str | None:
    """The SHA-256 store.json.sha256 records (None: no such file, a save from before it), read as ``sha256sum -c``
    reads its line (the digest, then the file's name, ``*`` before it in binary mode); a file that is not such a
    line is a SAMFileError naming it (its first 4 KiB are read: the line is 77 bytes)."""
    if not path.exists():
        return None
    try:
        with open(path, "rb") as fh:
            words = fh.read(4096).decode("utf-8").split()
    except (OSError, UnicodeDecodeError) as err:
        raise SAMFileError(f"{path}: unreadable ({err}); restore the folder from a backup, or delete {path.name} to "
                           f"load {STORE_FILE} unchecked") from None
    if len(words) != 2 or words[1].lstrip("*") != STORE_FILE:
        raise SAMFileError(f"{path}: must be one line, {STORE_FILE}'s SHA-256 then '{STORE_FILE}' (as sha256sum "
                           f"writes it), got {' '.join(words)[:80]!r}; restore the folder from a backup, or delete "
                           f"{path.name} to load {STORE_FILE} unchecked")
    return words[0]


def _step_of(i: Any) -> int | None:
    """The step of an ``episode#step`` id (MemoryRecord.make_id), else None."""
    tail = str(i).rsplit("#", 1)[-1]
    return int(tail) if tail.isdigit() else None


class StoreFiles:
    """A MemoryStore's save and load (mixin of sam_model.store.MemoryStore; see the module doc)."""

    def save(self, path: str | os.PathLike) -> Path:
        """Write the store as the folder ``path`` (store.json + index/), atomically as a whole
        (sam_model.io.atomic_dir): a kill leaves the previous version, concurrent saves end with one."""
        out = Path(path)
        with atomic_dir(out, STORE_FILE, ("entries", "format")) as tmp:
            self.write(tmp)
        return out

    def write(self, folder: Path) -> None:
        """Write into the (empty, staging) folder ``folder``: for callers that save the store inside a larger
        atomic folder (SAMRetriever.save)."""
        self.write_snapshot(folder, self.snapshot())

    def snapshot(self) -> tuple[dict[str, Any], Any]:
        """The store of this moment, copied (:meth:`state_dict` with each entry as a tuple of its fields, and the
        index's own snapshot), for :meth:`write_snapshot`: taken under the lock, so a caller holding a lock of its
        own (a served tenant's) holds it for the copy only, not for the JSON encoding or the files."""
        if not hasattr(self.index, "snapshot"):
            raise ValueError("only a store with a MemoryIndex or a backend index saves itself (the memory bank "
                             "saves its tiers)")
        with self.lock, gc_paused():
            self._take_out_strays(strict=True)  # a save holding them would not load (the memories and vectors differ)
            return self._state(list(map(_ENTRY_ROW, self._entries.values())), self.keeps_openings), \
                self.index.snapshot()

    def write_snapshot(self, folder: Path, snap: tuple[dict[str, Any], Any]) -> None:
        """Write a :meth:`snapshot` into the (empty, staging) folder ``folder``, without the lock."""
        state, index_snap = snap
        (folder / "index").mkdir()
        self.index.write_snapshot(folder / "index", index_snap)
        rows = _entry_json_with_openings if state.get("openings") else _entry_json_without_openings
        digest = write_json_lists(folder / STORE_FILE, {"entries": (state["entries"], rows)},
                                  json.dumps({k: v for k, v in state.items() if k != "entries"}))
        (folder / DIGEST_FILE).write_text(f"{digest}  {STORE_FILE}\n", encoding="ascii")  # sha256sum's line

    @locked
    def state_dict(self) -> dict[str, Any]:
        """Everything but the vectors (which the index holds), JSON-able."""
        keep = self.keeps_openings
        return self._state([e.to_json(keep) for e in self._entries.values()], keep)

    def _state(self, entries: list, openings: bool) -> dict[str, Any]:
        """``openings``: the save keeps each memory's opens_task and the recorder's openers, said by ``"openings":
        true`` (:attr:`keeps_openings`; without it the state is the one written before the flag existed)."""
        probe = self.encoder_probe()
        return {"format": FORMAT, "version": VERSION, "dim": self.dim, "config": self.config.to_dict(),
                "entries": entries, "seq": self._seq,
                "linker": self.linker.state_dict(), "recorder": self.recorder.state_dict(openers=openings),
                "next_step": [[ep, s] for ep, s in self._next_step.items()],
                **({"openings": True} if openings else {}),
                **({} if probe is None else {"encoder_probe": probe.tolist()})}

    def encoder_probe(self, encoder: Encoder | None = None) -> np.ndarray | None:
        """``encoder``'s vectors of the PROBE memories (default: this store's; None without one), what a save
        records of the model that wrote its memories."""
        enc = encoder or self.encoder
        enc = getattr(enc, "inner", enc)  # a served store's encoder seen through its log (serve.tenants)
        if enc is None:
            return None
        recs = [MemoryRecord(f"probe#{i}", "probe", i, kind, "", f"[{kind}] {text}", f"[{kind}] {text}")
                for i, (kind, text) in enumerate(PROBE)]
        # each time (three short texts): a model whose weights changed in place (Janus's head) must not be
        # described by the vectors of its earlier weights (a cache made its own next save unloadable)
        return np.asarray(enc.encode_memories(recs), dtype=np.float32)

    def check_encoder(self, saved: Any, where: str, encoder: Encoder | None = None,
                      fix: str = "re-encode them with this one (reencode=True; sam-serve --reencode)") -> None:
        """Refuse an encoder (default: this store's) that is not the model that wrote these memories (``saved``: the
        save's probe vectors): its queries would be searched against another model's vectors, and rank far worse,
        silently."""
        cos = self._probe_cosine(saved, encoder)
        if not cos >= PROBE_COSINE:
            raise SAMFileError(f"{where}: these memories were encoded by another model than the one given (the two "
                               f"make other vectors of the same memories: cosine {cos:.2f}); load them with the model "
                               f"that wrote them, or {fix}")

    def _probe_cosine(self, saved: Any, encoder: Encoder | None = None) -> float:
        """The lowest cosine between ``saved`` probe vectors and the encoder's (default: this store's; rows both
        zero count as equal)."""
        mine = self.encoder_probe(encoder)
        saved = np.asarray(saved, dtype=np.float32)
        if mine is None or saved.shape != mine.shape:
            return 1.0  # no model to check, or another width (refused by the dim check)
        na, nb = np.linalg.norm(saved, axis=1), np.linalg.norm(mine, axis=1)
        cos = np.sum(saved * mine, 1) / np.maximum(na * nb, 1e-12)
        return float(np.min(np.where((na < 1e-9) & (nb < 1e-9), 1.0, cos)))

    def same_encoder(self, saved: Any) -> bool:
        """Whether this store's encoder makes the ``saved`` probe vectors (a save's ``encoder_probe``)."""
        return self._probe_cosine(saved) >= PROBE_COSINE

    def _encode_stale(self, stale: list, where: str) -> None:
        """Memories of a loaded save whose vectors the engine no longer holds as saved (a Qdrant server: their
        points were written again after the save, an update, or deleted): encoded again from the saved texts, so the
        store is the save's, vectors included. Without an encoder they stay as the engine holds them, said in one
        line (a write-ahead log replaying the writes since the save, as sam-serve's, puts them right)."""
        if self.encoder is None:
            log.warning("%s: %d memories of the save (%r first) were written or deleted in the Qdrant collection after "
                        "the save: their vectors are a later version or gone; load with the model that wrote them to "
                        "encode them again from the saved texts, or replay the writes made since", where, len(stale),
                        stale[0])
            return
        entries = [self._entries[i] for i in stale]
        self._put_vectors(entries, self._vectors(entries, None, 64, False))
        log.info("%s: %d memories written or deleted in the Qdrant collection after the save encoded again from it",
                 where, len(stale))

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` into a store whose index already holds the same memories' vectors.
        Raises KeyError/TypeError/ValueError on damaged data (callers name the file)."""
        self._entries, self._scopes, self._links, self._chunks = {}, {}, {}, {}
        if not isinstance(d["entries"], list):
            raise ValueError("'entries' must be a list")
        for raw in d["entries"]:
            e = _Entry.from_json(raw)
            if e.id in self._entries:
                raise ValueError(f"memory {e.id!r} is in the file twice")
            if "episode_id" in raw and e.id in self.index and raw["episode_id"] != self.index.episode_of(e.id):
                raise ValueError(f"memory {e.id!r} is of episode {raw['episode_id']!r} but the index says "
                                 f"{self.index.episode_of(e.id)!r}")
            self._entries[e.id] = e
            if e.parent is not None:
                self._chunks.setdefault(e.parent, []).append(e.id)
            if e.links:
                self._links[e.id] = e.links
            for name in SCOPES:
                if getattr(e, name) is not None:
                    self._scopes.setdefault((name, getattr(e, name)), set()).add(e.id)
        self._seq = int(d["seq"])
        self.linker = ProvenanceLinker.from_state_dict(d["linker"])
        self.recorder = MemoryRecorder.from_state_dict(d["recorder"])
        kept = d.get("openings", False)
        if not isinstance(kept, bool):
            raise ValueError(f"'openings' must be true or false, got {kept!r:.40}")
        self.keep_openings = self.keep_openings or kept  # saved again as it was loaded, whatever the encoder
        self.openings_known = kept or not self._entries  # an older save's memories: each flag unknown
        self._next_step = {ep: int(s) for ep, s in d["next_step"]}
        if sorted(map(str, self.index.ids())) != sorted(map(str, self._entries)):
            raise ValueError("the memories and the vectors of the index differ")

    @classmethod
    def load(cls, path: str | os.PathLike, encoder: Encoder | None = None, device: str | None = None,
             reencode: bool = False) -> MemoryStore:  # noqa: F821
        """Read a folder written by :meth:`save` (held still while it is read, sam_model.io.reading). ``encoder``
        must be the model that wrote the memories (checked: SAMFileError otherwise), unless ``reencode``: then
        every memory is encoded again with it (:meth:`reencode`)."""
        with reading(path) as folder:
            return cls.read(folder, encoder, device, reencode=reencode)

    @classmethod
    def read(cls, folder: Path, encoder: Encoder | None = None, device: str | None = None,
             config: StoreConfig | None = None, reencode: bool = False) -> MemoryStore:  # noqa: F821
        """:meth:`load` without the read lock (the caller holds it); ``config`` overrides the saved one."""
        path = folder / STORE_FILE
        fix = "save the store again, or delete the folder and add the memories again"
        refuse_links(folder, "memory store", fix)
        if not path.is_file():
            raise SAMFileError(f"memory store not found: {path} is missing (give a folder written by "
                               "MemoryStore.save or SAMRetriever.save)")
        check_digest(path, _recorded_digest(folder / DIGEST_FILE), folder / DIGEST_FILE, None,
                     f"restore the folder from a backup (store.json edited on purpose: delete {DIGEST_FILE} to load "
                     "it unchecked)", "this store")
        d = read_format_json(path, FORMAT, VERSION, "memory store", fix)
        try:
            cfg = config or StoreConfig.from_dict(d["config"], "config")
            dim = int(d["dim"])
            if encoder is not None and encoder.dim != dim and reencode:
                raise SAMFileError(f"{path}: re-encoding moves memories between models of one width, and these "
                                   f"vectors have {dim} dimensions where the model makes {encoder.dim}: add the "
                                   "memories' texts to a new store instead")
            if encoder is not None and encoder.dim != dim:
                raise ValueError(f"the store holds vectors of dim {dim} but the encoder makes dim {encoder.dim}")
            index = load_index(folder / "index", expected_dim=dim, device=device)
            self = cls(encoder, cfg, dim, index)
            self.load_state_dict(d)
            flawed_scopes(self._entries.values(), str(path))
            if reencode and encoder is None:
                raise SAMFileError(f"{path}: reencode=True needs the model to encode the memories with")
            saved = d.get("encoder_probe")
            stale = [i for i in index.take_stale() if i in self._entries] if hasattr(index, "take_stale") else []
            if not reencode and saved is not None:
                self.check_encoder(saved, str(path))
            self.check_openings(str(path))  # before re-encoding: each memory's flag is what the model encodes
            if reencode and (saved is None or not self.same_encoder(saved)):  # memories this model wrote are not
                self.reencode()  # encoded again
                stale = []
            if stale:  # after the model check: encoded again by the model that wrote the others
                self._encode_stale(stale, str(folder))
            if hasattr(index, "repair_payloads"):  # an engine that filters by its points' payloads (Qdrant); last,
                # so that a point written again above is not taken for a damaged one
                index.repair_payloads({i: {n: getattr(e, n) for n in SCOPES} for i, e in self._entries.items()},
                                      str(folder / "index"))
        except SAMFileError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise SAMFileError(f"{path}: memory store data is damaged or does not match {folder / 'index'} "
                               f"({str(err)[:200]}); {fix}") from None
        return self

    @classmethod
    def from_legacy_index(cls, folder: Path, encoder, config: StoreConfig, device: str | None = None) -> MemoryStore:  # noqa: F821
        """A store from the index folder an older SAMRetriever.save wrote (``index/`` with meta.json and
        rerank.json): it ranks as before; the memories' texts were not saved then, so hits carry none."""
        index = MemoryIndex.load(folder, expected_dim=encoder.dim, device=device)
        self = cls(encoder, config, encoder.dim, index)
        links: dict = {}
        sets: dict = {}
        rr = folder / "rerank.json"
        if rr.exists():
            try:
                d = json.loads(rr.read_text(encoding="utf-8"))
                self.linker = ProvenanceLinker.from_state_dict(d["linker"])
                links = {k: tuple(v) for k, v in d["links"]}
                sets = {k: tuple(v) for k, v in d["sets"]}
            except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
                raise SAMFileError(f"{rr}: unreadable re-rank data ({err}); delete the file to search without "
                                   "provenance links and slot match, or rebuild the index with add_memories") from err
        for n, i in enumerate(index.ids()):
            ep = index.episode_of(i)
            step = _step_of(i)
            self._entries[i] = _Entry(i, "", "", "", "", step, n, sets.get(i, ()), links.get(i, ()))
            if links.get(i):
                self._links[i] = links[i]
            if step is not None:
                self._next_step[ep] = max(self._next_step.get(ep, 0), step + 1)
        self._seq = len(self._entries)
        self.openings_known = not self._entries  # saved long before the flag: refused by a task_opening model
        self.check_openings(str(folder))
        return self


__all__ = ["DIGEST_FILE", "FORMAT", "PROBE", "PROBE_COSINE", "STORE_FILE", "VERSION", "StoreFiles"]
