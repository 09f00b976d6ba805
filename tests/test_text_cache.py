"""The text-vector cache of a frozen BERT: bounded where a process runs for long (least recently used out first),
unbounded for training's frozen pass and for batch jobs that load a whole on-disk cache, off where tenants share
the encoder. The vectors never depend on it, only BERT's work does."""

from __future__ import annotations

import pytest
import torch
from test_model import make_net

from sam_model.data.synthetic import write_synthetic
from sam_model.encoder import TEXT_CACHE
from sam_model.evaluation.data import load_eval_data

TEXTS = ["phase: book | needs: date", "ok, go ahead", "which dates work for you?", "phase: pay", "Lisbon to Paris"]


def text_encoder():
    return make_net(cache_text=True).eval().state_encoder.text_encoder


def test_a_bounded_cache_drops_the_least_recently_used_text_and_keeps_the_vectors():
    enc = text_encoder()
    with torch.no_grad():
        ref = enc._encode(TEXTS)  # no cache involved
        enc.limit_cache(3)
        a, b, c, d, e = TEXTS
        enc([a, b, c])
        enc([a])  # a hit: a is now the most recently used, b the least
        n = enc.encoded
        got = enc([d, a])
    assert enc.encoded - n == 1  # d encoded, a read from the cache
    assert set(enc._cache) == {c, d, a}  # b fell out, not a (LRU, not first in first out)
    assert torch.allclose(got, ref[[3, 0]], atol=1e-6)
    with torch.no_grad():
        again = enc([e, b, a, e])  # more texts in one call than the bound holds: all come back, in order
    assert torch.allclose(again, ref[[4, 1, 0, 4]], atol=1e-6)
    assert len(enc._cache) == 3


def test_a_zero_bound_caches_nothing_and_none_keeps_everything():
    enc = text_encoder()
    enc.limit_cache(0)
    with torch.no_grad():
        enc(TEXTS)
        n = enc.encoded
        enc(TEXTS)
    assert not enc._cache and enc.encoded - n == len(TEXTS)
    enc.limit_cache(None)
    with torch.no_grad():
        enc(TEXTS * 2)
    assert len(enc._cache) == len(TEXTS)
    enc.limit_cache(2)  # a bound set later trims at once, oldest first
    assert list(enc._cache) == TEXTS[-2:]


@pytest.mark.parametrize("bad", [-1, 1.5, "10", True])
def test_a_bad_bound_is_a_one_line_error(bad):
    from sam_model.retriever import SAMRetriever

    with pytest.raises(ValueError, match=r"text_cache \(vectors kept\) must be an integer >= 0"):
        text_encoder().limit_cache(bad)
    with pytest.raises(ValueError, match=r"text_cache \(vectors kept\) must be an integer >= 0"):
        SAMRetriever.load("sam-general", text_cache=bad)  # the bound's fault, not the folder's


def test_a_loaded_retriever_keeps_only_recent_texts_and_ranks_as_without_a_cache(tiny_bert_dir, tmp_path):
    from serving import tiny_export

    from sam_model.retriever import SAMRetriever

    folder = tiny_export(tiny_bert_dir, tmp_path / "export")
    log = tmp_path / "log.jsonl"
    write_synthetic(log, 6, seed=3)
    data = load_eval_data(log, "episode")
    assert len(data.memories) > 40
    plain = SAMRetriever.load(folder, device="cpu")
    assert plain.net.state_encoder.text_encoder.cache_entries == TEXT_CACHE
    small = SAMRetriever.load(folder, device="cpu", text_cache=16)
    none = SAMRetriever.load(folder, device="cpu", text_cache=0)
    for r in (small, none):
        r.store.add(data.memories)
    text = small.net.state_encoder.text_encoder
    assert len(text._cache) <= 16
    for ex in data.examples[:12]:
        hits = [r.search(ex.state, ex.observation, k=5, episode_id=ex.episode_id) for r in (small, none)]
        assert [h.id for h in hits[0]] == [h.id for h in hits[1]]
        assert [h.score for h in hits[0]] == pytest.approx([h.score for h in hits[1]], abs=1e-5)
    assert len(text._cache) <= 16 and not none.net.state_encoder.text_encoder._cache
    n = text.encoded  # the agent asks again with the same state: only what it has not seen runs BERT
    ex = data.examples[11]
    small.search(ex.state, ex.observation, k=5, episode_id=ex.episode_id)
    assert text.encoded == n


