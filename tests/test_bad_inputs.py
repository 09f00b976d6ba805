"""Inputs later stages cannot take are rejected early, each with one line naming the file and what to do."""

from __future__ import annotations

import gzip
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from sam_model.data import hf
from sam_model.data.reader import ReadReport, read_episodes
from sam_model.data.schema import LogFormatError
from sam_model.data.sources import SourceOptions
from sam_model.data.validate import main as validate_main
from sam_model.evaluation.data import load_episodes
from sam_model.io import SAMFileError, run_cli
from sam_model.training.batching import EpochShuffle, collate_episodes
from sam_model.training.cli import run as train_run
from sam_model.training.datamodule import AgentLogDataModule

REPO = Path(__file__).resolve().parents[1]


def ev(episode: str, step: int, labels=None, **extra) -> dict:
    out = {"episode_id": episode, "step": step, "kind": "user", "text": f"{episode} {step}", **extra}
    if labels is not None:
        out["useful_memory_steps"] = labels
    return out


def labelled(episode: str) -> list[dict]:
    return [ev(episode, 0), ev(episode, 1), ev(episode, 2, [0])]


def test_steps_outside_int64_are_named_by_the_reader_and_validate(write_log, capsys):
    path = write_log([ev("a", 0), ev("a", 2**63)])
    with pytest.raises(LogFormatError, match=rf"^{path}:2: field 'step' must fit in 64 bits"):
        read_episodes(path)
    assert validate_main([str(path)]) == 1
    assert f"{path}:2: field 'step' must fit in 64 bits" in capsys.readouterr().err
    assert read_episodes(write_log([ev("a", 2**63 - 1)], "max.jsonl"))[0].events[0].step == 2**63 - 1


def test_empty_training_file_is_an_error_naming_it(write_log, tmp_path):
    empty = write_log([], "empty.jsonl")
    with pytest.raises(SAMFileError, match=rf"^{empty}: no events; the log is empty"):
        hf.episodes_to_dataset(empty, cache_dir=tmp_path / "cache")
    dm = AgentLogDataModule(train=[str(empty)], cache_dir=str(tmp_path / "cache"))
    with pytest.raises(SAMFileError, match=rf"{empty}: no events"):
        dm.setup("fit")


def test_splits_without_decision_points_are_named(write_log, tmp_path):
    train = write_log([ev("a", 0), ev("a", 1), ev("b", 0)], "nolabels.jsonl")
    dm = AgentLogDataModule(train=[str(train)], cache_dir=str(tmp_path / "cache"))
    with pytest.raises(SAMFileError, match=rf"{train}: the training split has no decision points in its 1 episode"):
        dm.setup("fit")
    good = write_log(labelled("a") + labelled("b"), "good.jsonl")
    dm = AgentLogDataModule(train=[str(good)], val=[str(train)], cache_dir=str(tmp_path / "cache"))
    with pytest.raises(SAMFileError, match=rf"{train}: the validation split has no decision points"):
        dm.setup("fit")
    other = write_log(labelled("c") + labelled("d"), "other.jsonl")
    dm = AgentLogDataModule(train=[str(good)], val=[str(other)], cache_dir=str(tmp_path / "cache"))
    dm.setup("fit")  # both have decision points


def test_the_same_conversations_in_two_sources_are_refused(write_log, tmp_path):
    """A file listed beside an export that contains it trained its conversations twice, and a validation file
    holding training conversations validated on what was trained on, without a word. The same id with other
    events is another agent's conversation: both are kept."""
    good = write_log(labelled("a") + labelled("b"), "good.jsonl")
    copy = write_log(labelled("b") + labelled("x"), "export.jsonl")
    for kw, says in [({"train": [str(good), str(copy)]}, f"episode 'b' is in both {good} and {copy}"),
                     ({"train": [str(good)], "val": [str(copy)]}, f"episode 'b' is in both {good} and data.val")]:
        with pytest.raises(ValueError, match=says + " with the same events"):
            AgentLogDataModule(**kw, cache_dir=str(tmp_path / "cache")).setup("fit")
    other_agent = write_log([dict(e, text=e["text"] + " (another agent)") for e in labelled("b")], "agent2.jsonl")
    AgentLogDataModule(train=[str(good), str(other_agent)], cache_dir=str(tmp_path / "cache")).setup("fit")


