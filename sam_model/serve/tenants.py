"""Tenants of the served memory: who a key is, and each tenant's own memory, log and checkpoints.

Isolation is by construction, not by filter: every tenant has its own :class:`~sam_model.memory.scoped.ScopedMemory`
(its own store and index, or its own Qdrant collection), and a request reaches only the memory of the tenant its
key names. Another tenant's memory ids, user ids or filters are therefore simply not there — a get, list, search,
update or delete with them finds nothing. Inside a tenant, user/agent/run scopes work as in ScopedMemory.

Durability (sam_model.serve.wal): a write is logged and fsync-ed, then applied (the vectors of the memories it
made logged after it, so that a replay does not encode them again: LoggedVectors), then answered; every
``checkpoint_every`` writes, and a tenth of the memories held (``checkpoint_share``), and at a clean shutdown, the
memory is saved atomically with the log's seq and the tenant's name (a checkpoint restored into another tenant's
folder is refused at start: :func:`read_seq`), and the records it holds leave the log; searches and writes go on
while it is written (Tenant.checkpoint). On start each tenant loads its checkpoint and replays the log after its seq
(each record of which names its tenant: another tenant's log copied into the folder is refused first).

The keys file is JSON, ``{"<tenant>": "<api key>", ...}``: tenant names of ASCII letters, digits, ``_`` and
``-``, different also when case is ignored; keys of at least 16 characters, all different, of printable ASCII
with no spaces at the ends (what a header carries as it is). A tenant's value may also be an entry
``{"key": "<api key>", "user_id": "alice"}`` (``agent_id``, ``run_id``), whose key serves that scope only, or a
list of keys and entries (a SaaS that hands one key to each of its customers' users): every request made with
such a key gets the scope filled in, is refused when it names another, and is never widened (Caller.within,
sam_model.serve.scopes). Each tenant's folder is readable by the server's user alone, and a keys file other users
of the machine may read is said so at start (:func:`warn_if_shared`). Keys are compared in constant time.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hmac
import json
import logging
import os
import string
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType, SimpleNamespace
from typing import Any, NamedTuple

import numpy as np

try:
    import fcntl
except ImportError:  # not on Windows: one server per --data is then the operator's to keep
    fcntl = None  # type: ignore[assignment]

from sam_model.io import SAMFileError, atomic_dir, atomic_write_text, exists, read_json, reading, unique_keys
from sam_model.limits import MAX_ADD_ITEMS, as_logged, shown
from sam_model.memory.scoped import SCOPE_KEYS, ScopedMemory
from sam_model.memory.scopedinput import NoTextError
from sam_model.serve.scopes import check_fixed, within
from sam_model.serve.wal import LogWriteError, WriteAheadLog, check_unicode
from sam_model.storechecks import flawed_scopes
from sam_model.storeconfig import StoreConfig

log = logging.getLogger(__name__)

MIN_KEY_CHARS = 16
CHECKPOINT = "checkpoint"
WAL_FILE = "wal.log"
SEQ_FILE = "seq.json"


TENANT_CHARS = frozenset(string.ascii_letters + string.digits + "_-")


def check_tenant(name: Any, where: str) -> str:
    """A tenant name is its folder's name: ASCII letters, digits, '_' and '-' only (no Unicode forms that a
    normalising file system would fold together)."""
    if not isinstance(name, str) or not name or len(name) > 64 or not set(name) <= TENANT_CHARS:
        raise SAMFileError(f"{where}: tenant name {name!r} must be 1-64 ASCII letters, digits, '_' or '-'")
    return name


HEADER_CHARS = frozenset(chr(c) for c in range(0x20, 0x7F))  # printable ASCII: what a header carries as it is
NEW_KEY = "e.g. python -c 'import secrets; print(secrets.token_urlsafe(24))'"


def check_sendable(key: str, who: str, path: Path) -> None:
    """A key a client can send: a header's value loses its leading and trailing spaces (and a newline ends it),
    and its non-ASCII bytes reach the server as Latin-1, so such a key matched no request and its tenant was
    unreachable, with no word at start. ``who``: whose key it is, in words."""
    bad = sorted(set(key) - HEADER_CHARS) or ([" "] if key != key.strip(" ") else [])
    if bad:
        at = " at an end" if bad[0] == " " else ""
        raise SAMFileError(f"{path}: the key of {who} holds {bad[0]!r}{at}, which an HTTP header cannot carry as it "
                           f"is: use printable ASCII only, no spaces at the ends ({NEW_KEY})")


class Access(NamedTuple):
    """What a key reaches: its tenant's memory, within the scopes the keys file fixes for it (none: the tenant's
    every scope, each call naming its own)."""
    tenant: str
    scopes: Mapping[str, str] = MappingProxyType({})


KEY_FIELDS = ("key", *SCOPE_KEYS)  # a key entry's fields: {"key": "...", "user_id": "alice"}


def read_keys(path: str | os.PathLike) -> dict[str, Access]:
    """api key -> what it reaches, from the keys file (every problem named with the file, the tenant, the entry
    and the field). A tenant's value is its key, an entry ``{"key": ..., "user_id": ...}`` whose key serves that
    user (agent, run) only (sam_model.serve.scopes), or a list of keys and entries (one key per end user)."""
    path = Path(path)
    try:
        # a tenant twice: refused; a byte-order mark (Windows editors write one) is no part of the JSON
        raw = json.loads(path.read_text(encoding="utf-8-sig"), object_pairs_hook=unique_keys)
    except FileNotFoundError:
        raise SAMFileError(f"keys file not found: {path} (write {{\"tenant\": \"<key of >= {MIN_KEY_CHARS} chars>\"}})") from None
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise SAMFileError(f"{path}: unreadable keys file ({err}); it must be a JSON object tenant -> key") from None
    if not isinstance(raw, dict) or not raw:
        raise SAMFileError(f"{path}: the keys file must be a non-empty JSON object tenant -> key")
    warn_if_shared(path)
    keys: dict[str, Access] = {}
    whose: dict[str, str] = {}
    folded: dict[str, str] = {}
    for tenant, value in raw.items():
        check_tenant(tenant, str(path))
        if tenant.lower() in folded:
            raise SAMFileError(f"{path}: tenants {folded[tenant.lower()]!r} and {tenant!r} differ only in case: on a "
                               "case-insensitive file system they would share one folder; rename one")
        folded[tenant.lower()] = tenant
        if isinstance(value, list) and not value:
            raise SAMFileError(f"{path}: tenant {tenant!r} has an empty list of keys: give it at least one key")
        entries = list(enumerate(value, 1)) if isinstance(value, list) else [(0, value)]
        for n, entry in entries:
            who = f"tenant {tenant!r}" + (f" (entry {n})" if n else "")
            key, scopes = _key_entry(entry, who, path)
            if key in keys:
                raise SAMFileError(f"{path}: {whose[key]} and {who} have the same key; give each its own")
            keys[key], whose[key] = Access(tenant, scopes), who
    return keys


def warn_if_shared(path: Path) -> None:
    """A warning naming the keys file when users of the machine other than its owner may read or write it. Each
    key reaches its tenant's memories through the server (on 127.0.0.1, from any local account), so a keys file
    made as the shell makes files (``> keys.json``: 0644 under the usual umask) handed every tenant's memories to
    every account, while the tenants' folders are 0700 for that very reason. A warning, not a refusal: secret
    volumes (Kubernetes' default 0644, Docker's 0444) are shared only with the container."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:  # read a moment ago: whatever it is now, the read decided
        return
    if os.name == "posix" and mode & 0o077:
        log.warning("%s: the keys file is open to other users of this machine (mode %04o), and each key reaches "
                    "its tenant's memories: chmod 600 %s", path, mode, path)


