"""The trained-on warning of sam-eval, interpolate --choose-on and choose_order --choose-on
(sam_model.evaluation.seen): what a model's training.json says it trained on, against the file measured."""

from __future__ import annotations

import json
from types import SimpleNamespace

from sam_model.evaluation.seen import trained_on_warning


def trained(*sources, split: str = "all") -> SimpleNamespace:
    """A retriever whose training record lists ``sources`` (paths, or source dicts), read with ``split``."""
    listed = [s if isinstance(s, dict) else {"path": s} for s in sources]
    return SimpleNamespace(net=SimpleNamespace(training_info={"data": {"sources": listed, "transcript_split": split}}))


def test_a_held_out_file_of_a_training_files_name_in_another_folder_is_not_warned(tmp_path, monkeypatch):
    """A week's logs in train/chats.jsonl, the next week's in held/chats.jsonl (docs/training.md's OpenAI Agents
    walkthrough's layout): the held-out file was warned of as trained on, by its name alone."""
    monkeypatch.chdir(tmp_path)
    for week, text in (("train", "a\n"), ("held", "b\n")):
        (tmp_path / week).mkdir()
        (tmp_path / week / "chats.jsonl").write_text(text)
    model = trained("train/chats.jsonl")
    assert trained_on_warning("sam", model, "held/chats.jsonl", "all") is None
    said = trained_on_warning("sam", model, str(tmp_path / "train" / "chats.jsonl"), "test")  # the file itself
    assert said.startswith("warning: sam trained on train/chats.jsonl ") and "is among them:" in said


def test_a_file_inside_a_trained_folder_is_warned_and_a_recorded_path_elsewhere_goes_by_its_name(tmp_path,
                                                                                                  monkeypatch):
    """A fit of a folder of logs, measured on one file of it: no name matched, nothing was said."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "states").mkdir()
    (tmp_path / "states" / "s1.jsonl").write_text("x\n")
    said = trained_on_warning("sam", trained("states"), "states/s1.jsonl", "all")
    assert said is not None and "states/s1.jsonl is among them:" in said
    (tmp_path / "copy.jsonl").write_text("x\n")  # not here as recorded (another cwd, another machine): by its name
    said = trained_on_warning("sam", trained("../elsewhere/copy.jsonl"), "copy.jsonl", "all")
    assert said is not None and "if that is copy.jsonl," in said


def test_a_mix_keeps_each_sources_own_split(tiny_bert_dir, tmp_path):
    """sam-general trained on the airline log's train split; an adapt.yaml fit on the whole of a user's log, mixed
    with it: the mix's record said transcript_split all for every source, and the README's held-out airline
    measurement (--split test) of the mix was warned of as trained on."""
    from test_interpolate import net

    from sam_model.export import save_exported
    from sam_model.interpolate import interpolate
    from sam_model.retriever import SAMRetriever

    first, tuned = net(tiny_bert_dir, 0), net(tiny_bert_dir, 1)
    first.training_info = {"data": {"sources": [{"path": "../shared/data/tau-bench/gpt-4o-airline.json.gz"}],
                                    "transcript_split": "train"}}
    tuned.training_info = {"data": {"sources": [{"path": "my_agent/chats.jsonl.gz"}], "transcript_split": "all"},
                           "init_from": "base"}
    general = save_exported(first, tmp_path / "base")
    mixed = SAMRetriever.load(interpolate(general, save_exported(tuned, tmp_path / "tuned"), 0.5, tmp_path / "mix"),
                              device="cpu")
    airline = "../shared/data/tau-bench/gpt-4o-airline.json.gz"
    assert trained_on_warning("sam", mixed, airline, "test") is None
    assert "transcript_split train" in trained_on_warning("sam", mixed, airline, "all")
    assert trained_on_warning("sam", mixed, "my_agent/chats.jsonl.gz", "test") is not None  # the adapt fit read all


def test_a_malformed_training_record_says_nothing_and_never_fails():
    for data in ({"sources": 5}, {"sources": "chats.jsonl"}, {"sources": [5, None, {"path": 3}]}, [], "x", None):
        model = SimpleNamespace(net=SimpleNamespace(training_info={"data": data}))
        assert trained_on_warning("sam", model, "chats.jsonl", "all") is None, json.dumps(data)
    assert trained_on_warning("sam", SimpleNamespace(net=SimpleNamespace(training_info=[1])), "c", "all") is None


def test_a_trained_sgd_folder_is_warned_whatever_the_split():
    """sam-general trained on ../shared/data/sgd/train with transcript_split train, which splits transcript files
    alone: an SGD folder is read whole by fit and by sam-eval --split test, and such a measurement of it passed as
    the README's held-out one."""
    sgd = "../shared/data/sgd/train"
    model = trained({"path": sgd, "kind": "sgd"}, {"path": "air.json.gz", "kind": "transcripts"}, split="train")
    said = trained_on_warning("sam", model, sgd, "test")
    assert said is not None and "not a transcript file" in said and "kept out of its training" in said
    assert trained_on_warning("sam", model, "air.json.gz", "test") is None  # the transcript file's held-out split
    assert trained_on_warning("sam", model, "../shared/data/sgd/dev", "all") is None