def test_a_source_given_twice_is_named_however_spelt(write_log, tmp_path, monkeypatch):
    """Found by review: data.train refused a path listed twice only when spelt the same (./good.jsonl beside
    good.jsonl was read twice, then refused for its first episode), and data.val [v, v] failed on "episode 'c'
    already appeared", as if the file held a copy. Each is now refused naming the file, before anything is read."""
    good = write_log(labelled("a") + labelled("b"), "good.jsonl")
    other = write_log(labelled("c") + labelled("d"), "other.jsonl")
    monkeypatch.chdir(tmp_path)
    says = r"data.train lists \S*good\.jsonl \(also as \./good\.jsonl\) more than once.*\(e\.g\. \{good\.jsonl: 2\}\)"
    with pytest.raises(ValueError, match=says):
        AgentLogDataModule(train=[str(good), "./good.jsonl"], cache_dir=str(tmp_path / "cache"))
    with pytest.raises(ValueError, match=r"data.val lists \S*other\.jsonl \(also as other\.jsonl\) more than once"):
        AgentLogDataModule(train=[str(good)], val=[str(other), "other.jsonl"], cache_dir=str(tmp_path / "cache"))


def test_validation_skips_batches_without_decision_points(tmp_path, tiny_bert_dir):
    from sam_model.models.sam import SAMConfig
    from sam_model.training.module import SAMLightningModule

    module = SAMLightningModule(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16),
                                vocab={"phases": [""], "kinds": ["user"]})
    row = {"steps": [0, 1], "kinds": ["user", "user"], "texts": ["a", "b"], "phases": ["", ""],
           "memory_texts": ["a", "b"], "state_texts": ["", ""], "labels": [[], []]}
    batch = collate_episodes([(0, row)])
    assert module.validation_step(batch, 0) is None
    assert all(m.indexes == [] for m in module.val_metrics.values()), "nothing was given to torchmetrics"


def test_epoch_shuffle_depends_on_seed_and_epoch_only():
    epoch = [0]
    a = EpochShuffle(50, seed=3, epoch=lambda: epoch[0])
    first = list(a)
    torch.manual_seed(123)  # the global RNG does not matter
    assert list(a) == first and sorted(first) == list(range(50))
    epoch[0] = 1
    assert list(a) != first and list(EpochShuffle(50, seed=3, epoch=lambda: 1)) == list(a)


def test_skipped_lines_are_reported_also_from_a_warm_cache(write_log, tmp_path, caplog):
    path = write_log(labelled("a") + ["{broken", json.dumps({"episode_id": "b"})])
    reports = []
    for _ in range(2):  # the second call finds the Arrow cache warm: the generator does not run
        report = ReadReport()
        with caplog.at_level(logging.WARNING, logger="sam_model.data.hf"):
            caplog.clear()
            ds = hf.episodes_to_dataset(path, on_error="skip", cache_dir=tmp_path / "cache", report=report)
        assert ds.num_rows == 1
        assert f"{path}:4: invalid JSON" in caplog.text and f"{path}:5: missing required field" in caplog.text
        reports.append([str(e) for e in report.skipped])
    assert reports[0] == reports[1] and len(reports[0]) == 2
    record = next((tmp_path / "cache" / "sam_model_skips").glob("*.json"))
    record.unlink()  # a cache made before the record existed: re-scanned
    report = ReadReport()
    hf.episodes_to_dataset(path, on_error="skip", cache_dir=tmp_path / "cache", report=report)
    assert [str(e) for e in report.skipped] == reports[0]


