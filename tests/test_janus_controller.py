"""JanusController with fake memories whose quality is a number: decisions, checkpoints, resume."""

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pytest

from sam_model.io import SAMFileError
from sam_model.janus import HybridEvalSet, JanusController, make_gate


@dataclass(frozen=True)
class NumMemory:
    """Solves every task easier than its quality; ``vec`` is what φ sees."""

    quality: float
    vec: tuple = (0.0, 0.0)

    def save(self, path):
        Path(path).write_text(json.dumps(asdict(self)))

    @classmethod
    def load(cls, path):
        d = json.loads(Path(path).read_text())
        return cls(d["quality"], tuple(d["vec"]))


class ScriptUpdater:
    """The feedback of each batch scripts the change: (Δquality, Δvec)."""

    def propose(self, memory, tasks, feedback):
        dq, dv = feedback
        return NumMemory(memory.quality + dq, tuple(a + b for a, b in zip(memory.vec, dv)))


class CountingEvaluator:
    def __init__(self):
        self.calls = 0

    def correct(self, memory, tasks):
        self.calls += 1
        return np.array([d < memory.quality for d in tasks], dtype=bool)


def phi(memory):
    return np.array(memory.vec)


def task_emb(tasks):
    return np.array([[d, 1.0] for d in tasks], dtype=np.float32)


def make(workdir, gate="always", evaluator=None, **evalset):
    sizes = {"coverage": 3, "boundary": 4, "fresh": 3, "seed": 0, **evalset}
    return JanusController(ScriptUpdater(), evaluator or CountingEvaluator(), phi, make_gate(gate),
                           HybridEvalSet(task_emb, **sizes), workdir)


def random_stream(n=30, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-3, 3, size=5).round(3).tolist(),
             (round(float(rng.normal()), 3), tuple(rng.normal(size=2).round(3).tolist()))) for _ in range(n)]


TASKS = [-2.0, -1.0, 0.0, 1.0, 2.0]


def test_accept_reject_and_tie(tmp_path):
    ctrl = make(tmp_path, "always", fresh=5)
    stream = [(TASKS, (1.5, (1, 0))), (TASKS, (-1.5, (1, 0))), (TASKS, (-0.5, (1, 0)))]
    memory = ctrl.run(stream, NumMemory(0.5))
    d1, d2, d3 = ctrl.read_manifest()
    assert d1.triggered and d1.accepted and d1.score_new > d1.score_old  # 0.5 → 2.0 solves more
    assert d2.triggered and not d2.accepted and d2.score_new < d2.score_old  # 2.0 → 0.5 rejected
    assert d3.score_new == d3.score_old and not d3.accepted  # 2.0 → 1.5 solves the same: a tie keeps the old
    assert memory == NumMemory(2.0, (1, 0))
    assert ctrl.comparisons == 3


def test_no_gate_accepts_everything_without_evaluating(tmp_path):
    ev = CountingEvaluator()
    ctrl = make(tmp_path, "none", evaluator=ev)
    memory = ctrl.run([(TASKS, (-1.0, (0, 1)))] * 3, NumMemory(0.0))
    assert memory.quality == -3.0 and ev.calls == 0 and ctrl.comparisons == 0
    assert all(d.accepted and not d.triggered for d in ctrl.read_manifest())


def test_mmt_compares_only_when_the_direction_turns(tmp_path):
    ctrl = make(tmp_path, "mmt(0.5,0.0)")
    stream = [(TASKS, (1.0, (1, 0))), (TASKS, (1.0, (1, 0.2))), (TASKS, (-2.0, (-1, 0))), (TASKS, (0.0, (0, 0)))]
    ctrl.run(stream, NumMemory(-2.5))
    d = ctrl.read_manifest()
    assert [x.triggered for x in d] == [True, False, True, False]
    assert d[0].cos is None and d[1].cos > 0 and d[2].cos < 0
    assert [x.accepted for x in d] == [True, True, False, True]
    assert d[3].noop and d[3].cos is None
    assert ctrl.memory.quality == -0.5


