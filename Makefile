# Two commands for a fresh machine:  make demo  (main job on the embedded demo data),  make test.
# Both create .venv and install the project once (with the train, eval, dev, langchain, serve, onnx and qdrant-edge
# extras, so training, evaluation, the LangChain/LangGraph integration, the served memory, the ONNX Runtime text
# encoder and the embedded Qdrant Edge backend are tested); re-running is fast when pyproject.toml is unchanged.
# The inference path alone needs only the core install and one FAISS extra: pip install '.[cpu]'.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO   ?= data/demo/episodes.jsonl
HELDOUT ?= data/demo/heldout.jsonl
RUN    ?= checkpoints/demo
# The packaged default retriever (sam_model/pretrained/sam-general): its training configs, extra train.py
# arguments (e.g. DEFAULT_MODEL_ARGS="--data.train '[...]'" where ../shared is elsewhere), its held-out check.
DEFAULT_MODEL_CONFIGS ?= --config configs/tools.yaml --config configs/sam-general.yaml
DEFAULT_MODEL_ARGS    ?=
DEFAULT_MODEL_EVAL    ?= ../shared/data/tau-bench/gpt-4o-airline.json.gz

.PHONY: install demo test lint clean-demo default-model

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# Without CUDA, take the CPU build of torch (a local wheel here), not a multi-GB CUDA download.
	if command -v nvidia-smi >/dev/null 2>&1; then $(PY) -m pip install -q torch; \
	else $(PY) -m pip install -q torch==2.13.0; fi
	$(PY) -m pip install -q -e '.[train,eval,dev,cpu,langchain,serve,onnx,qdrant-edge]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m sam_model.data.synthetic $(DEMO) --episodes 300 --seed 0
	$(PY) -m sam_model.data.synthetic $(HELDOUT) --episodes 100 --seed 1
	$(PY) -m sam_model.data.validate $(DEMO)
	@# --overwrite: a re-run replaces the previous demo run (a fresh run into a run's folder is refused otherwise)
	$(PY) train.py fit --config configs/demo.yaml --overwrite
	@# best-epoch=NN.ckpt: the epoch with the best validation MRR (last.ckpt is the last epoch, for resuming)
	$(PY) -m sam_model.export $$(ls -t $(RUN)/best-*.ckpt | head -n 1) $(RUN)/export
	$(PY) evaluate.py --retriever $(RUN)/export --data $(HELDOUT) --out $(RUN)/eval --tensorboard $(RUN)/tb
	@echo "demo done: report $(RUN)/eval/report.md, plots $(RUN)/eval/*.png, TensorBoard: tensorboard --logdir $(RUN)/tb"

# Train the default model, pack its head into the package (sam_model.pretrained.pack) and put its held-out airline
# figures on its model card. Trained only on data whose licence permits shipping: never ../shared/data/coding-agents.
# Packed to read the first 8 tokens of a query's observation (trained on 64): ranks as well, a cheaper query
# (README "CPU speed", issue 28).
default-model: $(STAMP)
	$(PY) train.py fit $(DEFAULT_MODEL_CONFIGS) $(DEFAULT_MODEL_ARGS)
	$(PY) -m sam_model.pretrained.pack checkpoints/sam-general/export --observation-max-length 8 \
	    --command "make default-model"
	$(PY) evaluate.py --retriever sam-general --data $(DEFAULT_MODEL_EVAL) --split test \
	    --out checkpoints/sam-general/eval --card sam_model/pretrained/sam-general

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# One pytest worker per core (pytest-xdist), each test file whole on one worker (its module fixtures built once):
# the suite's time is mostly subprocesses, servers and small trainings that each use about one core. At most four
# with auto: each worker holds torch and a BERT (~1.5 GB), so a many-core machine with little memory is not filled.
TEST_WORKERS ?= auto

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest -q -n $(TEST_WORKERS) --maxprocesses 4 --dist loadfile

clean-demo:
	rm -rf $(RUN) data/demo
