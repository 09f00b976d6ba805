"""Leftovers of the live (run-time add and search) path found at the end of stop 60, each reproduced here first."""

from __future__ import annotations

import numpy as np
import pytest
from test_reuse_recent import _replay

from sam_model.evaluation.ranking import used_ranks
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig


@pytest.mark.parametrize("rank", [0, -1, "a", True, 1.5])
def test_a_recency_search_refuses_a_bad_rank_of_an_id_not_stored(tiny_bert_dir, tmp_path, rank):
    """A rank is checked for every id of used=, stored or not: a bad one of an id the store does not hold was passed
    over without a word when no told id was stored (the check ran only once a told id was found)."""
    enc, data, _, _ = _replay(tiny_bert_dir, tmp_path, -1.0, 4.0)
    store = MemoryStore(enc, StoreConfig(provenance=False))
    store.add(data.memories)
    ex = data.examples[-1]
    q = np.asarray(enc.encode_queries([ex.state], [ex.observation], steps=[ex.step], task_starts=[ex.task_start]),
                   dtype=np.float32)[0]
    assert store.search_vector(q, 3, episode_id=ex.episode_id, used={"gone": 1})  # a good rank: searched
    with pytest.raises(ValueError, match=r"used\['gone'\] must be the rank") as err:
        store.search_vector(q, 3, episode_id=ex.episode_id, used={"gone": rank})
    assert "\n" not in str(err.value)
    ranks = {data.memories[p].id: k for p, k in used_ranks(data.memories, ex).items()}
    with pytest.raises(ValueError, match=r"used\['gone'\]"):  # beside stored ones too
        store.search_vector(q, 3, episode_id=ex.episode_id, used={**ranks, "gone": rank})