def fitted_on(*paths: str, split: str = "all") -> SimpleNamespace:
    """A retriever whose training record is what a fit of ``paths`` (read from the folder it ran in) writes of them:
    each source's statistics as the datamodule records them, its fingerprint among them."""
    import datasets

    from sam_model.training.datamodule import source_stats

    episodes = datasets.Dataset.from_dict({"labels": [[[1], []]]})
    return trained(*(source_stats(p, episodes) for p in paths), split=split)


def test_a_fit_elsewhere_is_told_by_its_files_bytes_not_their_names(tmp_path, monkeypatch):
    """A fit that ran in another folder recorded chats.jsonl: here, another week's chats.jsonl was warned of as
    trained on (its name, or its path here, alone), and the trained file copied as held.jsonl was not."""
    (tmp_path / "fit").mkdir()
    (tmp_path / "fit" / "chats.jsonl").write_text('{"week": 1}\n')
    monkeypatch.chdir(tmp_path / "fit")
    model = fitted_on("chats.jsonl")
    assert model.net.training_info["data"]["sources"][0]["fingerprint"].startswith("12:")
    (tmp_path / "eval").mkdir()
    monkeypatch.chdir(tmp_path / "eval")
    (tmp_path / "eval" / "chats.jsonl").write_text('{"week": 2}\n')  # the same name and size, other bytes
    assert trained_on_warning("sam", model, "chats.jsonl", "all") is None
    (tmp_path / "eval" / "held.jsonl").write_bytes((tmp_path / "fit" / "chats.jsonl").read_bytes())
    said = trained_on_warning("sam", model, "held.jsonl", "all")
    assert said is not None and "held.jsonl is among them:" in said


def test_a_trained_folders_file_is_told_by_its_bytes_and_another_folder_is_not(tmp_path, monkeypatch):
    """An SGD-like folder fit: one of its files copied under another name is trained bytes, the whole folder copied
    too; a dev folder of the same file names (and a shared empty file) is not."""
    monkeypatch.chdir(tmp_path)
    for split, n in (("train", 1), ("dev", 2)):
        (tmp_path / split).mkdir()
        (tmp_path / split / "dialogues_001.json").write_text(f"[{n}]")
        (tmp_path / split / "empty.txt").write_text("")
    model = fitted_on("train")
    record = model.net.training_info["data"]["sources"][0]
    assert record["fingerprint"].startswith("dir:") and set(record["files"]) == {"dialogues_001.json"}  # read alone
    assert trained_on_warning("sam", model, "dev", "all") is None
    assert trained_on_warning("sam", model, "dev/dialogues_001.json", "all") is None
    (tmp_path / "one.json").write_text("[1]")
    assert trained_on_warning("sam", model, "one.json", "all") is not None
    (tmp_path / "copied").mkdir()
    (tmp_path / "copied" / "d.json").write_text("[1]")
    assert trained_on_warning("sam", model, "copied", "all") is not None


def test_a_big_file_is_fingerprinted_by_its_size_and_ends(tmp_path, monkeypatch):
    """Past WHOLE a file is read at its first and last MiB, not whole: a change there (or of its size) tells it
    apart; what is never read is its middle."""
    from sam_model.data import fingerprint as fp

    monkeypatch.setattr(fp, "WHOLE", 3 * fp.MIB)
    body = bytearray(4 * fp.MIB)
    (tmp_path / "a").write_bytes(bytes(body))
    first = fp.file_fingerprint(tmp_path / "a")
    body[-1] = 1
    (tmp_path / "a").write_bytes(bytes(body))
    assert fp.file_fingerprint(tmp_path / "a") != first and first.startswith(f"{4 * fp.MIB}:")
    assert fp.fingerprint(tmp_path / "missing") is None


