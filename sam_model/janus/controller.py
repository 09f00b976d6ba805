"""JanusController: deploy a candidate memory unless a triggered comparison says it is worse.

Per update t = 1, 2, ...:

1. the updater proposes M̂_t from the deployed M_{t−1} and the latest tasks;
2. the gate (MMT or a baseline) decides whether to compare;
3. not triggered → deploy M̂_t; triggered → evaluate M_{t−1} and M̂_t on the hybrid set E_t and
   deploy the better one (a tie keeps the old: a change must earn its deployment).

Everything needed to audit or resume a run lives in ``workdir``::

    manifest.jsonl        one JSON line per decision (t, cos, triggered, set sizes, scores, accepted, ...)
    state.json            the last completed t, deployed checkpoint, gate and evaluation-set state
    memories/             t000000.mem (M_0), every compared memory, the deployed one
    tasks/t000012.npy     task embeddings of batch t (so a resume re-draws identical sets)

Writes are atomic and ordered (checkpoints, then state.json, then the manifest line; each file through
sam_model.io.atomic_path, so a kill mid-write leaves the previous file and its staging folder is removed
by the next write or resume), so after a crash ``run(..., resume=True)`` continues from the last completed step and makes the same
decisions as an uninterrupted run — provided the updater and evaluator are deterministic
functions of their inputs (keep optimiser state and seeds inside the memory or derive them from
the tasks).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sam_model.io import (
    NPY_LOCK,
    STAGING_RE,
    SAMFileError,
    atomic_path,
    atomic_write_text,
    clean_stale,
    lock_file,
    read_json,
    safe_name,
)
from sam_model.janus.evalset import HybridEvalSet
from sam_model.janus.protocols import Evaluator, Gate, Memory, MemoryFeatures, Updater

STATE_VERSION = 1


def _load_npy(path: Path) -> np.ndarray:
    """A task-embedding file, read under NPY_LOCK (numpy parses its header with ast: sam_model.io.NPY_LOCK)."""
    with NPY_LOCK:
        return np.load(path, allow_pickle=False)


@dataclass
class StepDecision:
    """What Janus decided at step t (one manifest line): compared or not, deployed or not. Scores are the
    fraction of E_t solved (None when not triggered)."""

    t: int
    gate: str
    cos: float | None
    triggered: bool
    accepted: bool
    noop: bool = False
    n_tasks: int = 0
    sizes: dict[str, int] = field(default_factory=dict)
    score_old: float | None = None
    score_new: float | None = None
    flips: int | None = None
    old_ckpt: str | None = None
    new_ckpt: str | None = None
    deployed: str = ""
    seconds: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


Batch = tuple[Sequence[Any], Any]  # (tasks, feedback)


def _as_correct(c: np.ndarray, who: str) -> np.ndarray:
    """An evaluator's per-task results as booleans: bools, or numbers that are 0 or 1. Anything else (NaN, a
    probability of 0.01, the string "no") read as True by ``astype(bool)`` and scored every candidate correct."""
    if c.dtype == bool:
        return c
    if c.dtype.kind in "iuf" and np.all((c == 0) | (c == 1)):
        return c.astype(bool)
    raise ValueError(f"{who} must return one boolean (or 0/1) per task, got {c.dtype} values such as "
                     f"{c[~((c == 0) | (c == 1))][:3].tolist() if c.dtype.kind in 'iuf' else c[:3].tolist()}")


class StepSavedError(RuntimeError):
    """A step was decided and its state saved, but what came after failed (its manifest line, a disk error): the
    step must not be taken back or stepped again; resume the run (``run(..., resume=True)``), which writes the
    manifest line from state.json."""


class JanusController:
    """Wraps an updater; see the module docstring. Call ``run`` (or ``start`` then ``step``)."""

    LOCK = ".janus.lock"  # held (flock) while a controller runs a step: one controller per workdir
    OWN_CHECKPOINT = re.compile(r"^t\d{6}(\.cand)?\.mem$")  # the checkpoint names this controller writes

    def __init__(self, updater: Updater, evaluator: Evaluator, features: MemoryFeatures | None, gate: Gate,
                 evalset: HybridEvalSet, workdir: str | os.PathLike, keep_all: bool = False,
                 holdout_latest: bool = False):
        for obj, proto, what in ((updater, Updater, "updater (needs .propose(memory, tasks, feedback))"),
                                 (evaluator, Evaluator, "evaluator (needs .correct(memory, tasks))"),
                                 (gate, Gate, "gate (needs check/commit/state_dict/load_state_dict)")):
            if not isinstance(obj, proto):
                raise TypeError(f"{type(obj).__name__} is not a Janus {what}")
        if gate.needs_encoding and features is None:
            raise TypeError(f"gate {gate.name!r} needs the memory's features φ; pass features=")
        self.updater, self.evaluator, self.features = updater, evaluator, features
        self.gate, self.evalset = gate, evalset
        self.workdir = Path(workdir)
        self.keep_all = keep_all  # keep every deployed memory, not only M_0 and compared ones
        # Judge M̂_t on tasks it was not fitted on: the latest batch joins the evaluation pools only
        # after the decision. Off by default: an updater that cannot generalise beyond its batch
        # (a fact list) could then never win a comparison.
        self.holdout_latest = holdout_latest
        self.manifest_path = self.workdir / "manifest.jsonl"
        self.state_path = self.workdir / "state.json"
        self.t = 0
        self.memory: Memory | None = None
        self.deployed = ""  # checkpoint path of the deployed memory, relative to workdir
        self.kept: set[str] = set()  # checkpoints that must never be deleted
        self.comparisons = 0
        self._phi: np.ndarray | None = None  # φ(M_{t−1}), cached
        self._saved_t = 0  # the last t whose state.json was written (a step that failed before it is undone)
        self._needs_resume = False  # a step saved without its manifest line (StepSavedError)
        self._held = 0  # nesting of _holding() (run() holds the workdir across its steps)
        self._lock: contextlib.ExitStack | None = None

    @contextlib.contextmanager
    def _holding(self) -> Iterator[None]:
        """Hold the workdir for this controller (an exclusive, non-blocking flock): a second controller, in this
        process or another, that starts, resumes or steps on the same workdir is refused instead of interleaving
        its steps with this one's (the manifest then read t = 1, 1, 2, 2, ... and one M_0 overwrote the other)."""
        if self._held == 0:
            if self.workdir.exists() and not self.workdir.is_dir():
                raise SAMFileError(f"workdir {self.workdir} is a file, not a folder: give the Janus run a folder of "
                                   "its own (nothing was written)")
            stack = contextlib.ExitStack()
            try:
                held = stack.enter_context(lock_file(self.workdir / self.LOCK, blocking=False))
            except OSError as exc:  # a file where a parent folder should be, no permission, ...
                raise SAMFileError(f"workdir {self.workdir} cannot be created or written: {exc.strerror or exc} "
                                   f"({exc.filename or self.workdir}); give the Janus run a folder it can write "
                                   "(nothing was written)") from None
            if not held:
                stack.close()
                raise SAMFileError(f"{self.workdir} is in use by another Janus controller (its lock {self.LOCK} is "
                                   "held); wait for it, or give this run its own workdir")
            self._lock = stack
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if self._held == 0 and self._lock is not None:
                self._lock.close()  # drops the lock
                self._lock = None

    # -- paths and files ----------------------------------------------------------------------------------
    def _ckpt(self, memory: Memory, name: str) -> str:
        rel = f"memories/{name}.mem"
        with atomic_path(self.workdir / rel) as tmp:
            memory.save(tmp)
        return rel

    def _phi_of(self, memory: Memory) -> np.ndarray | None:
        if not self.gate.needs_encoding:
            return None
        v = np.asarray(self.features(memory), dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(v)):
            raise ValueError("the memory features φ returned non-finite values")
        if self._phi is not None and v.shape != self._phi.shape:  # z = φ(M̂) − φ(M) broadcast a size-1 φ silently
            raise ValueError(f"the memory features φ changed size: {v.shape[0]} values, the deployed memory's "
                             f"{self._phi.shape[0]}; φ must return vectors of one fixed size")
        return v

    def _write_state(self, decision: StepDecision | None) -> None:
        state = {"version": STATE_VERSION, "t": self.t, "deployed": self.deployed, "kept": sorted(self.kept),
                 "comparisons": self.comparisons, "gate": self.gate.state_dict(),
                 "evalset": self.evalset.state_dict(),
                 "decision": None if decision is None else asdict(decision)}
        atomic_write_text(self.state_path, json.dumps(state))
        self._saved_t = self.t

    def _append_manifest(self, decision: StepDecision) -> None:
        with open(self.manifest_path, "a", encoding="utf-8") as fh:
            fh.write(decision.to_json() + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    # -- a run ---------------------------------------------------------------------------------------------
    def start(self, memory: Memory, history: Sequence[Any] = ()) -> None:
        """Begin a fresh run in an empty workdir with M_0 = ``memory``.

        ``history``: tasks M_0 already learned (its training set). They join the coverage and
        boundary pools as seen tasks — without them the first comparisons could not notice that a
        candidate forgot what M_0 knew — but not the fresh set.
        """
        if not isinstance(memory, Memory):
            raise TypeError(f"{type(memory).__name__} is not a Janus Memory (needs save(path) and load(path))")
        if self.state_path.exists():
            raise SAMFileError(f"{self.workdir} already holds a Janus run (state.json); resume it with "
                               "resume=True or choose an empty workdir")
        others = sorted(e.name for e in self.workdir.iterdir() if e.name != self.LOCK and not STAGING_RE.match(
            e.name)) if self.workdir.is_dir() else []
        if others:  # a fresh run writes manifest.jsonl, memories/ and tasks/: never over someone's files
            raise SAMFileError(f"{self.workdir} holds files of its own ({', '.join(others[:3])}) and no Janus run: "
                               "choose an empty or new workdir (nothing was written)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.manifest_path.write_text("")
        self._add_history(list(history), None)
        self.t, self.memory, self.comparisons = 0, memory, 0
        self.deployed = self._ckpt(memory, "t000000")
        self.kept = {self.deployed}
        self._phi = self._phi_of(memory)
        self._write_state(None)

    def _add_history(self, history: list[Any], emb: np.ndarray | None) -> None:
        if len(self.evalset):
            raise RuntimeError("the evaluation set already holds tasks; give a fresh HybridEvalSet to a new run")
        if not history:
            return
        computed = emb is None
        emb = self.evalset.add(history, emb)
        if computed:
            with atomic_path(self.workdir / "tasks" / "t000000.npy") as tmp, open(tmp, "wb") as fh:
                np.save(fh, emb)
        self.evalset.fresh_start = len(self.evalset)

    def _add_batch(self, t: int, tasks: list[Any]) -> None:
        emb = self.evalset.add(tasks)
        with atomic_path(self.workdir / "tasks" / f"t{t:06d}.npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, emb)

    def step(self, tasks: Sequence[Any], feedback: Any = None) -> StepDecision:
        """One update: propose, maybe compare, deploy; then checkpoint, save state, log the decision.

        A step that raises before its state is saved (an evaluator's timeout mid-comparison, a full disk at a
        checkpoint) is taken back whole: the evaluation set (the batch, the boundary queue, the random draws),
        the gate, the counters and this step's files are as before it, so the agent can step the same batch
        again and the workdir still resumes (before, a comparison that failed after the batch joined the pools
        left the batch in twice on a retry, and a resume refused the run). One that fails after (its manifest
        line) raises StepSavedError: decided and saved, not to be stepped again; resume the run."""
        with self._holding():
            before = (self.t, self.memory, self._phi, self.deployed, set(self.kept), self.comparisons,
                      len(self.evalset), copy.deepcopy(self.evalset.state_dict()),
                      copy.deepcopy(self.gate.state_dict()))
            try:
                return self._step(tasks, feedback)
            except BaseException:
                if self._saved_t <= before[0]:  # this step's state.json was never written: undo it
                    self._take_back(before)
                raise

    def _take_back(self, before: tuple) -> None:
        t, self.memory, self._phi, self.deployed, self.kept, self.comparisons, n, evalset, gate = before
        self.t = t
        self.evalset.truncate(n)
        self.evalset.load_state_dict(evalset)
        self.gate.load_state_dict(gate)
        named = self.kept | {self.deployed}
        for rel in (f"tasks/t{t + 1:06d}.npy", f"memories/t{t + 1:06d}.cand.mem", f"memories/t{t + 1:06d}.mem"):
            if rel not in named:
                (self.workdir / rel).unlink(missing_ok=True)

    def _step(self, tasks: Sequence[Any], feedback: Any = None) -> StepDecision:
        if self.memory is None:
            raise RuntimeError("call start(memory) (or run(...)) before step()")
        if self._needs_resume:
            raise RuntimeError(f"step {self.t}'s manifest line was not written (StepSavedError): resume the run in "
                               f"{self.workdir} (run(..., resume=True)) before the next step")
        t0 = time.perf_counter()
        t = self.t + 1
        tasks = list(tasks)
        old, old_ckpt = self.memory, self.deployed
        cand = self.updater.propose(old, tasks, feedback)
        if not isinstance(cand, Memory):
            raise TypeError(f"updater returned {type(cand).__name__}, not a Memory")
        phi_new = self._phi_of(cand)
        # the batch joins the evaluation pools only once the update exists: an updater that raised (an LLM
        # timeout) or a φ that was not finite, retried, then added the batch twice and the run no longer resumed
        if not self.holdout_latest:
            self._add_batch(t, tasks)
        z = None if phi_new is None else phi_new - self._phi
        noop = bool(z is not None and getattr(self.gate, "is_noop", lambda _: False)(z))
        fire, cos = self.gate.check(t, z)
        d = StepDecision(t=t, gate=self.gate.name, cos=cos, triggered=bool(fire), accepted=True, noop=noop,
                     n_tasks=len(tasks))
        if fire:
            sel = self.evalset.build()
            eval_tasks = self.evalset.select(sel)
            c_old, c_new = self._correct_pair(old, cand, eval_tasks)
            d.score_old = float(c_old.mean()) if len(c_old) else 0.0
            d.score_new = float(c_new.mean()) if len(c_new) else 0.0
            d.accepted = d.score_new > d.score_old  # a tie keeps the old memory
            d.flips = self.evalset.record(sel.indices, c_old, c_new)
            d.sizes = sel.sizes()
            d.old_ckpt, d.new_ckpt = old_ckpt, self._ckpt(cand, f"t{t:06d}.cand")
            self.kept |= {old_ckpt, d.new_ckpt}
            self.comparisons += 1
        if self.holdout_latest:
            self._add_batch(t, tasks)
        self.gate.commit(t, z, d.accepted)
        if d.accepted:
            self.memory, self._phi = cand, phi_new
            self.deployed = d.new_ckpt if fire else self._ckpt(cand, f"t{t:06d}")
            if self.keep_all:
                self.kept.add(self.deployed)
        d.deployed = self.deployed
        d.seconds = round(time.perf_counter() - t0, 4)
        self.t = t
        self._write_state(d)
        try:
            self._append_manifest(d)
        except OSError as err:  # decided and saved: a retry would count the batch twice and leave t out
            self._needs_resume = True
            raise StepSavedError(f"step {t} was decided and saved in {self.state_path}, but its line in "
                                 f"{self.manifest_path} was not written ({err}); do not step this batch again: "
                                 "resume the run (run(..., resume=True)), which writes the line") from err
        if old_ckpt != self.deployed and old_ckpt not in self.kept:
            (self.workdir / old_ckpt).unlink(missing_ok=True)
        return d

    def _correct(self, memory: Memory, tasks: list[Any]) -> np.ndarray:
        c = np.asarray(self.evaluator.correct(memory, tasks)).reshape(-1)
        if len(c) != len(tasks):
            raise ValueError(f"evaluator returned {len(c)} results for {len(tasks)} tasks")
        return _as_correct(c, "evaluator.correct")

    def _correct_pair(self, old: Memory, cand: Memory, tasks: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Both memories on E_t: in one pass when the evaluator has ``correct_many`` (on GPU, batched)."""
        many = getattr(self.evaluator, "correct_many", None)
        if many is None:
            return self._correct(old, tasks), self._correct(cand, tasks)
        got = [np.asarray(c).reshape(-1) for c in many([old, cand], tasks)]
        if len(got) != 2 or any(len(c) != len(tasks) for c in got):
            raise ValueError(f"evaluator.correct_many returned {[len(c) for c in got]} results for 2 memories and "
                             f"{len(tasks)} tasks")
        return _as_correct(got[0], "evaluator.correct_many"), _as_correct(got[1], "evaluator.correct_many")

    def run(self, stream: Iterable[Batch], memory: Memory, resume: bool = False, progress: bool = False,
            on_step: Callable[[JanusController, StepDecision], None] | None = None,
            history: Sequence[Any] = ()) -> Memory:
        """Feed every (tasks, feedback) batch of ``stream`` through ``step``; returns the deployed memory.

        With ``resume=True`` and an existing run in ``workdir``, ``memory`` only supplies the memory
        type (its ``load``); the first t batches of ``stream`` (t = steps already done) are re-read, not
        re-run — the stream (and ``history``, see ``start``) must be the same.
        """
        it: Iterator[Batch] = iter(stream)
        with self._holding():
            return self._run(it, memory, resume, progress, on_step, history)

    def _run(self, it: Iterator[Batch], memory: Memory, resume: bool, progress: bool,
             on_step: Callable[[JanusController, StepDecision], None] | None, history: Sequence[Any]) -> Memory:
        if resume and self.state_path.exists():
            self.restore(type(memory), it, history)
        else:
            self.start(memory, history)
        from sam_model.progress import progress_bar

        with progress_bar(desc=f"janus[{self.gate.name}]", initial=self.t, disable=not progress, unit="step") as bar:
            for tasks, feedback in it:
                d = self.step(tasks, feedback)
                bar.update(1)
                bar.set_postfix(comparisons=self.comparisons, refresh=False)  # shown at the next redraw
                if on_step is not None:
                    on_step(self, d)
        return self.memory

    # -- resume --------------------------------------------------------------------------------------------
    def read_manifest(self) -> list[StepDecision]:
        """The decisions so far; a torn last line (crash mid-append) is dropped, anything else is an error."""
        if not self.manifest_path.exists():
            return []
        lines = self.manifest_path.read_text(encoding="utf-8").split("\n")
        out: list[StepDecision] = []
        for no, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                out.append(StepDecision(**json.loads(line)))
            except (json.JSONDecodeError, TypeError) as exc:
                if no == len(lines):  # a complete file ends with "\n", so this line lost its end in a crash
                    break
                raise SAMFileError(f"{self.manifest_path}:{no}: not a Janus decision ({exc}); the manifest is "
                                   "corrupt — restore it or start a new workdir") from None
        return out

    def restore(self, memory_type: type, stream: Iterator[Batch], history: Sequence[Any] = ()) -> None:
        """Reload the last completed step; re-read (not re-run) its batches from ``stream``."""
        state = read_json(self.state_path, "Janus run state", "the run cannot be resumed; start a new workdir")
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            got = state.get("version") if isinstance(state, dict) else type(state).__name__
            raise SAMFileError(f"{self.state_path} has version {got}, expected {STATE_VERSION}")
        for key, ok, want in (("t", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                               "an integer >= 0"),
                              ("comparisons", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                               "an integer >= 0"),
                              ("deployed", lambda v: isinstance(v, str), "a checkpoint path"),
                              ("kept", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
                               "a list of checkpoint paths"),
                              ("gate", lambda v: isinstance(v, dict), "an object"),
                              ("evalset", lambda v: isinstance(v, dict), "an object")):
            if key not in state or not ok(state[key]):
                raise SAMFileError(f"{self.state_path}: field '{key}' must be {want}, got "
                                   f"{json.dumps(state.get(key), default=repr)[:60]}; the run cannot be resumed")
        self.t = self._saved_t = state["t"]
        decisions = self.read_manifest()
        last = decisions[-1].t if decisions else 0
        if last == self.t - 1 and state["decision"] is not None:
            decisions.append(StepDecision(**state["decision"]))  # crashed between state.json and the manifest
        elif last != self.t:
            raise SAMFileError(f"{self.manifest_path} ends at t={last} but {self.state_path} is at t={self.t}; "
                               "the run directory is inconsistent")
        atomic_write_text(self.manifest_path, "".join(d.to_json() + "\n" for d in decisions))
        if history:
            path = self.workdir / "tasks" / "t000000.npy"
            if not path.exists():
                raise SAMFileError(f"{path} is missing: the run in {self.workdir} started without history; "
                                   "resume it without history")
            self._add_history(list(history), _load_npy(path))
        for t in range(1, self.t + 1):
            try:
                tasks, _ = next(stream)
            except StopIteration:
                raise SAMFileError(f"the stream ended after {t - 1} batches but the run in {self.workdir} "
                                   f"completed {self.t}; resume with the same stream") from None
            path = self.workdir / "tasks" / f"t{t:06d}.npy"
            if not path.exists():
                raise SAMFileError(f"{path} is missing; the run in {self.workdir} cannot be resumed")
            self.evalset.add(list(tasks), _load_npy(path))
        try:
            self.evalset.load_state_dict(state["evalset"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SAMFileError(f"{self.state_path}: the evaluation set's state is damaged ({exc}); the run cannot be "
                               "resumed") from None
        try:
            self.gate.load_state_dict(state["gate"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SAMFileError(self._gate_unloadable(state["gate"], exc)) from None
        self.deployed, self.kept = state["deployed"], set(state["kept"])
        for rel in (self.deployed, *self.kept):  # state.json names checkpoints inside workdir/memories only
            head, _, name = rel.partition("/") if isinstance(rel, str) else ("", "", rel)
            safe_name(self.workdir / "memories", name if head == "memories" else rel,
                      f"{self.state_path}: field 'deployed'/'kept'", "the run cannot be resumed; start a new workdir")
        self.comparisons = state["comparisons"]
        if not (self.workdir / self.deployed).exists():
            raise SAMFileError(f"{self.workdir / self.deployed} (the deployed memory {self.state_path} names) is "
                               "missing; the run cannot be resumed")
        self.memory = memory_type.load(self.workdir / self.deployed)
        self._phi = self._phi_of(self.memory)
        self._clean_after_crash()

    def _gate_unloadable(self, saved: dict, exc: Exception) -> str:
        """Why the run's saved gate state did not load into this controller's gate. Another gate than the run's
        (``always`` for a run started with ``mmt``) is a resume with other settings, not a damaged workdir: it was
        reported as damaged, which invites deleting a sound run."""
        name = saved.get("name")
        if isinstance(name, str) and name != self.gate.name:
            spec = name.removesuffix("q") if name.startswith("mmt") else name  # make_gate("mmtq") needs arguments;
            # the trigger takes budget mode and its settings from the saved state either way
            return (f"{self.state_path}: the run was started with gate {name!r}, not {self.gate.name!r}; resume with "
                    f"make_gate({spec!r}) (the run keeps its own settings), or start a new workdir for the new gate")
        return f"{self.state_path}: the gate's state is damaged ({exc}); the run cannot be resumed"

    def _clean_after_crash(self) -> None:
        """Remove what a killed step left: staging folders, and a checkpoint it deployed past but had not
        yet deleted (every checkpoint state.json does not name)."""
        for folder in (self.workdir, self.workdir / "memories", self.workdir / "tasks"):
            clean_stale(folder, wait=True)
        named = self.kept | {self.deployed}
        for ckpt in (self.workdir / "memories").glob("*.mem"):  # only the names this controller writes
            if self.OWN_CHECKPOINT.match(ckpt.name) and f"memories/{ckpt.name}" not in named:
                ckpt.unlink(missing_ok=True)