def test_manifest_and_checkpoints(tmp_path):
    ctrl = make(tmp_path, "periodic(2)")
    stream = [(TASKS, (1.0, (1, 0)))] * 5  # every step solves one more task: all accepted
    ctrl.run(stream, NumMemory(-2.5))
    lines = (tmp_path / "manifest.jsonl").read_text().splitlines()
    assert len(lines) == 5
    rec = json.loads(lines[1])
    for key in ("t", "cos", "triggered", "sizes", "score_old", "score_new", "accepted"):
        assert key in rec
    assert rec["t"] == 2 and rec["triggered"] and not json.loads(lines[0])["triggered"]
    parts = sum(rec["sizes"][k] for k in ("coverage", "boundary", "fresh"))
    assert 0 < rec["sizes"]["total"] <= parts
    for d in ctrl.read_manifest():
        if d.triggered:  # both compared memories are on disk and load back
            assert NumMemory.load(tmp_path / d.old_ckpt).quality == -2.5 + (d.t - 1)
            assert NumMemory.load(tmp_path / d.new_ckpt).quality == -2.5 + d.t
    files = sorted(p.name for p in (tmp_path / "memories").iterdir())
    # M_0, the memories compared at t=2 and t=4 (old t1 and t3 transient ones are kept as compared), the deployed t5
    assert files == ["t000000.mem", "t000001.mem", "t000002.cand.mem", "t000003.mem", "t000004.cand.mem",
                     "t000005.mem"]
    assert not list(tmp_path.glob("**/*.tmp"))


def test_transient_checkpoints_are_removed(tmp_path):
    ctrl = make(tmp_path, "none")
    ctrl.run([(TASKS, (0.5, (1, 0)))] * 4, NumMemory(0.0))
    assert sorted(p.name for p in (tmp_path / "memories").iterdir()) == ["t000000.mem", "t000004.mem"]


def _strip(decisions):
    return [{k: v for k, v in asdict(d).items() if k != "seconds"} for d in decisions]


@pytest.mark.parametrize("gate", ["mmt(0.6,0.2)", "random(0.4,3)", "always"])
def test_resume_makes_the_same_decisions(tmp_path, gate):
    stream = random_stream()
    full = make(tmp_path / "full", gate)
    final = full.run(stream, NumMemory(0.0))
    part = make(tmp_path / "part", gate)
    part.run(stream[:13], NumMemory(0.0))
    resumed = make(tmp_path / "part", gate)  # a new process: fresh gate and evaluation set
    final2 = resumed.run(stream, NumMemory(0.0), resume=True)
    assert _strip(resumed.read_manifest()) == _strip(full.read_manifest())
    assert final2 == final and resumed.comparisons == full.comparisons
    assert 0 < full.comparisons  # the run compared something, so the test exercises the evaluation set


def test_history_joins_coverage_not_fresh_and_resumes(tmp_path):
    stream, history = random_stream(10, seed=2), [-2.5, -1.5, 0.5, 1.5, 2.5, 2.9]
    full = make(tmp_path / "full", "always", coverage=20, boundary=0, fresh=2)
    full.run(stream, NumMemory(0.0), history=history)
    assert full.evalset.tasks[:6] == history
    first = full.read_manifest()[0]
    assert first.sizes["coverage"] == 11 and first.sizes["fresh"] == 2  # 6 history + 5 new; fresh: new only
    part = make(tmp_path / "part", "always", coverage=20, boundary=0, fresh=2)
    part.run(stream[:4], NumMemory(0.0), history=history)
    resumed = make(tmp_path / "part", "always", coverage=20, boundary=0, fresh=2)
    resumed.run(stream, NumMemory(0.0), resume=True, history=history)
    assert _strip(resumed.read_manifest()) == _strip(full.read_manifest())
    with pytest.raises(ValueError, match="same task stream"):
        make(tmp_path / "part", "always", coverage=20, boundary=0, fresh=2).run(stream, NumMemory(0.0), resume=True)


def test_resume_after_crash_between_state_and_manifest(tmp_path):
    stream = random_stream(12, seed=1)
    full = make(tmp_path / "full", "mmt(0.6,0.2)")
    full.run(stream, NumMemory(0.0))
    part = make(tmp_path / "part", "mmt(0.6,0.2)")
    part.run(stream[:6], NumMemory(0.0))
    manifest = tmp_path / "part" / "manifest.jsonl"
    lines = manifest.read_text().splitlines(keepends=True)
    manifest.write_text("".join(lines[:-1]) + lines[-1][:17])  # last line torn mid-write
    resumed = make(tmp_path / "part", "mmt(0.6,0.2)")
    resumed.run(stream, NumMemory(0.0), resume=True)
    assert _strip(resumed.read_manifest()) == _strip(full.read_manifest())


def test_refuses_to_overwrite_and_reports_short_stream(tmp_path):
    stream = random_stream(6)
    make(tmp_path, "always").run(stream, NumMemory(0.0))
    with pytest.raises(SAMFileError, match="already holds a Janus run"):
        make(tmp_path, "always").run(stream, NumMemory(0.0))
    with pytest.raises(SAMFileError, match="same stream"):
        make(tmp_path, "always").run(stream[:3], NumMemory(0.0), resume=True)