def test_a_trained_log_appended_to_since_is_warned_of(tmp_path, monkeypatch):
    """An agent's log grows: the fit read chats.jsonl, the app appended the next days' conversations, and the file
    measured holds the trained ones still. Its fingerprint is another, and it was said to be other bytes (before
    fingerprints its path told it); a file that reads other bytes first, of any size, is not warned of."""
    from sam_model.data import fingerprint as fp

    monkeypatch.chdir(tmp_path)
    (tmp_path / "chats.jsonl").write_text('{"day": 1}\n')
    model = fitted_on("chats.jsonl")
    with (tmp_path / "chats.jsonl").open("a") as f:
        f.write('{"day": 2}\n')
    said = trained_on_warning("sam", model, "chats.jsonl", "all")
    assert said is not None and "chats.jsonl is among them:" in said
    (tmp_path / "other.jsonl").write_text('{"day": 0}\n{"day": 1}\n')
    assert trained_on_warning("sam", model, "other.jsonl", "all") is None
    monkeypatch.setattr(fp, "WHOLE", 3 * fp.MIB)  # a big log: its first and last MiB as they were
    (tmp_path / "big.jsonl").write_bytes(b"x" * (4 * fp.MIB))
    model = fitted_on("big.jsonl")
    with (tmp_path / "big.jsonl").open("ab") as f:
        f.write(b"y" * fp.MIB)
    assert trained_on_warning("sam", model, "big.jsonl", "all") is not None


def test_a_gzipped_log_and_the_log_it_was_made_from_are_told_by_the_words_they_hold(tmp_path, monkeypatch):
    """The readers read a .jsonl.gz gunzipped: a fit of chats.jsonl.gz measured on the chats.jsonl it was made from
    (or the other way round) reads the same conversations, and their bytes on disk differed, so nothing was said."""
    import gzip

    from sam_model.data import fingerprint as fp

    monkeypatch.chdir(tmp_path)
    (tmp_path / "fit").mkdir()
    words = b'{"role": "user", "content": "Where is my order A-77?"}\n'
    (tmp_path / "fit" / "chats.jsonl.gz").write_bytes(gzip.compress(words))
    (tmp_path / "fit" / "plain.jsonl").write_bytes(words + words)
    gz_model, plain_model = fitted_on("fit/chats.jsonl.gz"), fitted_on("fit/plain.jsonl")
    (tmp_path / "held.jsonl").write_bytes(words)
    said = trained_on_warning("sam", gz_model, "held.jsonl", "all")
    assert said is not None and "held.jsonl is among them:" in said
    (tmp_path / "held2.jsonl.gz").write_bytes(gzip.compress(words + words))
    assert trained_on_warning("sam", plain_model, "held2.jsonl.gz", "all") is not None
    (tmp_path / "other.jsonl.gz").write_bytes(gzip.compress(words.replace(b"A-77", b"B-12")))
    assert trained_on_warning("sam", gz_model, "other.jsonl.gz", "all") is None  # other conversations
    monkeypatch.setattr(fp, "WHOLE", 3 * fp.MIB)  # past WHOLE: the first and last MiB of the words, gunzipped
    body = bytes(range(256)) * (4 * fp.MIB // 256 + 7)
    (tmp_path / "big.jsonl").write_bytes(body)
    (tmp_path / "big.jsonl.gz").write_bytes(gzip.compress(body))
    assert fp.file_fingerprint(tmp_path / "big.jsonl.gz") == fp.file_fingerprint(tmp_path / "big.jsonl")
    assert fp.file_fingerprint(tmp_path / "big.jsonl.gz", fp.MIB + 5) == fp.file_fingerprint(
        tmp_path / "big.jsonl", fp.MIB + 5)


def test_a_held_folder_sharing_a_file_the_readers_do_not_read_is_not_warned_of(tmp_path, monkeypatch):
    """An SGD-format split of one's own data: train/ and held/ share their schema.json and a README (the same
    services, the same notes), never read as conversations. The held folder was warned of as trained on: a folder's
    fingerprint listed every file in it, and the shared ones matched. It lists the files its conversion reads (the
    dialogues files); a trained dialogues file copied into a held folder is still warned of."""
    monkeypatch.chdir(tmp_path)
    for split, n in (("train", 1), ("held", 2)):
        (tmp_path / split).mkdir()
        (tmp_path / split / "dialogues_001.json").write_text(f'[{{"dialogue_id": "{n}", "turns": []}}]')
        (tmp_path / split / "schema.json").write_text('[{"service_name": "Flights_1"}]')
        (tmp_path / split / "README.md").write_text("Our flight-booking chats.\n")
    model = fitted_on("train")
    assert set(model.net.training_info["data"]["sources"][0]["files"]) == {"dialogues_001.json"}
    assert trained_on_warning("sam", model, "held", "all") is None
    (tmp_path / "held" / "dialogues_002.json").write_bytes((tmp_path / "train" / "dialogues_001.json").read_bytes())
    assert trained_on_warning("sam", model, "held", "all") is not None