def _key_entry(entry: Any, who: str, path: Path) -> tuple[str, dict[str, str]]:
    """(key, fixed scopes) of one entry of the keys file: a key, or ``{"key": ..., "user_id": ...}``."""
    if isinstance(entry, dict):
        if unknown := sorted(set(entry) - set(KEY_FIELDS)):
            raise SAMFileError(f"{path}: {who}, field {unknown[0]!r}: unknown; a key entry takes "
                               f"{', '.join(KEY_FIELDS)}")
        if "key" not in entry:
            raise SAMFileError(f"{path}: {who} has no field 'key': write {{\"key\": \"<its key>\", \"user_id\": "
                               "\"<the user it serves>\"}}")
        if nulls := [n for n in SCOPE_KEYS if n in entry and entry[n] is None]:  # it would fix nothing, silently
            raise SAMFileError(f"{path}: {who}, field {nulls[0]!r}: null fixes no {nulls[0].removesuffix('_id')}; "
                               "give one, or leave the field out")
        key = entry["key"]
        try:
            scopes = check_fixed({n: entry[n] for n in SCOPE_KEYS if n in entry}, lambda n: f"{path}: {who}, field {n!r}")
        except ValueError as err:
            raise SAMFileError(str(err)) from None
    elif isinstance(entry, str):
        key, scopes = entry, {}
    else:
        raise SAMFileError(f"{path}: {who}: want a key (a string) or {{\"key\": ..., \"user_id\": ...}}, got "
                           f"{json.dumps(entry)[:40]}")
    if not isinstance(key, str) or len(key) < MIN_KEY_CHARS:
        raise SAMFileError(f"{path}: the key of {who} must be a string of at least {MIN_KEY_CHARS} characters "
                           f"({NEW_KEY})")
    check_sendable(key, who, path)
    return key, scopes