def test_an_evaluation_with_an_on_disk_cache_holds_all_of_it(tiny_bert_dir, tmp_path):
    from serving import tiny_export

    from sam_model.evaluation.run import text_caches
    from sam_model.retriever import SAMRetriever

    r = SAMRetriever.load(tiny_export(tiny_bert_dir, tmp_path / "export"), device="cpu")
    (enc, path), = text_caches([r], tmp_path / "cache")
    assert enc.cache_entries is None


def test_a_bounded_cache_holds_its_own_vectors_not_rows_of_a_large_batch():
    enc = text_encoder()
    enc.limit_cache(2)
    with torch.no_grad():
        enc([f"memory text {i}" for i in range(50)])
    kept = [enc._cache[t] for t in enc._cache]
    assert len(kept) == 2
    assert all(v.untyped_storage().nbytes() == v.numel() * v.element_size() for v in kept)  # not the batch's 50 rows


def test_threads_sharing_a_tiny_bounded_cache_get_the_right_vectors():
    import threading

    enc = text_encoder()
    texts = [f"state {i} | needs: date" for i in range(40)]
    with torch.no_grad():
        ref = dict(zip(texts, enc._encode(texts)))
    enc.limit_cache(3)  # far fewer than the texts: every thread evicts what the others just cached
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def work(t: int) -> None:
        barrier.wait()
        try:
            for r in range(120):  # without the cache's lock, ~4 runs in 10 broke the bound or the order here
                batch = [texts[(t * 7 + r * 3 + j) % len(texts)] for j in range(4)]
                with torch.no_grad():
                    got = enc(batch)
                for text, v in zip(batch, got):
                    assert torch.allclose(v, ref[text], atol=1e-5), text
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    pool = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    assert errors == [] and len(enc._cache) <= 3
    assert len(list(enc._cache)) == len(enc._cache)  # its order holds every entry it counts


def test_a_copied_or_pickled_encoder_gets_its_own_cache_and_lock():
    import copy
    import pickle

    enc = text_encoder()
    enc.limit_cache(4)
    with torch.no_grad():
        enc(TEXTS[:2])
    for twin in (copy.deepcopy(enc), pickle.loads(pickle.dumps(enc))):
        assert list(twin._cache) == list(enc._cache) and twin.cache_entries == 4
        assert twin._cache._lock is not enc._cache._lock
        with torch.no_grad():
            twin(TEXTS[2:])
        assert len(enc._cache) == 2 and len(twin._cache) == 4


def test_a_frozen_bert_put_in_training_mode_still_encodes_without_dropout():
    enc = text_encoder()
    with torch.no_grad():
        ref = enc._encode(TEXTS)
    enc.bert.train()  # by hand, around the text encoder's own train()
    with torch.no_grad():
        got = enc(TEXTS)
    assert not enc.bert.training and torch.allclose(got, ref, atol=1e-6)
    enc.train()  # the network's train(): a frozen BERT stays in eval mode
    assert not enc.bert.training and not any(m.training for m in enc.bert.modules())


def test_a_cache_file_of_the_wrong_shape_is_ignored_and_replaced(tmp_path):
    """A cache whose texts and vectors differ in number (or of another width) loaded partly, and every later save
    failed with an IndexError; a cache holding a list was an AttributeError."""
    enc = text_encoder()
    with torch.no_grad():
        enc(TEXTS[:2])
    path = tmp_path / "cache.pt"
    enc.save_cache(path)
    blob = torch.load(path, weights_only=True)
    for bad in ({**blob, "texts": blob["texts"] + ["extra"]}, {**blob, "vectors": blob["vectors"][:, :3]}, [1, 2]):
        torch.save(bad, path)
        fresh = text_encoder()
        assert fresh.load_cache(path) == 0
        with torch.no_grad():
            fresh(TEXTS[2:4])
        fresh.save_cache(path)  # replaces the bad file
        assert text_encoder().load_cache(path) == 2