def test_corrupt_manifest_line_is_an_error(tmp_path):
    stream = random_stream(4)
    make(tmp_path, "always").run(stream, NumMemory(0.0))
    manifest = tmp_path / "manifest.jsonl"
    lines = manifest.read_text().splitlines(keepends=True)
    manifest.write_text(lines[0] + "{not json\n" + "".join(lines[2:]))
    with pytest.raises(SAMFileError, match="manifest.jsonl:2"):
        make(tmp_path, "always").run(stream, NumMemory(0.0), resume=True)


def test_bad_components_are_reported(tmp_path):
    class BadEvaluator:
        def correct(self, memory, tasks):
            return np.ones(len(tasks) + 1, bool)

    with pytest.raises(ValueError, match="results for"):
        make(tmp_path / "a", "always", evaluator=BadEvaluator()).run([(TASKS, (1.0, (0, 0)))], NumMemory(0.0))
    with pytest.raises(TypeError, match="updater"):
        JanusController(object(), CountingEvaluator(), phi, make_gate("always"), HybridEvalSet(task_emb), tmp_path)
    with pytest.raises(TypeError, match="features"):
        JanusController(ScriptUpdater(), CountingEvaluator(), None, make_gate("mmt"), HybridEvalSet(task_emb),
                        tmp_path)


class PairEvaluator(CountingEvaluator):
    """Judges several memories per call, as a GPU evaluator does."""

    def __init__(self):
        super().__init__()
        self.many_calls = 0

    def correct_many(self, memories, tasks):
        self.many_calls += 1
        return [np.array([d < m.quality for d in tasks], dtype=bool) for m in memories]


def test_comparisons_use_correct_many_when_the_evaluator_has_it(tmp_path):
    stream = [([0.1, 0.5], (0.3, (1.0, 0.0))), ([0.2, 0.9], (-0.2, (0.0, 1.0))), ([0.4], (0.1, (1.0, 1.0)))]
    plain, pair = CountingEvaluator(), PairEvaluator()
    a, b = make(tmp_path / "a", evaluator=plain), make(tmp_path / "b", evaluator=pair)
    a.run(stream, NumMemory(0.3))
    b.run(stream, NumMemory(0.3))
    strip = ("seconds", "old_ckpt", "new_ckpt", "deployed")
    rows = [[{k: v for k, v in asdict(d).items() if k not in strip} for d in c.read_manifest()] for c in (a, b)]
    assert rows[0] == rows[1] and plain.calls == 6
    assert pair.many_calls == 3 and pair.calls == 0  # one call per comparison, both memories in it


@pytest.mark.parametrize("deployed", ["../../outside/stolen.mem", "/etc/passwd", "memories/../../x.mem"])
def test_state_json_names_no_checkpoint_outside_the_workdir(tmp_path, deployed):
    stream = random_stream(4)
    run = tmp_path / "run"
    make(run, "always").run(stream, NumMemory(0.0))
    (tmp_path / "outside").mkdir()
    NumMemory(9.0).save(tmp_path / "outside" / "stolen.mem")
    state = json.loads((run / "state.json").read_text())
    (run / "state.json").write_text(json.dumps({**state, "deployed": deployed}))
    with pytest.raises(SAMFileError, match=r"state.json: field 'deployed'/'kept' must be a plain file name"):
        make(run, "always").run(stream, NumMemory(0.0), resume=True)


def test_a_workdir_of_other_files_is_never_written_over(tmp_path):
    """Found by an adversarial review: start() emptied a manifest.jsonl and overwrote (then deleted) checkpoints
    that were the user's; a resume deleted any .mem in memories/ that state.json did not name."""
    w = tmp_path / "w"
    (w / "memories").mkdir(parents=True)
    (w / "manifest.jsonl").write_text("MY PRECIOUS LOG")
    with pytest.raises(SAMFileError, match="holds files of its own"):
        make(w, "none").run(random_stream(3), NumMemory(0.0))
    assert (w / "manifest.jsonl").read_text() == "MY PRECIOUS LOG"
    run = tmp_path / "run"
    make(run, "always").run(random_stream(3), NumMemory(0.0))
    (run / "memories" / "my_backup.mem").write_text("keep me")
    make(run, "always").run(random_stream(5), NumMemory(0.0), resume=True)
    assert (run / "memories" / "my_backup.mem").read_text() == "keep me"


