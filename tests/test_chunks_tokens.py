"""Chunks sized in the encoder's tokens (``Chunking(tokens=N)``): every chunk's whole encoder input (head, tool
name, window, special tokens) fits in N tokens as the encoder's own tokenizer counts, so every character of a long
memory is read by some chunk; windows cut inside a line fall on word boundaries; spans give the chunk's words back;
short memories stay one chunk that is the record; and the store, evaluate.py and training take the option.

Found by review (2026-12-06): with the 180-character windows 20 % of the coding held-out chunks were longer than the
64 tokens MiniLM reads and 2.9 % of the event text was read by no chunk; a window could end inside ``1234`` so its
fragment said ``12``."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from test_chunks import LONG, WordEncoder, _long_log, record
from test_evaluate import HashedBowRetriever

from sam_model.data.chunks import (
    Chunking,
    _in_word,
    body_of,
    chunk_record,
    chunk_records,
    label_chunks,
    own_words,
    visible_share,
)
from sam_model.evaluation.options import parse_chunking as _parse_chunking
from sam_model.evaluation.run import evaluate
from sam_model.models.bert import default_bert_path, load_tokenizer
from sam_model.models.text_encoder import TokenCount
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig


@pytest.fixture(scope="module")
def minilm() -> TokenCount:
    """The packaged encoder's tokenizer, reading 64 tokens (sam-general's max_length)."""
    return TokenCount(load_tokenizer(default_bert_path()), 64)


def _texts(seed: int = 0, n: int = 120) -> list[str]:
    """Long memories of every shape a tool result takes: code lines, one line far longer than a window, unicode
    and emoji, CRLF, tabs, runs of spaces, short lines, a word longer than a window, empty lines."""
    rng = np.random.default_rng(seed)
    words = ["def", "self", "return", "src/pkg/module_41.py", "1234", "HAT017", "naïve", "数据库", "😀", "Ω≈ç",
             "value=42,", "(arg_7)", "::", "#", "{\"k\": 3}", "\t", "    ", "x" * 12, "_private"]
    out = [LONG, "a" * 900, "word " * 400, "ab\n" * 3 + "x" * 600, "\r\n".join(["é😀 " * 30] * 8)]
    for _ in range(n):
        lines = []
        for _ in range(int(rng.integers(1, 25))):
            k = int(rng.choice([0, 1, 3, 10, 40, 150]))
            lines.append(" ".join(str(rng.choice(words)) for _ in range(k)))
        out.append(str(rng.choice(["\n", "\r\n", "\n\n"])).join(lines) + " " * int(rng.integers(0, 3)))
    return out


def _word_length(text: str, p: int) -> int:
    """The length of the run of letters, digits and underscores around position ``p``."""
    lo, hi = p, p
    while lo > 0 and (text[lo - 1].isalnum() or text[lo - 1] == "_"):
        lo -= 1
    while hi < len(text) and (text[hi].isalnum() or text[hi] == "_"):
        hi += 1
    return hi - lo


def _check_windows(body: str, spans: list[tuple[int, int]]) -> None:
    assert spans[0][0] == 0 and spans[-1][1] == len(body)
    for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
        assert s0 < s1 <= e0 < e1, spans  # no gap, each reaches past the one before


@pytest.mark.parametrize("budget", [64, 32])
def test_every_chunk_fits_the_encoder_and_every_character_is_read_by_one(minilm, budget):
    count = TokenCount(minilm.tokenizer, budget)
    chunking = Chunking(tokens=budget)
    for n, text in enumerate(_texts(budget)):
        rec = record(text, n)
        chunks = chunk_record(rec, chunking, count)
        if len(chunks) == 1:
            assert chunks[0] is rec and count(rec.text) <= budget
            continue
        body = body_of(rec)
        _check_windows(body, [c.span for c in chunks])
        for c in chunks:
            s, e = c.span
            assert count(c.text) <= budget, (c.text, count(c.text))  # read whole: [CLS] ... [SEP] included
            assert own_words(c) == body[s:e] and c.text.endswith(body[s:e]) and c.parent == rec.id
            for edge in (s, e):  # on a word boundary, unless inside a word too long for a window (900 a's)
                assert not _in_word(body, edge) or _word_length(body, edge) >= 100, (body[edge - 5:edge + 5])
        assert visible_share(chunks, count.read) == 1.0


def test_no_token_window_ends_inside_a_short_word(minilm):
    """``1234 5678`` cut as ``...12|34...``: the fragment said the value 12. Every cut falls between words here."""
    text = "\n".join(" ".join(f"{1000 + 7 * i + j}" for j in range(60)) for i in range(6))
    chunks = chunk_record(record(text), Chunking(tokens=64), minilm)
    assert len(chunks) > 6
    for c in chunks:
        s, e = c.span
        assert not _in_word(text, s) and not _in_word(text, e), (text[s - 3:s + 3], text[e - 3:e + 3])
        assert count_ok(minilm, c.text)


def test_chinese_without_spaces_is_cut_between_its_characters_with_overlap(minilm):
    """A CJK ideograph is a word of its own (BERT's tokenizer reads it so): read as letters, a line of Chinese with
    order numbers in it was one word longer than any window, so windows were cut anywhere (``HAT10|33``: the
    fragment said HAT10) and started where the one before ended (no overlap), and a number across a cut was in no
    chunk whole (4 of these 80)."""
    values = [f"HAT{1000 + i}" for i in range(80)]
    text = "".join(f"订单{v}已经发货请查收" for v in values)
    chunks = chunk_record(record(text), Chunking(tokens=64), minilm)
    assert len(chunks) > 10 and all(count_ok(minilm, c.text) for c in chunks)
    assert all(any(v in own_words(c) for c in chunks) for v in values)  # every value whole in some chunk
    for c in chunks:  # no cut inside HAT1033
        for edge in c.span:
            pair = text[max(edge - 1, 0):edge + 1]
            assert not (len(pair) == 2 and pair.isascii() and pair.isalnum()), text[edge - 4:edge + 4]
    spans = [c.span for c in chunks]
    assert all(s1 < e0 for (_, e0), (s1, _) in zip(spans, spans[1:]))  # each repeats the end of the one before
    assert visible_share(chunks, minilm.read) == 1.0


def count_ok(count: TokenCount, text: str) -> bool:
    return count(text) <= count.max_length


def test_character_windows_are_what_they_were_and_the_review_measure_holds_for_them(minilm):
    """The default is unchanged (the README's tables use it); it is what token windows fix: a chunk longer than
    the encoder reads, and so text no chunk shows it."""
    chunks = chunk_record(record(LONG), Chunking(180, 50))
    assert chunks == chunk_record(record(LONG), Chunking(180, 50), minilm)  # a counter changes nothing there
    text = " ".join(f"{1000 + i}" for i in range(400))  # one long line of numbers: windows cut inside them
    char = chunk_record(record(text), Chunking(180, 50))
    assert any(minilm(c.text) > 64 for c in char) and visible_share(char, minilm.read) < 1.0
    tok = chunk_record(record(text), Chunking(tokens=64), minilm)
    assert all(minilm(c.text) <= 64 for c in tok) and visible_share(tok, minilm.read) == 1.0


def test_short_memories_are_one_chunk_that_is_the_record(minilm):
    recs = [record(f"short memory {i} with value HAT0{i}", i) for i in range(5)]
    got = chunk_records(recs, Chunking(tokens=64), minilm)
    assert got == recs and all(a is b for a, b in zip(got, recs))
    # 300 characters of spaces and one word: long in characters, a few tokens
    sparse = record("x" + " " * 300 + "y")
    assert chunk_record(sparse, Chunking(tokens=64), minilm) == [sparse]
    assert len(chunk_record(sparse, Chunking(180, 50))) > 1


def test_a_head_that_fills_the_encoder_leaves_the_memory_whole(minilm):
    rec = record(LONG)
    head = "[result] sets " + ", ".join(f"slot_{i}" for i in range(40)) + ": "
    full = type(rec)(rec.id, rec.episode_id, rec.step, rec.kind, rec.phase, head + LONG, rec.content)
    assert chunk_record(full, Chunking(tokens=64), minilm) == [full]  # no chunk could show the encoder any of it


def test_the_label_of_a_value_is_still_the_chunk_that_says_it(minilm):
    chunks = chunk_record(record(LONG), Chunking(tokens=64), minilm)
    got = label_chunks(chunks, ["src/pkg/module_41.py"])
    assert got and all("module_41.py" in own_words(chunks[i]) for i in got)


def test_token_chunking_settings_are_checked_with_one_line_naming_the_field(minilm):
    assert Chunking.from_dict({"tokens": 64}) == Chunking(tokens=64)
    assert Chunking.from_dict({"tokens": 64, "overlap": 30}).to_dict() == {"tokens": 64, "overlap": 30}
    assert Chunking.from_dict(Chunking(tokens=48).to_dict()) == Chunking(tokens=48)
    assert Chunking().to_dict() == {"size": 180, "overlap": 50}
    for bad, match in (({"tokens": 4}, "chunking tokens must be an integer of at least 8"),
                       ({"tokens": True}, "chunking tokens must be an integer"),
                       ({"tokens": "64"}, "chunking tokens must be an integer"),
                       ({"tokens": 64, "overlap": -1}, "chunking overlap must be an integer >= 0"),
                       ({"tokens": 64, "size": 180}, "give 'size' .* or 'tokens' .* not both"),
                       ({"token": 64}, "expected true, null or an object with 'size' \\(or 'tokens'\\)")):
        with pytest.raises(ValueError, match=f"^store.chunking: {match}") as err:
            StoreConfig.from_dict({"chunking": bad}, "store")
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="needs the encoder's tokenizer"):
        chunk_record(record(LONG), Chunking(tokens=64))
    with pytest.raises(ValueError, match="tokens 96 is more than the memory encoder reads \\(max_length 64\\)"):
        Chunking(tokens=96).check_encoder(64)


class TokenWordEncoder(WordEncoder):
    """WordEncoder with a tokenizer: what a SAMEncoder gives the store (``memory_tokens``)."""

    def __init__(self, count: TokenCount):
        super().__init__()
        self.memory_tokens = count


def test_the_store_keeps_token_chunks_that_fit_and_reads_them_back(minilm, tmp_path):
    store = MemoryStore(TokenWordEncoder(minilm), StoreConfig(provenance=False, chunking={"tokens": 64}))
    ids = store.add([record(LONG, 0), record("a short one", 1)])
    assert len(ids) > 10 and ids[-1] == "e#1"
    assert all(minilm(store.get(i).text) <= 64 for i in ids)
    assert store.memory("e#0").content == f"[result] {LONG}"  # the chunks' spans give the memory back
    hit = store.search({"phase": "view_file"}, "src/pkg/module_41.py method_41 arg_41", k=1, fold=True)[0]
    s, e = hit.span
    assert hit.memory_id == "e#0" and "module_41.py" in LONG[s:e]
    back = MemoryStore.load(store.save(tmp_path / "s"), TokenWordEncoder(minilm))
    assert back.ids() == store.ids() and back.config.chunking == {"tokens": 64}
    store.update(record(LONG.replace("module_41.py", "module_41_fixed.py"), 0))
    assert all(minilm(store.get(i).text) <= 64 for i in store.ids())


def test_a_store_refuses_token_chunks_its_encoder_cannot_count():
    from sam_model.memory.encoders import HashingEncoder

    with pytest.raises(ValueError, match="^store.chunking: tokens needs the memory encoder's tokenizer, and "
                                         "HashingEncoder has none"):
        MemoryStore(HashingEncoder(64), StoreConfig(chunking={"tokens": 64}))
    with pytest.raises(ValueError, match="^store.chunking: tokens 128 is more than the memory encoder reads"):
        MemoryStore(TokenWordEncoder(TokenCount(load_tokenizer(default_bert_path()), 64)),
                    StoreConfig(chunking={"tokens": 128}))
    bare = MemoryStore(None, StoreConfig(provenance=False, chunking={"tokens": 64}), dim=4)
    with pytest.raises(ValueError, match="a store without an encoder has none"):
        bare.add([record(LONG)], np.ones((1, 4), np.float32))


def test_a_sam_encoder_counts_with_its_own_tokenizer_and_max_length(tiny_bert_dir):
    from sam_model.encoder import SAMEncoder
    from sam_model.models.sam import SAMConfig, SAMNet

    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16, max_length=32,
                           phases=["view_file"], kinds=["result"]))
    count = SAMEncoder(net, backend="torch").memory_tokens
    text = "view_file: def method_41(self, arg_41):  # src/pkg/module_41.py"
    assert count.max_length == 32 and count(text) == len(net.tokenizer(text)["input_ids"])
    store = MemoryStore(SAMEncoder(net, backend="torch"), StoreConfig(provenance=False, chunking={"tokens": 32}))
    ids = store.add([record(LONG[:1500])])
    assert len(ids) > 5 and all(count(store.get(i).text) <= 32 for i in ids)


class TokenBowRetriever(HashedBowRetriever):
    def __init__(self, count: TokenCount, dim: int = 4096):
        super().__init__(dim)
        self.memory_tokens = count


def test_evaluation_with_token_chunks_finds_the_event_and_reports_what_it_read(minilm, tmp_path):
    log = tmp_path / "long.jsonl"
    _long_log(log)
    kw = dict(baselines=("bm25",), latency_queries=2, tsne_points=10, quiet=True)
    report = evaluate(log, tmp_path / "tok", TokenBowRetriever(minilm), chunking=_parse_chunking("tokens:64"), **kw)
    chunking = report["chunking"]
    assert chunking["tokens"] == 64 and "size" not in chunking and chunking["visible"] == 1.0
    assert chunking["chunks"] > 40 and report["methods"]["bm25"]["mrr"] == 1.0
    chars = evaluate(log, tmp_path / "chars", TokenBowRetriever(minilm), chunking=_parse_chunking("on"), **kw)
    assert chars["chunking"]["size"] == 180 and chars["chunking"]["visible"] < 1.0  # the same log, read less
    rows = [json.loads(line) for line in (tmp_path / "tok" / "per_query.jsonl").read_text().splitlines()]
    assert all(r["methods"]["bm25"]["top"][0].endswith("#1") for r in rows)
    with pytest.raises(ValueError, match="no SAM retriever was given"):
        evaluate(log, tmp_path / "none", HashedBowRetriever(), chunking=Chunking(tokens=64), **kw)
    with pytest.raises(ValueError, match="^--chunking: tokens 64 is more than .*max_length 32"):
        evaluate(log, tmp_path / "small", TokenBowRetriever(TokenCount(minilm.tokenizer, 32)),
                 chunking=Chunking(tokens=64), **kw)


class CharCount:
    """Another tokenizer than MiniLM's: one token per character, with [CLS] and [SEP]. Its 64 tokens hold 62
    characters, where MiniLM's hold some 180 of code."""

    max_length = 64

    def __call__(self, text: str) -> int:
        return len(text) + 2

    def read(self, text: str) -> int:
        return min(len(text), self.max_length - 2)


class ReadingRetriever(TokenBowRetriever):
    """Keeps every memory text it is asked to encode: what its encoder would read."""

    def __init__(self, count):
        super().__init__(count)
        self.read_texts: list[str] = []

    def encode_memories(self, memories, batch_size=64, progress=False):
        self.read_texts += [m.text for m in memories]
        return super().encode_memories(memories, batch_size, progress)


def test_each_compared_model_gets_token_windows_of_its_own_tokenizer(minilm, tmp_path):
    """--compare models were searched on the retriever's token windows: a model with another tokenizer (or
    max_length) got chunks sized for the retriever's, which it reads past its max_length or cuts short. Each now
    chunks by its own count; models counting alike share one set; the paired difference is over the same decisions
    (rankings fold to the same events)."""
    log = tmp_path / "long.jsonl"
    _long_log(log)
    chars, same = ReadingRetriever(CharCount()), ReadingRetriever(TokenCount(minilm.tokenizer, 64))
    report = evaluate(log, tmp_path / "cmp", TokenBowRetriever(minilm), compare={"chars": chars, "same": same},
                      chunking=Chunking(tokens=64), baselines=("bm25",), latency_queries=2, tsne_points=10,
                      quiet=True)
    assert chars.read_texts and all(CharCount()(t) <= 64 for t in chars.read_texts)
    own = report["chunking"]["compare"]
    assert own["chars"]["visible"] == 1.0 and own["chars"]["chunks"] > report["chunking"]["chunks"]
    assert own["same"]["chunks"] == report["chunking"]["chunks"] and own["same"]["visible"] == 1.0
    assert all(minilm(t) <= 64 for t in same.read_texts)
    assert [p["a"] for p in report["intervals"]["paired"]] == ["chars", "same"]  # over the same decisions
    assert report["methods"]["bm25"]["mrr"] == 1.0  # the baselines search the retriever's windows
    kw = dict(chunking=Chunking(tokens=64), baselines=(), latency_queries=2, tsne_points=10, quiet=True)
    with pytest.raises(ValueError, match="^--chunking tokens:64: --compare bow has no memory encoder tokenizer"):
        evaluate(log, tmp_path / "bare", TokenBowRetriever(minilm), compare={"bow": HashedBowRetriever()}, **kw)
    with pytest.raises(ValueError, match=r"^--chunking \(--compare small\): tokens 64 is more than .*max_length 32"):
        evaluate(log, tmp_path / "small", TokenBowRetriever(minilm),
                 compare={"small": TokenBowRetriever(TokenCount(minilm.tokenizer, 32))}, **kw)


def test_the_chunking_flag_reads_tokens():
    assert _parse_chunking("tokens:64") == Chunking(tokens=64)
    assert _parse_chunking("tokens:48:20") == Chunking(overlap=20, tokens=48)
    assert _parse_chunking("on") == Chunking() and _parse_chunking("120:30") == Chunking(120, 30)
    for bad in ("tokens:", "tokens:x", "tokens:4", "tokens:64:-3"):
        with pytest.raises(argparse.ArgumentTypeError, match="tokens:N\\[:OVERLAP\\]"):
            _parse_chunking(bad)


def test_training_batches_hold_token_chunks_and_the_chunk_that_says_the_value_is_the_positive(minilm, tmp_path):
    import torch

    from sam_model.data.examples import episode_row
    from sam_model.data.reader import read_episodes
    from sam_model.training.batching import candidate_masks, collate_episodes

    log = tmp_path / "long.jsonl"
    _long_log(log)
    rows = [(i, episode_row(ep)) for i, ep in enumerate(read_episodes(log))]
    b = collate_episodes(rows, Chunking(tokens=64), minilm)
    assert len(b["mem_texts"]) > 20 and all(minilm(t) <= 64 for t in b["mem_texts"])
    _, positive = candidate_masks(b["q_episode"], b["q_step"], b["q_labels"], b["mem_episode"], b["mem_step"], True,
                                  b["mem_label"])
    for q in range(4):
        pos = torch.nonzero(positive[q]).flatten().tolist()
        assert pos and all(f"src/pkg/module_{40 + q}.py" in b["mem_texts"][j] for j in pos)
    with pytest.raises(ValueError, match="needs the encoder's tokenizer"):
        collate_episodes(rows, Chunking(tokens=64))


def test_a_training_run_hands_its_tokenizer_to_the_data(tmp_path, tiny_bert_dir):
    """data.chunking.tokens: the data module reads no model, so the model gives it its memory token count at setup;
    a batch made then holds chunks the model reads whole. Without it the loader is refused with the field."""
    import pytorch_lightning as pl

    from sam_model.models.sam import SAMConfig
    from sam_model.training.datamodule import AgentLogDataModule
    from sam_model.training.module import SAMLightningModule

    log = tmp_path / "long.jsonl"
    _long_log(log)
    dm = AgentLogDataModule(train=[str(log)], val_fraction=0.5, batch_episodes=4, cache_dir=str(tmp_path / "cache"),
                            chunking={"tokens": 32, "overlap": 20})
    dm.setup("fit")
    with pytest.raises(ValueError, match="^data.chunking: tokens sizes chunks by the model's tokenizer"):
        dm.train_dataloader()
    cfg = SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16, max_length=32, trainable_layers=0)
    with pytest.raises(ValueError, match="^model.store.chunking: tokens 64 is more than the memory encoder reads"):
        SAMLightningModule(net=cfg, vocab=dm.vocab, store=StoreConfig(chunking={"tokens": 64}))
    module = SAMLightningModule(net=cfg, vocab=dm.vocab, lr=1e-2, warmup_steps=1,
                                store=StoreConfig(chunking={"tokens": 32, "overlap": 20}))
    pl.Trainer(max_steps=1, limit_val_batches=0, logger=False, enable_progress_bar=False, enable_checkpointing=False,
               enable_model_summary=False, default_root_dir=tmp_path, accelerator="cpu").fit(module, dm)
    count = dm.count_tokens
    assert count is not None and count.max_length == 32
    batch = next(iter(dm.train_dataloader()))
    assert len(batch["mem_texts"]) > 20 and all(count(t) <= 32 for t in batch["mem_texts"])
    big = AgentLogDataModule(train=[str(log)], val_fraction=0.5, cache_dir=str(tmp_path / "cache"),
                             chunking={"tokens": 64})
    with pytest.raises(ValueError, match="^data.chunking: tokens 64 is more than the memory encoder reads"):
        pl.Trainer(max_steps=1, limit_val_batches=0, logger=False, enable_progress_bar=False,
                   enable_checkpointing=False, enable_model_summary=False, default_root_dir=tmp_path,
                   accelerator="cpu").fit(SAMLightningModule(net=cfg, vocab=big.vocab), big)


def test_an_export_whose_token_windows_exceed_its_encoder_names_its_config_file(tmp_path, tiny_bert_dir):
    """A config.json edited to store.chunking {tokens: 128} over a 32-token encoder was 'cannot load the retriever
    DIR: ValueError: ...' followed by the advice to give an export folder, which it was; now the file, the field and
    the fix."""
    from sam_model import SAMRetriever
    from sam_model.export import save_exported
    from sam_model.io import SAMFileError
    from sam_model.models.sam import SAMConfig, SAMNet

    net = SAMNet(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16, max_length=32))
    folder = save_exported(net, tmp_path / "export", StoreConfig(provenance=False, chunking={"tokens": 32}))
    assert SAMRetriever.load(folder).store.config.chunking == {"tokens": 32}
    config = json.loads((folder / "config.json").read_text())
    config["store"]["chunking"] = {"tokens": 128}
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(SAMFileError, match=r"config.json: store.chunking: tokens 128 is more than the memory encoder "
                                           r"reads \(max_length 32\); give tokens 32 or less; export the checkpoint") as err:
        SAMRetriever.load(folder)
    assert "\n" not in str(err.value)