LOCK_FILE = "serving.lock"


def hold_folder(folder: Path) -> int | None:
    """Hold a tenant's folder for as long as this process serves it, or SAMFileError when another process does:
    two servers on one ``--data`` both appended to its log, each with its own seq, and each one's checkpoint cut
    the log at its own offsets, so the other's acknowledged writes were lost (a second ``sam-serve`` that only
    failed to bind its port still replayed the log and checkpointed at shutdown). A POSIX record lock (lockf) on
    ``serving.lock``: the kernel lets it go when the process dies (``kill -9`` too), so a restart is never
    refused by a dead server. Returns the lock's fd (None where file locks are not supported)."""
    if fcntl is None:
        return None
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        os.close(fd)
        if err.errno not in (errno.EACCES, errno.EAGAIN):
            log.warning("%s: file locks are not supported here (%s): run one server per --data", folder, err)
            return None
        raise SAMFileError(f"{folder}: another process (a sam-serve on this --data?) is serving this tenant; two "
                           "servers on one folder lose each other's acknowledged writes: stop the other, or give "
                           "this one its own --data") from None
    return fd


def let_go(fd: int | None) -> None:
    """Release a :func:`hold_folder` lock."""
    if fd is not None:
        os.close(fd)


VECTORS = "vectors"  # the log record of a write's memory vectors (WriteAheadLog.attach)
CHECKPOINT_SHARE = 0.1  # a checkpoint waits for writes numbering this share of the memories held (and checkpoint_every)


def check_checkpoint_share(share: Any) -> float:
    """``share`` as a tenant's checkpoint share (writes per memory held between checkpoints), or a ValueError that
    says what it must be: one check for the library, ``sam-serve`` and the serve bench."""
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 10:
        raise ValueError(f"the checkpoint share must be a number in [0, 10] (writes per memory held between a "
                         f"tenant's checkpoints; 0: by --checkpoint-every alone), got {share!r}")
    return float(share)


class LoggedVectors:
    """A tenant's store encoder seen through its log: it keeps the memory vectors it computes during a write, for
    the tenant to log after it (:meth:`take`), and during a replay hands back the vectors a write was logged with
    (:meth:`give`) instead of running the encoder again: replaying a long log then costs store inserts, not BERT.
    Every other attribute is the wrapped encoder's (queries are encoded as before)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self._made: dict[Any, np.ndarray] = {}
        self._given: dict[Any, np.ndarray] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def encode_memories(self, memories: Sequence[Any], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        ids = [m.id for m in memories]
        if ids and all(i in self._given for i in ids):
            return np.stack([self._given.pop(i) for i in ids])
        out = self.inner.encode_memories(memories, batch_size, progress)
        self._made.update(zip(ids, out))
        return out

    def take(self) -> dict[str, Any] | None:
        """The vectors made since the last take, as a log record's args (None when there are none)."""
        made, self._made = self._made, {}
        if not made:
            return None
        block = np.ascontiguousarray(np.stack(list(made.values())), dtype="<f4")
        return {"ids": list(made), "dim": int(block.shape[1]), "f32": base64.b64encode(block.tobytes()).decode()}

    def give(self, args: Mapping[str, Any] | None) -> None:
        """The vectors of the write about to be replayed (a :meth:`take` record's args; None: none logged)."""
        self._given = {}
        if args:
            block = np.frombuffer(base64.b64decode(args["f32"]), dtype="<f4").reshape(-1, int(args["dim"]))
            self._given = dict(zip(args["ids"], block.astype(np.float32)))