@pytest.mark.parametrize("where", ["file", "under_file"])
def test_a_workdir_that_is_a_file_is_one_line_and_the_file_is_kept(tmp_path, where):
    mine = tmp_path / "notes.txt"
    mine.write_text("MY NOTES")
    w = mine if where == "file" else mine / "run"
    with pytest.raises(SAMFileError, match=r"workdir .*notes.txt.*(is a file, not a folder|cannot be created)") as err:
        make(w, "always").run(random_stream(2), NumMemory(0.0))  # was: a FileExistsError / NotADirectoryError trace
    assert "\n" not in str(err.value) and mine.read_text() == "MY NOTES"


def test_two_controllers_never_share_a_workdir(tmp_path):
    first = make(tmp_path / "w", "always")
    first.run(random_stream(2), NumMemory(0.0))
    second = make(tmp_path / "w", "always")
    with first._holding():  # the first is in a step: the second may not start, resume or step
        with pytest.raises(SAMFileError, match="in use by another Janus controller"):
            second.run(random_stream(4), NumMemory(0.0), resume=True)
    second.run(random_stream(4), NumMemory(0.0), resume=True)  # once the first is done: fine
    assert [d.t for d in second.read_manifest()] == [1, 2, 3, 4]


@pytest.mark.parametrize("edit, says", [
    (lambda s: s["gate"].update(m=[float("nan"), 0.0]), "not a finite vector"),
    (lambda s: s["gate"].update(beta=5.0), "beta must be in"),
    (lambda s: s.update(t="6"), "field 't' must be an integer"),
    (lambda s: s.update(comparisons="x"), "field 'comparisons'"),
    (lambda s: s.pop("deployed"), "field 'deployed'"),
])
def test_a_hand_edited_state_json_is_refused_in_one_line(tmp_path, edit, says):
    w = tmp_path / "w"
    make(w, "mmt").run(random_stream(4), NumMemory(0.0))
    state = json.loads((w / "state.json").read_text())
    edit(state)
    (w / "state.json").write_text(json.dumps(state))
    with pytest.raises(SAMFileError, match=says):
        make(w, "mmt").run(random_stream(6), NumMemory(0.0), resume=True)


@pytest.mark.parametrize("bad", [[float("nan")] * 5, [0.01] * 5, ["no"] * 5])
def test_an_evaluators_results_must_be_booleans(tmp_path, bad):
    """NaN, a probability, or the string 'no' read as True by astype(bool): every candidate scored correct."""
    class Bad:
        def correct(self, memory, tasks):
            return bad[:len(tasks)]

    with pytest.raises(ValueError, match="one boolean \\(or 0/1\\) per task"):
        make(tmp_path / "w", "always", evaluator=Bad()).run(random_stream(3), NumMemory(0.0))


def test_a_step_whose_updater_failed_can_be_retried_and_the_run_resumes(tmp_path):
    """The batch used to join the evaluation set before the update was made: an updater that raised once and was
    retried added it twice, and the run then refused to resume."""
    class Flaky(ScriptUpdater):
        calls = 0

        def propose(self, memory, tasks, feedback):
            Flaky.calls += 1
            if Flaky.calls == 3:
                raise TimeoutError("LLM timeout")
            return super().propose(memory, tasks, feedback)

    w = tmp_path / "w"
    c = make(w, "always")
    c.updater = Flaky()
    stream = random_stream(5)
    c.start(NumMemory(0.0))
    for tasks, feedback in stream:
        try:
            c.step(tasks, feedback)
        except TimeoutError:
            c.step(tasks, feedback)  # the agent retries the batch
    make(w, "always").run(random_stream(6), NumMemory(0.0), resume=True)


