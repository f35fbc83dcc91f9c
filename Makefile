# outreach-pipeline — developer entry points. `make local` and `make test` are the set-up commands.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
ENV ?= dev
# Point at a filesystem mirror of providers (e.g. /opt/tf-plugins) to init without the registry.
TF_PLUGIN_DIR ?= $(firstword $(wildcard /opt/tf-plugins))
export TF_PLUGIN_DIR

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-z][a-z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(VPY): pyproject.toml
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -e '.[dev]'
	touch $(VPY)

.PHONY: venv
venv: $(VPY) ## Create .venv with the project and its dev extras

.PHONY: lint
lint: $(VPY) ## ruff and mypy
	$(VENV)/bin/ruff check functions tests scripts
	$(VENV)/bin/ruff format --check functions tests scripts
	$(VENV)/bin/mypy

.PHONY: fmt
fmt: $(VPY) ## Format Python and Terraform
	$(VENV)/bin/ruff format functions tests scripts
	$(VENV)/bin/ruff check --fix functions tests scripts
	@if [ -d modules ]; then terraform fmt -recursive modules terraform; fi

.PHONY: pytest
pytest: $(VPY) ## Unit, policy and short end-to-end tests
	$(VPY) -m pytest

.PHONY: test
test: lint pytest ## Everything CI runs

# --- terraform and packaging (modules/, terraform/, scripts/outreach_tools/packaging) ---

# --- policy checks (policies/, checkov) ---

# --- embedded AWS (scripts/outreach_tools/localaws) ---
