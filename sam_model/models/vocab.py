"""Small string vocabularies (phases, memory kinds) with a reserved unknown id.

Phases are learned from the training logs; at inference an unseen phase maps to id 0
and the model still sees the phase name through the state text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

UNK = "<unk>"


class Vocab:
    def __init__(self, tokens: Iterable[str] = ()):
        self.itos: list[str] = [UNK]
        self.stoi: dict[str, int] = {UNK: 0}
        for t in tokens:
            self.add(t)

    def add(self, token: str) -> int:
        if token not in self.stoi:
            self.stoi[token] = len(self.itos)
            self.itos.append(token)
        return self.stoi[token]

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def ids(self, tokens: Sequence[str]) -> list[int]:
        return [self.stoi.get(t, 0) for t in tokens]

    def to_list(self) -> list[str]:
        """Tokens without the reserved unknown entry (what configs and exports store)."""
        return self.itos[1:]

    @classmethod
    def from_list(cls, tokens: Sequence[str]) -> Vocab:
        return cls(t for t in tokens if t != UNK)