def read_seq(path: Path, wal: Path, tenant: str | None = None) -> int:
    """The seq of the last write a checkpoint holds, from its seq.json (``{"seq": n, "tenant": name}``, n an integer
    >= 0), or SAMFileError naming the file: a wrong n would replay writes the checkpoint holds, or skip (and at the
    next checkpoint truncate away) writes it lacks, so it is never guessed (``1.9`` is not 1). ``wal``: the log.

    ``tenant``: the tenant whose folder holds the checkpoint; one that names another tenant is refused before the
    memory is loaded. A checkpoint did not say whose it was, so another tenant's backup restored into this folder
    was served to this tenant's key, its users' memories and all, and on a Qdrant server the load attached to the
    other tenant's collection (rolling it back to the backup, then writing over its points of the same ids). One
    without ``tenant`` (written before checkpoints named theirs) is read as this tenant's."""
    fix = (f"nothing was changed: restore the checkpoint folder from a backup, or move it away to rebuild the memory "
           f"from {wal} (if that log starts at write 1)")
    seq = read_json(path, 'checkpoint seq file ({"seq": <the last write the checkpoint holds>})', fix)
    if not isinstance(seq, dict) or "seq" not in seq:
        raise SAMFileError(f"{path}: must be {{\"seq\": <the last write the checkpoint holds>}}, got "
                           f"{json.dumps(seq)[:80]}; {fix}")
    n = seq["seq"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise SAMFileError(f"{path}: field 'seq' must be an integer >= 0 (the last write the checkpoint holds), got "
                           f"{json.dumps(n)[:80]}; {fix}")
    owner = seq.get("tenant", tenant)
    if not isinstance(owner, str) and (owner is not None or "tenant" in seq):
        raise SAMFileError(f"{path}: field 'tenant' must be the name of the tenant whose checkpoint this is, got "
                           f"{json.dumps(owner)[:80]}; {fix}")
    if tenant is not None and owner != tenant:
        raise SAMFileError(f"{path}: this checkpoint is tenant {owner!r}'s, not {tenant!r}'s (another tenant's backup "
                           f"restored here?), and nothing was loaded: serving it would give {tenant!r}'s key "
                           f"{owner!r}'s memories; restore {tenant!r}'s own checkpoint, or, if {tenant!r} is "
                           f"{owner!r} renamed, set \"tenant\" in this file to {json.dumps(tenant)}")
    return n


def _writes(seq: int) -> str:
    return f"writes 1-{seq}" if seq > 1 else "write 1" if seq == 1 else "no writes"


class Tenant:
    """One tenant's memory, write-ahead log and checkpoints under ``folder`` (see the module doc)."""

    def __init__(self, name: str, folder: Path, make_memory: Callable[[], ScopedMemory],
                 load_memory: Callable[[Path], ScopedMemory], checkpoint_every: int = 1000, fsync: bool = True,
                 checkpoint_share: float = CHECKPOINT_SHARE, reencode: bool = False):
        """A checkpoint is due after ``checkpoint_every`` writes and ``checkpoint_share`` times the memories held
        (:meth:`checkpoint_if_due`). ``reencode``: ``load_memory`` encoded the checkpoint's memories again with
        another model; the log's writes are then encoded again too (not given their logged vectors, which are the
        old model's), and a checkpoint is written at once."""
        self.checkpoint_share = check_checkpoint_share(checkpoint_share)
        self.name, self.folder, self.checkpoint_every = name, Path(folder), checkpoint_every
        self.folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)  # its memories are its own: not readable by other users of the machine
        self._held = hold_folder(self.folder)
        try:
            self._open(make_memory, load_memory, fsync, reencode)
        except BaseException:
            let_go(self._held)
            raise

    def _open(self, make_memory: Callable[[], ScopedMemory], load_memory: Callable[[Path], ScopedMemory],
              fsync: bool, reencode: bool) -> None:
        """Load the checkpoint (or start empty), replay the log after it, and checkpoint a fresh, re-encoded or
        migrated memory at once."""
        ckpt = self.folder / CHECKPOINT
        fresh = not exists(ckpt)
        # the log first: one of another tenant is refused before this tenant's checkpoint is loaded (on a Qdrant
        # server the load attaches to the collection)
        self.wal = WriteAheadLog(self.folder / WAL_FILE, fsync=fsync, tenant=self.name)
        try:
            if not fresh:
                with reading(ckpt) as f:
                    done = read_seq(f / SEQ_FILE, self.folder / WAL_FILE, self.name)
                    self.memory = load_memory(f / "memory")
            else:
                self.memory, done = make_memory(), 0
            self.vectors = LoggedVectors(self.memory.store.encoder)
            records = self._replayable(done, None if fresh else ckpt / SEQ_FILE)
            self._replay(records, done, reencode)
        except BaseException:
            self.wal.close()
            raise
        self.wal.seq = max(self.wal.seq, done)
        self._checkpointed = done  # the seq the last checkpoint holds
        self._checkpointing = threading.Lock()
        if fresh or reencode or self.memory.migrated:
            self.checkpoint()  # from the start: a Qdrant collection is then always attached by a load; after a
            # re-encode, the checkpoint is the new model's (a kill before it left the old one beside new-model writes);
            # after a migration (ScopedMemory._place_episodes), the next start loads this version's save, not the
            # old one to migrate (on a Qdrant server: re-encode) again until the next due checkpoint

    def _replayable(self, done: int, seq_file: Path | None) -> list[tuple[int, dict[str, Any]]]:
        """(line, record) of the log's records after the checkpoint's seq ``done``, once the log is seen to fit the
        checkpoint: it goes on from the checkpoint's writes without a gap (its first write at most ``done`` + 1)
        and reaches them (its last write at least ``done``: a checkpoint holds only writes the log took). A log
        that does not fit is refused, never replayed in part or truncated: its writes would be lost for good.
        ``seq_file``: the checkpoint's seq.json (None: there is no checkpoint)."""
        numbered = self.wal.numbered()
        if numbered:
            seqs = [r["seq"] for _, r in numbered]
            first, last = min(seqs), max(seqs)
            held = (f"the checkpoint ({seq_file}) holds {_writes(done)}" if seq_file is not None else
                    f"there is no checkpoint ({self.folder / CHECKPOINT})")
            if last < done:
                raise SAMFileError(
                    f"{self.wal.path}: its writes go up to {last}, yet {held}, writes this log never took: the two do "
                    "not belong together and nothing was changed: restore the checkpoint this log belongs with from "
                    "a backup (or move the checkpoint away to rebuild the memory from the log, if the log starts at "
                    "write 1), or move the log away to start from the checkpoint alone (its writes are then lost)")
            if first > done + 1:
                gap = f"write {done + 1} is" if first == done + 2 else f"writes {done + 1}-{first - 1} are"
                raise SAMFileError(
                    f"{self.wal.path}: its writes start at {first}, yet {held}: {gap} in neither, and nothing was "
                    "changed: restore the checkpoint or the log that belong together from a backup")
        return [(n, r) for n, r in numbered if r["seq"] > done]

    def _replay(self, records: list[tuple[int, dict[str, Any]]], done: int, reencode: bool) -> None:
        """Apply the log's writes after the checkpoint, with their logged vectors (``reencode``: encoded again).
        Every write in the log was applied when it was made (one that failed was taken back: :meth:`write`), so
        one that cannot be applied now stops the start in one line naming it: skipping it would lose an
        acknowledged write, and the next checkpoint would truncate it away."""
        logged = {} if reencode else {r["seq"]: (n, r["args"]) for n, r in records if r["op"] == VECTORS}
        replay = [(n, r) for n, r in records if r["op"] != VECTORS]
        with self._logging_vectors(), as_logged():  # scopes as they were logged (a control character, before 12-06)
            for n, r in replay:
                line, vectors = logged.get(r["seq"], (0, None))
                try:
                    self.vectors.give(vectors)
                except (KeyError, TypeError, ValueError, AttributeError) as err:  # costs only time: encoded again
                    log.warning("tenant %s: %s: line %d, the vectors of write %d, is unreadable (%s); they are "
                                "encoded again", self.name, self.wal.path, line, r["seq"], err)
                    self.vectors.give(None)
                try:
                    apply(self.memory, r["op"], r["args"])
                except NoTextError as err:  # logged before such adds were refused: it stored nothing then either
                    log.warning("tenant %s: %s: line %d, write %d stores nothing (%s); passed over", self.name,
                                self.wal.path, n, r["seq"], err)
                except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
                    why = f"{type(err).__name__}: {err}"[:200]
                    raise SAMFileError(
                        f"{self.wal.path}: line {n}, write {r['seq']} ({r['op']!r}), cannot be applied to the "
                        f"memory of the checkpoint ({_writes(done)}) and the log's writes before it ({why}); the "
                        "start stopped and nothing was changed: restore the checkpoint and the log from a backup, "
                        "or move the log away to start from the checkpoint alone (its writes are then lost)") from None
            self.vectors.give(None)
            encoded = self.vectors.take()  # writes logged without their vectors: encoded again, not logged again
        flawed_scopes([SimpleNamespace(**{n: r["args"].get(n) for n in SCOPE_KEYS}, id=f"write {r['seq']}")
                            for _, r in replay],
                           f"tenant {self.name}: {self.wal.path}", "writes")
        log.info("tenant %s: %d memories (checkpoint seq %d, %d writes replayed, %d memories of them encoded again)",
                 self.name, len(self.memory.store), done, len(replay), len(encoded["ids"]) if encoded else 0)

    @property
    def lock(self) -> threading.RLock:
        return self.memory.lock

    def write(self, op: str, args: dict[str, Any], checkpoint: bool = True, field: str | None = None) -> Any:
        """Log (fsync), apply, then (``checkpoint``) :meth:`checkpoint_if_due`; returns the memory's answer.
        Raises what the memory raises. The HTTP service passes ``checkpoint=False`` and runs the checkpoint after
        the answer is sent, so the write that makes one due does not wait for it. ``field``: an add's data is
        checked before it is logged, in the lock the add then holds (ScopedMemory.check_add: with the scope's open
        turn, which another write could change between them), its errors naming the API's field (HTTP's
        ``messages``, MCP's ``text``); its messages as read are written (ScopedMemory.add's ``read``); the log keeps
        ``args``, which a replay reads again."""
        with self.lock:
            read = None
            if op == "add" and field is not None:
                read = self.memory.check_add(args["data"], field, MAX_ADD_ITEMS, **_scopes(args))
                check_unicode(args["data"], field)  # before the log, which would name its own field, data
            check_write(self.memory, op, args)
            seq = self.wal.append(op, args)
            try:
                with self._logging_vectors():
                    out = apply(self.memory, op, args, read)
            except BaseException as exc:
                self.vectors.take()  # a refused write made no memory: nothing to log
                self.wal.undo(seq)  # nor a record: its replay would fail again (and an unexpected error stop starts)
                if field is not None and isinstance(exc, (ValueError, TypeError)):  # an item of a mix: a TypeError
                    _name_field(exc, field)
                raise
            if field is not None and isinstance(out, Mapping):
                _name_notes(out.get("notes"), field)
            made = self.vectors.take()
            if made is not None:
                try:
                    self.wal.attach(seq, VECTORS, made)
                except LogWriteError:  # the write is logged and applied: answer it; its replay encodes again
                    log.warning("tenant %s: the vectors of write %d could not be logged; a replay encodes them",
                                self.name, seq)
        if checkpoint:
            self.checkpoint_if_due()
        return out

    @contextlib.contextmanager
    def _logging_vectors(self) -> Iterator[None]:
        """The store encodes through :attr:`vectors` for one write or the replay (under the lock), and through the
        shared encoder otherwise: the server batches the searches of every tenant whose store has the same one."""
        store = self.memory.store
        store.encoder = self.vectors
        try:
            yield
        finally:
            store.encoder = self.vectors.inner

    def checkpoint_if_due(self) -> None:
        """A checkpoint once ``checkpoint_every`` writes, and ``checkpoint_share`` times the memories held, are
        logged since the last, unless one is running. The share keeps a checkpoint's cost per write constant as
        the memory grows (a checkpoint writes every memory: at 100k, ~2.5 s of work that competes with searches,
        README "Served memory"), at the price of a longer log; the log holds each write's vectors, so replaying
        it costs store inserts, not the encoder (0.16 ms a write against 12 ms). Never
        raises: the writes are durable once logged, so a failed checkpoint is logged, not answered as an error
        (that would make clients retry writes that are in); the log keeps them and the next write tries again."""
        if self._due():
            try:
                self.checkpoint(wait=False)
            except Exception:  # noqa: BLE001 - the writes stand; the log keeps them until a checkpoint succeeds
                log.exception("tenant %s: checkpoint failed; its writes stay in the log", self.name)

    def checkpoint_in_background(self) -> threading.Thread | None:
        """:meth:`checkpoint_if_due` on a thread of its own, started only when one is due and none is running: for
        a caller that answers now and has no after-the-response hook (an MCP tool). Not a daemon thread, so an
        interpreter that exits waits for the checkpoint rather than leaving a half-written folder."""
        if not self._due() or self._checkpointing.locked():
            return None
        thread = threading.Thread(target=self.checkpoint_if_due, name=f"checkpoint-{self.name}")
        thread.start()
        return thread

    def _due(self) -> bool:
        with self.lock:
            return self.wal.seq - self._checkpointed >= max(self.checkpoint_every,
                                                            self.checkpoint_share * len(self.memory.store))

    def checkpoint(self, wait: bool = True) -> None:
        """Save the memory with the log's seq (atomically, one folder), then drop the log's records it holds.

        The memory is copied under its lock and written without it (ScopedMemory.snapshot): at 100k memories a
        save under the lock stopped every search of the tenant for 6 s. Writes go on meanwhile, logged after
        the copy's seq, so only the records up to it leave the log. One checkpoint at a time: ``wait=False``
        returns at once when one is running (it was due anyway)."""
        if not self._checkpointing.acquire(blocking=wait):
            return
        try:
            with self.lock:
                snap, seq = self.memory.snapshot(), self.wal.seq
            with atomic_dir(self.folder / CHECKPOINT, SEQ_FILE, ("seq",)) as tmp:
                self.memory.write_snapshot(tmp / "memory", snap)
                atomic_write_text(tmp / SEQ_FILE, json.dumps({"seq": seq, "tenant": self.name}))  # read_seq
            with self.lock:
                self.wal.drop_through(seq)
                self._checkpointed = seq
        finally:
            self._checkpointing.release()

    def close(self) -> None:
        self.checkpoint()  # not under the memory's lock: a write's checkpoint may be waiting for it
        self.release()

    def release(self) -> None:
        """Close the log and let the folder go, without a checkpoint (the log holds every write since the last):
        for a process that wrote a checkpoint itself and hands the folder to a server (sam_model.bench.serve)."""
        with self.lock:
            self.wal.close()
        let_go(self._held)


