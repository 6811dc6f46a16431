# PII Lab: the two set-up commands of the README are `make book` and `make test`.
# Everything runs inside .venv, created on first use. Installs use constraints.txt
# (torch pinned to the CPU wheel) so CI and the course machines agree.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
EXTRAS ?= test,book,bench,train
STAMP  := $(VENV)/.stamp-install
# Where a working C compiler exists, the install must have built the compiled masking
# core (piilab._fastmask) and `make test` tests it; without one its tests are skipped.
CC_FOR_CORE ?= $(shell $(PYTHON) -c "import sysconfig; print((sysconfig.get_config_var('CC') or 'cc').split()[0])" 2>/dev/null)
REQUIRE_COMPILED ?= $(shell printf 'int main(void){return 0;}\n' | $(CC_FOR_CORE) -x c - -o /dev/null 2>/dev/null && echo 1 || echo 0)

.PHONY: help venv install data verify lint test test-fast book notebooks clean
.PHONY: book-html nbval browser-deps asan

help:
	@echo "make book       build the whole course (data, executed chapters, HTML book)"
	@echo "make test       run the whole test suite (lint, unit/property tests, notebooks, book, browser)"
	@echo "make test-fast  the quick subset used while developing (no book, no browser, no slow)"
	@echo "make data       generate and verify the default dataset in data/"
	@echo "make book-html  build _build/html only (jupyter-book build . -W --keep-going)"
	@echo "make notebooks  regenerate and execute notebooks/{en,ja}/*.ipynb from book/{en,ja}/*.md"
	@echo "make nbval      re-run the committed notebooks and compare their outputs (strict)"
	@echo "make browser-deps  install Debian chromium + fonts-noto-cjk for the browser test"
	@echo "make asan       memory-check the compiled masking core (gcc sanitizers) on the masking tests"

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(STAMP): pyproject.toml setup.py piilab/_fastmask.c constraints.txt | $(PY)
	$(PIP) install --quiet -c constraints.txt -e ".[$(EXTRAS)]"
	@touch $@

venv: $(PY)

install: $(STAMP)

data: install
	$(VENV)/bin/piilab generate --out data
	$(VENV)/bin/piilab verify data

verify: install
	$(VENV)/bin/piilab verify data

lint: install
	$(VENV)/bin/ruff check piilab tests benchmarks tools

test-fast: install
	$(VENV)/bin/pytest -q -m "not slow and not browser"

test: install lint
	PIILAB_REQUIRE_COMPILED=$(REQUIRE_COMPILED) $(VENV)/bin/pytest -q -m "not browser"
	$(MAKE) --no-print-directory book
	$(MAKE) --no-print-directory nbval
	$(MAKE) --no-print-directory browser-deps
	PIILAB_REQUIRE_BROWSER=1 $(VENV)/bin/pytest -q -m browser

book: data
	$(MAKE) --no-print-directory book-html

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
notebooks: data
	$(PY) tools/build_notebooks.py

# Strict nbval: every stored output is compared (only quiz cells are tagged
# nbval-ignore-output); notebooks/nbval_sanitize.cfg masks addresses, timings and paths.
nbval: data
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

# The compiled masking core under AddressSanitizer/UBSan (needs gcc; not part of `make test`).
asan: install
	bash tools/asan_check.sh

clean:
	rm -rf _build .jupyter_cache .pytest_cache .ruff_cache