def test_run_cli_prints_one_line_unless_asked_for_the_trace(capsys, monkeypatch):
    def boom(args):
        raise SAMFileError("data/x.jsonl: broken\nsecond line; fix it")

    assert run_cli(boom, ["--x"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: data/x.jsonl: broken second line; fix it")
    with pytest.raises(SAMFileError):
        run_cli(boom, ["--traceback"])
    monkeypatch.setenv("SAM_TRACEBACK", "1")
    with pytest.raises(SAMFileError):
        run_cli(boom, [])
    monkeypatch.delenv("SAM_TRACEBACK")

    def bug(args):
        raise KeyError("a bug keeps its trace")

    with pytest.raises(KeyError):
        run_cli(bug, [])


BIG_OUTPUT = """
import sys
from sam_model.io import run_cli
def main(args):
    for i in range(200000):
        print("line", i)
    if args:
        raise BrokenPipeError(32, "Broken pipe")  # a socket's, not stdout's
sys.exit(run_cli(main))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="a shell pipe into head")
def test_a_cli_piped_into_head_stops_quietly_but_a_socket_broken_pipe_is_still_an_error(tmp_path):
    script = tmp_path / "big.py"
    script.write_text(BIG_OUTPUT)
    cmd = f"'{sys.executable}' '{script}' | head -n 1"
    out = subprocess.run(["bash", "-c", cmd + "; echo rc=${PIPESTATUS[0]}"], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.splitlines() == ["line 0", "rc=1"]
    assert out.stderr == ""  # was: error: [Errno 32] Broken pipe
    out = subprocess.run([sys.executable, str(script), "x"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and out.stderr.startswith("error: [Errno 32] Broken pipe")


def _fit_args(tmp_path: Path, log: Path, bert: Path) -> list[str]:
    return ["fit", "--config", str(REPO / "configs" / "demo.yaml"), f"--data.train=[{log}]",
            f"--model.net.bert_path={bert}", "--model.net.dim=8", "--model.net.hidden=16",
            "--model.net.proj_hidden=16", "--model.text_cache_dir=", "--trainer.logger=false",
            "--trainer.callbacks=[]", "--trainer.max_epochs=1", "--trainer.enable_progress_bar=false",
            f"--trainer.default_root_dir={tmp_path / 'run'}", f"--data.cache_dir={tmp_path / 'cache'}"]


def test_train_errors_are_one_line_with_the_file_and_what_to_do(write_log, tmp_path, tiny_bert_dir, capsys):
    bad = write_log(labelled("a") + ["{oops"], "bad.jsonl")
    assert train_run(_fit_args(tmp_path, bad, tiny_bert_dir)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"error: {bad}:4: invalid JSON") and "data.on_error: skip" in err[-1]
    assert not any("Traceback" in line for line in err)
    with pytest.raises(LogFormatError):
        train_run(_fit_args(tmp_path, bad, tiny_bert_dir) + ["--traceback"])
    evil = tmp_path / "evil.ckpt"
    evil.write_bytes(b"\x80\x04garbage")
    good = write_log(labelled("a") + labelled("b") + labelled("c"), "good.jsonl")
    assert train_run(_fit_args(tmp_path, good, tiny_bert_dir) + [f"--ckpt_path={evil}"]) == 1
    assert "refused to load" in capsys.readouterr().err  # resume never unpickles code either


def test_train_py_prints_no_traceback(write_log, tmp_path):
    empty = write_log([], "empty.jsonl")
    res = subprocess.run([sys.executable, "train.py", *_fit_args(tmp_path, empty, Path("unused"))],
                         capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-3000:]
    assert res.stderr.strip().splitlines()[-1].startswith(f"error: {empty}: no events")


def test_a_file_whose_name_and_bytes_disagree_about_gzip_is_named(tmp_path, capsys):
    """Found by a walkthrough: a gzip file without .gz was 'not UTF-8 (byte 2 of the line is 0x8b)', a plain one
    named .gz 'cannot be read on from here ...; lines 1-0 were read'."""
    import gzip

    from sam_model.data.transcripts import main as transcripts_main

    line = json.dumps({"id": "c1", "messages": [{"role": "user", "content": "hi"}]}) + "\n"
    zipped, plain = tmp_path / "chats.jsonl", tmp_path / "plain.jsonl.gz"
    zipped.write_bytes(gzip.compress(line.encode()))
    plain.write_text(line)
    for path, says in ((zipped, "gzip-compressed but not named .gz: rename it chats.jsonl.gz"),
                       (plain, "named .gz but is not gzip-compressed: rename it without .gz")):
        assert run_cli(transcripts_main, [str(path), str(tmp_path / "out.jsonl")]) == 1
        assert says in capsys.readouterr().err
        assert validate_main([str(path)]) == 2 and says in capsys.readouterr().err
        with pytest.raises(SAMFileError, match="gzip"):
            read_episodes(path)


def test_training_on_a_log_whose_name_and_bytes_disagree_about_gzip_is_one_line(write_log, tmp_path, capsys):
    """Found by review: train.py printed the datasets library's DatasetGenerationError traceback around it."""
    import gzip

    good = write_log(labelled("a") + labelled("b"), "good.jsonl")
    zipped = tmp_path / "zipped.jsonl"
    zipped.write_bytes(gzip.compress(good.read_bytes()))
    assert train_run(_fit_args(tmp_path, zipped, Path("unused"))) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"error: {zipped} is gzip-compressed but not named .gz: rename it zipped.jsonl.gz"), err


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes need a POSIX system")
def test_a_pipe_given_as_a_log_is_refused_not_waited_on(tmp_path):
    """Found by a walkthrough: a FIFO given as a log blocked the reader for ever (it waited for a writer; read
    again after the gzip check, its bytes were gone). Every reading entry point refuses it in one line."""
    import os

    fifo = tmp_path / "log.jsonl"
    os.mkfifo(fifo)
    script = f"""
import sys
from sam_model.data.reader import read_episodes
from sam_model.data.sources import source_kind
from sam_model.data.transcripts import main as transcripts
from sam_model.data.validate import main as validate
from sam_model.io import SAMFileError
for call in (lambda: read_episodes({str(fifo)!r}), lambda: source_kind({str(fifo)!r})):
    try:
        call()
    except SAMFileError as err:
        print("refused:", err)
print("rc", transcripts([{str(fifo)!r}, {str(tmp_path / "out.jsonl")!r}]), validate([{str(fifo)!r}]))
"""
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.count("refused:") == 1 and "rc 1 2" in res.stdout, res.stdout  # source_kind: an agent log
    assert res.stdout.count("is not a regular file") + res.stderr.count("is not a regular file") == 3, res


def test_sam_data_names_an_unknown_command_and_each_command_its_own_name(capsys, monkeypatch):
    from sam_model.data.cli import main as sam_data

    monkeypatch.setattr(sys, "argv", ["sam-data"])  # sam-data names the command in sys.argv[0]: restored after

    assert sam_data(["transcript", "a", "b"]) == 2
    assert "unknown command 'transcript'; did you mean 'transcripts'?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sam_data(["transcripts", "--help"])
    assert capsys.readouterr().out.startswith("usage: sam-data transcripts")


def test_sam_serve_refuses_a_port_out_of_range_and_its_help_says_no_default_of_none(capsys):
    pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from sam_model.serve.cli import parser

    with pytest.raises(SystemExit):
        parser().parse_args(["--keys", "k.json", "--port", "99999"])
    assert "want a port number from 1 to 65535, got 99999" in capsys.readouterr().err
    text = parser().format_help()
    assert "(default: None)" not in text and "(default: 8420)" in text


def test_a_log_given_without_brackets_says_how_to_write_the_list(capsys):
    """Found by a walkthrough: 'data.train: expected list, got ...' said what was wrong, not what to write."""
    assert train_run(["fit", "--config", "adapt.yaml", "--data.train", "my_agent/chats.jsonl.gz"]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "expected list" in err and "--data.train '[LOG]'" in err


def test_an_output_folder_that_cannot_be_written_is_named(tmp_path, capsys):
    """Found by review: '[Errno 1] Operation not permitted: '/sys/.x.jsonl.94ef98fe5a85.tmp'': the staging name, no
    fix. /sys refuses new files even to root (a read-only folder would not, in a root container)."""
    from sam_model.data.transcripts import main as transcripts_main

    if not Path("/sys").is_dir():
        pytest.skip("needs /sys (a Linux system) as a folder nobody can write")
    log = tmp_path / "chats.jsonl"
    log.write_text(json.dumps({"id": "c1", "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    assert run_cli(transcripts_main, [str(log), "/sys/x.jsonl", "--allow-empty"]) == 1
    err = capsys.readouterr().err
    assert "cannot write into /sys: " in err and "give a path in a folder you can write" in err and ".tmp" not in err


def test_a_link_loop_or_a_device_is_not_called_missing(tmp_path, capsys):
    """Found by review: a loop of links and /dev/zero were 'agent log not found' beside a path the user could see."""
    from sam_model.data.transcripts import main as transcripts_main

    (tmp_path / "a.jsonl").symlink_to(tmp_path / "b.jsonl")
    (tmp_path / "b.jsonl").symlink_to(tmp_path / "a.jsonl")
    loop = str(tmp_path / "a.jsonl")
    assert validate_main([loop]) == 2 and "is a link to nothing (broken, or a loop of links)" in capsys.readouterr().err
    assert run_cli(transcripts_main, [loop, str(tmp_path / "o.jsonl")]) == 1
    assert "is a link to nothing" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match="is a link to nothing"):
        read_episodes(loop)
    if Path("/dev/zero").exists():
        assert validate_main(["/dev/zero"]) == 2 and "is not a regular file" in capsys.readouterr().err


def test_a_run_trained_with_a_relative_bert_path_exports_and_loads_from_another_folder(write_log, tmp_path,
                                                                                         tiny_bert_dir, monkeypatch):
    """The checkpoint recorded --model.net.bert_path as given ('mybert'): exported, loaded or resumed from another
    folder, its tokenizer's folder was 'not found'. It is recorded absolute now."""
    import shutil

    from sam_model.export import main as export_main
    from sam_model.retriever import SAMRetriever

    work, other = tmp_path / "work", tmp_path / "other"
    work.mkdir(), other.mkdir()
    shutil.copytree(tiny_bert_dir, work / "mybert")
    log = write_log(labelled("a") + labelled("b") + labelled("c"), "good.jsonl")
    monkeypatch.chdir(work)
    args = [a if not a.startswith("--model.net.bert_path=") else "--model.net.bert_path=mybert"
            for a in _fit_args(tmp_path, log, tiny_bert_dir) if a not in ("--trainer.logger=false", "--trainer.callbacks=[]")]
    assert train_run(args) == 0
    [ckpt] = work.rglob("last.ckpt")  # the config's checkpoints/${run}, under the folder it ran in
    monkeypatch.chdir(other)
    dim = SAMRetriever.load(ckpt, device="cpu").dim  # was: text encoder folder not found: mybert
    assert export_main([str(ckpt), str(other / "export")]) in (0, None)
    assert SAMRetriever.load(other / "export", device="cpu").dim == dim


def test_a_checkpoint_that_recorded_a_relative_bert_path_loads_from_another_folder(tmp_path, tiny_bert_dir,
                                                                                   monkeypatch, capsys):
    """Checkpoints written before bert_path was recorded absolute hold it as given ('mybert', relative to the folder
    training ran in): loaded or exported from another folder, 'text encoder folder not found: mybert'. It is found
    from the current folder, else from the checkpoint's folder and those above it; else one line naming the
    checkpoint, the field and what to do."""
    import shutil

    from sam_model.export import main as export_main
    from sam_model.models.sam import SAMConfig, SAMNet
    from sam_model.retriever import SAMRetriever

    work, other = tmp_path / "work", tmp_path / "other"
    (work / "checkpoints" / "r").mkdir(parents=True), other.mkdir()
    shutil.copytree(tiny_bert_dir, work / "mybert")
    net = SAMNet(SAMConfig(bert_path=str(work / "mybert"), dim=8, hidden=16, proj_hidden=16))
    ckpt = work / "checkpoints" / "r" / "last.ckpt"  # where a run in work/ puts it
    torch.save({"hyper_parameters": {"net": {**net.cfg.to_dict(), "bert_path": "mybert"}, "bert_config": None},
                "state_dict": {f"net.{k}": v for k, v in net.state_dict().items()}}, ckpt)
    monkeypatch.chdir(other)
    back = SAMRetriever.load(ckpt, device="cpu").net  # was: text encoder folder not found: mybert
    assert back.cfg.bert_path == str((work / "mybert").resolve())
    assert torch.equal(back.alpha_logit, net.alpha_logit)
    assert export_main([str(ckpt), str(other / "export")]) == 0
    assert SAMRetriever.load(other / "export", device="cpu").dim == back.out_dim
    shutil.move(work / "mybert", tmp_path / "moved")
    capsys.readouterr()
    assert export_main([str(ckpt), str(other / "export2")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {ckpt}: field 'hyper_parameters.net.bert_path'"), err
    assert "'mybert'" in err and "run it from the folder the training ran in" in err, err


TOOL_CHAT = [
    {"role": "user", "content": "My user id is mia_li_3668."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_user", "arguments": '{"user_id": "mia_li_3668"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"reservation": "ABC123"}'},
]


def test_a_bad_transcript_conversation_gets_the_same_skip_hint_as_a_bad_log_line(tmp_path, tiny_bert_dir, capsys):
    """Found by review: a bad agent-log line in data.train ended in 'set data.on_error: skip to train on the other
    lines'; a bad conversation of a transcript file said only what was wrong, not that it could be skipped. Both
    now say it, and a file that no skip helps (no conversation converted) does not."""
    chats = tmp_path / "chats.jsonl"
    chats.write_text(json.dumps({"id": "e1", "messages": TOOL_CHAT}) + "\n"
                     + json.dumps({"id": "e2", "messages": []}) + "\n")
    assert train_run(_fit_args(tmp_path, chats, tiny_bert_dir)) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"error: {chats}:2: empty conversation") and "data.on_error: skip" in err, err
    assert "--skip-bad" not in err  # an option of sam-data transcripts, not of sam-train
    with pytest.raises(SAMFileError, match=r"chats\.jsonl:2: empty conversation.*pass --skip-bad-lines"):
        load_episodes(chats, options=SourceOptions())  # evaluate.py: its own option, as for a bad log line
    only_bad = tmp_path / "bad.jsonl"
    only_bad.write_text(json.dumps({"id": "e2", "messages": []}) + "\n")
    assert train_run(_fit_args(tmp_path, only_bad, tiny_bert_dir) + ["--data.on_error=skip"]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "no conversation converted" in err and "data.on_error: skip" not in err, err


def _advising_inputs(tmp_path: Path) -> dict[str, Path]:
    """Inputs whose errors advise an option: a transcript file with no conversation, one without a tool call, one
    whose second conversation has a user message with tool calls (another reader?), a .gz cut short after 68 lines
    (a skip keeps what was read), and an SGD folder of empty dialogue files."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "empty.json").write_text("[]")
    (tmp_path / "no_tools.jsonl").write_text(json.dumps({"id": "a", "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}) + "\n")
    (tmp_path / "user_calls.jsonl").write_text(json.dumps({"id": "a", "messages": TOOL_CHAT}) + "\n" + json.dumps(
        {"id": "b", "messages": [{"role": "user", "content": "hi", "tool_calls": TOOL_CHAT[1]["tool_calls"]}]}) + "\n")
    raw = gzip.compress("".join(json.dumps({"id": f"e{i}", "messages": TOOL_CHAT}) + "\n" for i in range(200)).encode())
    (tmp_path / "cut.jsonl.gz").write_bytes(raw[:len(raw) // 2])
    (tmp_path / "sgd").mkdir()
    (tmp_path / "sgd" / "dialogues_001.json").write_text("[]")
    return {p.name.split(".")[0]: p for p in sorted(tmp_path.iterdir())}


SAM_DATA_FLAGS = ("--format", "--allow-empty", "--skip-bad")  # sam-train has none; evaluate.py has --skip-bad-lines


def test_sam_train_advises_its_own_options_not_sam_datas(tmp_path, tiny_bert_dir, capsys):
    """Found by review: a transcript file's error said to sam-train users 'pass --allow-empty', 'try --format X' or
    '--skip-bad keeps what was read', options of sam-data transcripts that sam-train lacks; each advice is now
    spelt in data.* options (sam_model.data.advice), or says to convert the file with sam-data first."""
    inputs = _advising_inputs(tmp_path / "in")
    says = {"empty": "an empty file? leave it out of data.train and data.val",
            "no_tools": "really have no tools, leave it out of data.train and data.val",
            "user_calls": "convert it with sam-data transcripts --format NAME and give sam-train the agent log it writes",
            "cut": "re-compress it, or set data.on_error: skip to keep what was read",
            "sgd": "an incomplete download? leave it out of data.train and data.val"}
    for name, said in says.items():
        assert train_run(_fit_args(tmp_path, inputs[name], tiny_bert_dir)) == 1
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert said in err, err
        assert not any(flag in err.replace("sam-data transcripts --format", "") for flag in SAM_DATA_FLAGS), err


def test_evaluate_advises_its_own_options_not_sam_datas(tmp_path):
    """The same for evaluate.py: --skip-bad-lines, and what to give --data."""
    inputs = _advising_inputs(tmp_path)
    says = {"empty": "an empty file? give --data another file: nothing in this one can be evaluated",
            "no_tools": "really have no tools, give --data another file",
            "user_calls": "convert it with sam-data transcripts --format NAME and give --data the agent log it writes",
            "cut": "re-compress it, or pass --skip-bad-lines to keep what was read",
            "sgd": "an incomplete download? give --data another file"}
    for name, said in says.items():
        with pytest.raises(SAMFileError) as info:
            load_episodes(inputs[name], options=SourceOptions())
        err = str(info.value).replace("sam-data transcripts --format", "").replace("--skip-bad-lines", "")
        assert said in str(info.value) and not any(flag in err for flag in SAM_DATA_FLAGS), info.value


def test_sam_data_keeps_its_own_options(tmp_path, capsys):
    """sam-data transcripts and sgd, whose flags the advice names, still name them."""
    from sam_model.data.sgd import main as sgd_main
    from sam_model.data.transcripts import main as transcripts_main

    inputs = _advising_inputs(tmp_path / "in")
    says = {"empty": "an empty file? pass --allow-empty to write its log anyway",
            "no_tools": "really have no tools, pass --allow-empty to write its log anyway",
            "user_calls": "read the log as its own format: try --format NAME (sam-data formats lists the formats)",
            "cut": "re-compress it, or pass --skip-bad to keep what was read"}
    for name, said in says.items():
        assert run_cli(transcripts_main, [str(inputs[name]), str(tmp_path / "out.jsonl")]) == 1
        assert said in capsys.readouterr().err
    assert run_cli(sgd_main, [str(inputs["sgd"]), str(tmp_path / "out.jsonl")]) == 1
    assert "an incomplete download? pass --allow-empty to write its log anyway" in capsys.readouterr().err