def check_write(memory: ScopedMemory, op: str, args: Mapping[str, Any]) -> None:
    """Refuse before logging what would be refused when applied and is cheap to tell (an unknown id). (Any other
    refusal is taken back from the log when the write fails: Tenant.write.)"""
    if op in ("update", "delete") and memory.get(args["memory_id"], **_scopes(args)) is None:
        raise KeyError(not_here(args["memory_id"], _scopes(args)))
    if op == "update" and (not isinstance(args["data"], str) or not args["data"].strip()):  # the caller's value, cut
        raise ValueError(f"data must be the memory's new text (a non-empty string), got {shown(args['data'])}")
    if op in ("add", "delete_all"):  # no scope (delete_all of every user is reset, no served write), a '/' in one
        # or a limits.scope_flaw (a delete_all's taken where its memories are held): an add refused only once logged
        # was replayed as logged (limits.as_logged) by a server that died before taking its record back, its
        # memories stored in a scope no call may name
        memory._scopes(*_scopes(args).values(), need="write", held=memory._held if op == "delete_all" else None)


def not_here(memory_id: Any, scopes: Mapping[str, Any]) -> str:
    """The 404's line of a call by id that reaches no memory: the id and the scopes as :func:`sam_model.limits.shown`
    shows a caller's value, cut at 60 characters (a path of 100,000 characters was answered whole, 100 KB of the
    caller's own bytes back in one line)."""
    within = ", ".join(f"{n}={shown(v)}" for n, v in scopes.items() if v is not None)
    return f"memory {shown(memory_id)} is not in this tenant's memory" + (f" within {within}" if within else "")