def test_concurrent_cache_saves_keep_both_writers_texts(tmp_path, monkeypatch):
    """Two runs saving one cache: each reads, merges and writes under the file's merge lock, so neither drops the
    other's texts (two threads here; the lock is a file lock, so processes too). The read is slowed so that,
    without the lock, both read the file before either writes and the second write drops the first's texts."""
    import threading
    import time

    from sam_model.models.text_encoder import TextEncoder

    real = TextEncoder._read

    def slow(self, path):
        out = real(self, path)
        time.sleep(0.3)
        return out

    monkeypatch.setattr(TextEncoder, "_read", slow)
    path = tmp_path / "cache.pt"
    encoders = [text_encoder(), text_encoder()]
    with torch.no_grad():
        encoders[0](TEXTS[:2])
        encoders[1](TEXTS[2:5])
    gate = threading.Barrier(2)

    def save(e):
        gate.wait()
        e.save_cache(path)

    threads = [threading.Thread(target=save, args=(e,)) for e in encoders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert text_encoder().load_cache(path) == 5


def test_encoders_differing_only_in_precision_never_share_a_cache_file(tmp_path):
    """The cache's key names the precision as well as the BERT: a bfloat16 encoder and a float32 one of the same
    BERT and max_length write two files, and neither reads the other's vectors, even pointed at its file. float32's
    name carries no precision (a file without a recorded precision reads as float32's)."""
    f32, bf16 = text_encoder(), text_encoder()
    bf16.use_backend("bf16")
    assert f32.fingerprint() == bf16.fingerprint() and (f32.precision, bf16.precision) == ("float32", "bfloat16")
    a, b = f32.cache_file(tmp_path), bf16.cache_file(tmp_path)
    assert a != b and a.name == f"text-vectors-{f32.cache_key()}.pt"
    with torch.no_grad():
        f32(TEXTS[:2])
        bf16(TEXTS[2:])
    f32.save_cache(a)
    bf16.save_cache(b)
    reader = text_encoder()
    reader.use_backend("bf16")
    assert (text_encoder().load_cache(a), text_encoder().load_cache(b)) == (2, 0)
    assert (reader.load_cache(b), reader.load_cache(a)) == (3, 0)
    blob = torch.load(a, weights_only=True)
    del blob["precision"]  # a file written before the key had the precision
    torch.save(blob, a)
    assert (text_encoder().load_cache(a), reader.load_cache(a)) == (2, 0)
    was = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")  # TF32 on a GPU, bfloat16 passes on a CPU: other vectors
        assert f32.precision == "float32-matmul-high" and f32.cache_file(tmp_path) not in (a, b)
        assert bf16.cache_file(tmp_path) == b  # bfloat16 alone runs no float32 product
    finally:
        torch.set_float32_matmul_precision(was)


def test_training_names_its_cache_file_for_the_precision_its_frozen_pass_runs_in(tiny_bert_dir, small_demo_logs,
                                                                                 tmp_path, monkeypatch):
    """Backend auto on a CPU with bfloat16 units runs the frozen pass in bfloat16; the file's name was chosen
    before the backend, so those vectors went into the float32 file that TextEmbedder and float32 readers share."""
    from types import SimpleNamespace

    from sam_model.models import bf16_text, onnx_text
    from sam_model.models.sam import SAMConfig
    from sam_model.training.datamodule import AgentLogDataModule
    from sam_model.training.module import SAMLightningModule

    monkeypatch.setenv(bf16_text.AUTO_ENV, "1")
    monkeypatch.setattr(bf16_text, "native", lambda: True)  # the units, on any CPU (emulated: only slower)
    monkeypatch.setattr(onnx_text, "available", lambda: False)
    train, _ = small_demo_logs
    dm = AgentLogDataModule(train=[str(train)], val_fraction=0.25, batch_episodes=8, cache_dir=str(tmp_path / "c"))
    module = SAMLightningModule(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16),
                                vocab=dm.vocab, text_cache_dir=str(tmp_path / "text"))
    module._trainer = SimpleNamespace(datamodule=dm, world_size=1, global_rank=0)
    module.on_fit_start()
    enc = module.net.state_encoder.text_encoder
    saved = list((tmp_path / "text").glob("*.pt"))
    assert [p.name for p in saved] == [f"text-vectors-{enc.cache_key()}-bfloat16.pt"]  # not the float32 name
    assert torch.load(saved[0], weights_only=True)["precision"] == "bfloat16"
