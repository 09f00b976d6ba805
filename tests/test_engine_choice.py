"""A training run was silent for ~27 s after Lightning's "Seed set to 0" on 2 CPU cores: 23 s of it went to timing
which engine (ONNX Runtime, PyTorch in bfloat16, PyTorch) runs the frozen BERT. The fit now says what it is timing
before it starts, and what it chose after, as plain flushed lines (a log file has them too)."""

from __future__ import annotations

from types import SimpleNamespace


def test_a_fit_says_it_is_choosing_the_text_engine_before_timing_and_the_verdict_after(
        tiny_bert_dir, small_demo_logs, tmp_path, monkeypatch, capsys):
    from sam_model.models import bf16_text, onnx_text
    from sam_model.models.sam import SAMConfig
    from sam_model.models.text_encoder import TextEncoder
    from sam_model.training.datamodule import AgentLogDataModule
    from sam_model.training.module import SAMLightningModule

    monkeypatch.setenv(bf16_text.AUTO_ENV, "1")
    monkeypatch.setattr(bf16_text, "native", lambda: True)  # two engines to time on any CPU (bfloat16 emulated)
    monkeypatch.setattr(onnx_text, "available", lambda: False)
    said_before: list[str] = []
    use_backend = TextEncoder.use_backend

    def timed(self, *args, **kwargs):  # what was out before the timing began
        said_before.append(capsys.readouterr().out)
        return use_backend(self, *args, **kwargs)

    monkeypatch.setattr(TextEncoder, "use_backend", timed)
    train, _ = small_demo_logs
    dm = AgentLogDataModule(train=[str(train)], val_fraction=0.25, batch_episodes=8, cache_dir=str(tmp_path / "c"))
    module = SAMLightningModule(SAMConfig(bert_path=str(tiny_bert_dir), dim=8, hidden=16, proj_hidden=16),
                                vocab=dm.vocab, text_cache_dir=str(tmp_path / "text"))
    module._trainer = SimpleNamespace(datamodule=dm, world_size=1, global_rank=0)
    capsys.readouterr()
    module.on_fit_start()

    assert len(said_before) == 1
    assert said_before[0].splitlines()[-1] == ("choosing the text encoder's engine (timing PyTorch bfloat16 against "
                                               "PyTorch on 6 call shapes, 3 times each) ...")
    after = capsys.readouterr().out.splitlines()
    verdict = [line for line in after if line.startswith("text encoder's engine: ")]
    assert len(verdict) == 1, after
    assert "PyTorch bfloat16" in verdict[0] and " ms" in verdict[0] and "chosen in" in verdict[0]
    assert after.index(verdict[0]) < next(i for i, line in enumerate(after) if line.startswith("frozen BERT pass"))