def _scopes(args: Mapping[str, Any]) -> dict[str, Any]:
    """The scopes a write by id was given (the caller's user, agent or run: the memory must be theirs)."""
    return {n: args.get(n) for n in ("user_id", "agent_id", "run_id")}


def apply(memory: ScopedMemory, op: str, args: dict[str, Any],
          read: tuple[list[Any], list[dict[str, Any]]] | None = None) -> Any:
    """One logged write, as the memory's method of the same name (an add with what its check ``read``)."""
    if op == "add":
        return memory.add(args["data"], user_id=args.get("user_id"), agent_id=args.get("agent_id"),
                          run_id=args.get("run_id"), metadata=args.get("metadata"), read=read)
    if op == "update":
        return memory.update(args["memory_id"], args["data"], **_scopes(args))
    if op == "delete":
        return memory.delete(args["memory_id"], **_scopes(args))
    if op == "delete_all":
        return memory.delete_all(user_id=args.get("user_id"), agent_id=args.get("agent_id"), run_id=args.get("run_id"))
    raise ValueError(f"unknown write {op!r} in the log")


class Caller(NamedTuple):
    """Who a request is: its key's tenant and the scopes the key fixes (none: the call names its own)."""
    tenant: Tenant
    scopes: Mapping[str, str]

    def within(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """A call's arguments (scopes, filters) with the key's fixed scopes filled in; FixedScopeError when they
        name another value (sam_model.serve.scopes.within: the rule ``sam-serve --stdio --user-id`` applies)."""
        return within(args, self.scopes, lambda _name: "this API key")


class Tenants:
    """The tenants a server knows: keys -> tenant -> its memory, opened at start."""

    def __init__(self, keys: Mapping[str, Access | str], data: str | os.PathLike, retriever: Any,
                 store_config: StoreConfig, checkpoint_every: int = 1000, fsync: bool = True,
                 checkpoint_share: float = CHECKPOINT_SHARE, reencode: bool = False):
        """``reencode``: the tenants' memories were written by another model than ``retriever``'s: encode them
        again with it on opening (else a tenant whose memories another model wrote is refused in one line)."""
        # a bare tenant name: a key of the whole tenant (as read_keys read a keys file before keys fixed scopes)
        self.keys = {k: v if isinstance(v, Access) else Access(v) for k, v in keys.items()}
        self.data, self.reencode = Path(data), reencode
        self.retriever, self.store_config = retriever, store_config
        # The tenants share this encoder: a text-vector cache between them would tell one tenant, by how fast its
        # search returns, that another sent the same text. So the served encoder caches nothing.
        limit = getattr(getattr(retriever, "encoder", None), "limit_text_cache", None)
        if limit is not None:
            limit(0)
        self.tenants: dict[str, Tenant] = {}
        try:
            for name in sorted({a.tenant for a in self.keys.values()}):
                self.tenants[name] = self._open(name, checkpoint_every, fsync, checkpoint_share)
        except BaseException:  # a tenant that cannot be opened: the others' folders are let go, not held
            for t in self.tenants.values():
                t.release()
            raise

    def _config_for(self, name: str) -> StoreConfig:
        """A Qdrant index gets one collection per tenant (``<collection or sam>_<tenant>``)."""
        cfg = StoreConfig.from_dict(self.store_config.to_dict())
        if cfg.index.get("kind") == "qdrant":
            cfg.index = {**cfg.index, "collection": f"{cfg.index.get('collection') or 'sam'}_{name}"}
        return cfg

    def _open(self, name: str, checkpoint_every: int, fsync: bool, checkpoint_share: float) -> Tenant:
        return Tenant(name, self.data / name, lambda: ScopedMemory(self.retriever, self._config_for(name)),
                      lambda f: ScopedMemory.load(f, self.retriever, reencode=self.reencode), checkpoint_every, fsync,
                      checkpoint_share, reencode=self.reencode)

    def of_headers(self, authorization: str | None, x_api_key: str | None) -> Caller | None:
        """The caller (tenant, fixed scopes) of a request's ``X-API-Key``, else of its ``Authorization: Bearer <key>``, whose scheme is
        any case (RFC 9110: ``bearer <key>``, as some clients send it, was a 401)."""
        scheme, _, token = (authorization or "").partition(" ")
        return self.of_key(x_api_key or (token.strip(" ") if scheme.lower() == "bearer" else None))

    def of_key(self, key: str | None) -> Caller | None:
        """The tenant whose key this is, with the scopes the key fixes (constant-time comparisons), else None."""
        if not key:
            return None
        found = None
        for k, access in self.keys.items():
            if hmac.compare_digest(k.encode(), key.encode()):
                found = access
        return None if found is None else Caller(self.tenants[found.tenant], found.scopes)

    def close(self) -> None:
        """Checkpoint and close every tenant; one whose checkpoint fails (a full disk) does not keep the others'
        logs open and their folders held: each is closed, then the first error is raised (nothing is lost, its
        log holds every write since its last checkpoint)."""
        first: BaseException | None = None
        for t in self.tenants.values():
            try:
                t.close()
            except Exception as err:  # noqa: BLE001 - raised below, after every tenant is closed
                first = first or err
                t.release()
        if first is not None:
            raise first


__all__ = ["Access", "Caller", "Tenant", "Tenants", "apply", "check_checkpoint_share", "not_here", "read_keys",
           "warn_if_shared"]


def _named(text: str, field: str) -> str:
    """``text`` with ScopedMemory.add's argument ``data`` that opens it (``data[0:4]: ...``, ``data: ...``) named
    as the API's ``field``, else as it is."""
    return field + text[4:] if text.startswith("data") and text[4:5] in (",", "[", ":", ".") else text


def _name_notes(notes: Any, field: str) -> None:
    """An add's notes (its start read once as the scope's last add sent again, sam_model.memory.resent; an open
    turn closed at its cap, live.over) are written by the add, which names its own argument: over HTTP they said
    ``data[0:4]: the scope's last add ...`` where the body's field is ``messages`` (MCP's ``text``). They name the
    caller's field, in place."""
    for n in notes if isinstance(notes, list) else ():
        if isinstance(n, dict) and isinstance(n.get("reason"), str):
            n["reason"] = _named(n["reason"], field)


def _name_field(exc: ValueError | TypeError, field: str) -> None:
    """An agent's session lines are read when they are added (with the scope's open turn, ScopedMemory.add), not by
    the check that names the API's field, so a bad line's error named ScopedMemory.add's argument, ``data, entry 0,
    content block 0: tool call without a name``, a field no HTTP or MCP caller sends. It names theirs
    (``messages, entry 0, ...``), in place: the exception keeps its type, which says what status it answers."""
    if len(exc.args) == 1 and (named := _named(str(exc), field)) != str(exc):
        exc.args = (named,)
