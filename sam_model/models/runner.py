"""What runs a frozen BERT's calls outside PyTorch's float32 forward (ONNX Runtime, a bfloat16 copy): made from the
weights of one moment, so it must know when they changed, and must never travel with a copy of the network.

Both :class:`sam_model.models.onnx_text.OnnxText` and :class:`sam_model.models.bf16_text.Bf16Text` are such
runners: called with one BERT call's input arrays (``TextEncoder._calls``), they return its pooled float32 vectors.
"""

from __future__ import annotations

from torch import nn


class FrozenRunner:
    """Remembers the weights' version counters of ``bert`` when made (PyTorch bumps a tensor's ``_version`` on every
    in-place change, as an optimiser step makes), so the text encoder can go back to PyTorch once they differ."""

    def __init__(self, bert: nn.Module):
        self.bert = bert
        self._versions = self._weight_versions()

    def _weight_versions(self) -> int:
        return sum(p._version for p in self.bert.parameters())

    @property
    def stale(self) -> bool:
        """True once the BERT's weights were changed in place (an optimiser step): this runner no longer matches."""
        return self._weight_versions() != self._versions

    def __reduce__(self):
        """A copy or pickle of the network carries no runner (it may be trained apart): it runs on PyTorch."""
        return (_dropped, ())


def _dropped() -> None:
    return None