@pytest.mark.parametrize("gate", ["always", "random(0.5,3)", "mmt(0.9,0.0)"])
def test_a_step_that_failed_mid_comparison_is_taken_back_whole(tmp_path, gate):
    """Found by review: the batch joined the evaluation pools before the comparison; an evaluator that timed out
    there left it in, a retry added it again, the gate's draws had moved, and the workdir no longer resumed. Now
    the failed step is undone: the run with a retry makes the decisions of a run without the failure, and
    resumes."""
    class Timeout(CountingEvaluator):
        def correct(self, memory, tasks):
            if self.calls == 3:  # the second comparison, judging the candidate
                self.calls += 1
                raise TimeoutError("judge timed out")
            return super().correct(memory, tasks)

    stream = random_stream(8)
    clean = make(tmp_path / "clean", gate)
    clean.run(stream, NumMemory(0.0))
    c = make(tmp_path / "w", gate, evaluator=Timeout())
    c.start(NumMemory(0.0))
    failed = 0
    for tasks, feedback in stream:
        try:
            c.step(tasks, feedback)
        except TimeoutError:
            failed += 1
            assert len(c.evalset) == sum(len(b) for b, _ in stream[:c.t])  # the batch is out again
            assert not (tmp_path / "w" / "tasks" / f"t{c.t + 1:06d}.npy").exists()
            c.step(tasks, feedback)  # the agent retries the batch
    assert failed == (1 if c.comparisons >= 2 else 0) and (failed or gate != "always")
    assert _strip(c.read_manifest()) == _strip(clean.read_manifest())
    back = make(tmp_path / "w", gate)
    back.run(random_stream(9), NumMemory(0.0), resume=True)
    assert back.t == 9 and len(back.evalset) == sum(len(b) for b, _ in random_stream(9))


def test_a_step_saved_without_its_manifest_line_says_so_and_the_resume_writes_it(tmp_path):
    """A failed manifest append raised the same error as a taken-back step, so the agent retried: the batch
    counted twice and the manifest lost t=3 for good, which a resume accepted (found by review)."""
    from sam_model.janus import StepSavedError

    stream = random_stream(6)
    clean = make(tmp_path / "clean", "always")
    clean.run(stream, NumMemory(0.0))
    c = make(tmp_path / "w", "always")
    c.start(NumMemory(0.0))
    append = c._append_manifest
    for n, (tasks, feedback) in enumerate(stream[:4], 1):
        if n == 3:
            c._append_manifest = lambda d: (_ for _ in ()).throw(OSError(28, "No space left on device"))
            with pytest.raises(StepSavedError, match="step 3 was decided and saved"):
                c.step(tasks, feedback)
            c._append_manifest = append
            with pytest.raises(RuntimeError, match="resume the run"):
                c.step(*stream[3])
            break
        c.step(tasks, feedback)
    back = make(tmp_path / "w", "always")
    back.run(stream, NumMemory(0.0), resume=True)
    assert _strip(back.read_manifest()) == _strip(clean.read_manifest())


def test_a_phi_that_changes_size_is_refused(tmp_path):
    """Found by review: z = φ(M̂) − φ(M) broadcast a 1-value φ against an 8-value one, silently."""
    sizes = iter([1, 8])

    def shifting(memory):
        return np.ones(next(sizes, 8))

    controller = JanusController(ScriptUpdater(), CountingEvaluator(), shifting, make_gate("mmt(0.9,0.0)"),
                                 HybridEvalSet(task_emb, coverage=3, boundary=4, fresh=3, seed=0), tmp_path / "w")
    with pytest.raises(ValueError, match="φ changed size: 8 values, the deployed memory's 1"):
        controller.run([(TASKS, (0.5, (1.0, 0.0)))], NumMemory(0.0))


@pytest.mark.parametrize("started, resumed_with", [("mmt(0.6,0.2)", "always"), ("always", "random(0.4,3)"),
                                                    ("mmt(0.6,0.2)", "mmtu(0.6,0.2)"), ("mmtq(0.6,0.5)", "always")])
def test_resuming_with_another_gate_says_which_gate_the_run_needs(tmp_path, started, resumed_with):
    """A resume with another gate than the run's was reported as "the gate's or the evaluation set's state is
    damaged; the run cannot be resumed", which invites deleting a sound workdir. It now names the run's gate; a
    resume with that gate (make_gate of the name it gives) continues the run, and nothing in the workdir changed."""
    stream = random_stream(8)
    make(tmp_path, started).run(stream[:4], NumMemory(0.0))
    before = (tmp_path / "state.json").read_text(), (tmp_path / "manifest.jsonl").read_text()
    with pytest.raises(SAMFileError) as err:
        make(tmp_path, resumed_with).run(stream, NumMemory(0.0), resume=True)
    message = str(err.value)
    assert "damaged" not in message and "\n" not in message and "state.json" in message
    assert json.loads(before[0])["gate"]["name"] in message
    assert ((tmp_path / "state.json").read_text(), (tmp_path / "manifest.jsonl").read_text()) == before
    suggested = re.search(r"make_gate\('([^']+)'\)", message)
    assert suggested, message
    resumed = make(tmp_path, suggested.group(1))
    resumed.run(stream, NumMemory(0.0), resume=True)
    assert resumed.t == len(stream) and resumed.gate.state_dict()["name"] == json.loads(before[0])["gate"]["name"]
