# outreach-pipeline — developer entry points. `make local` and `make test` are the set-up commands.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
# checkov pins its own boto3, so it gets its own virtual environment; the exact version keeps the
# set of built-in checks (and so the result of `make checkov`) fixed until it is bumped on purpose.
CHECKOV_VENV := .venv-checkov
CHECKOV := $(CHECKOV_VENV)/bin/checkov
CHECKOV_SPEC ?= checkov==3.3.30
ENV ?= dev
# Point at a filesystem mirror of providers (e.g. /opt/tf-plugins) to init without the registry.
TF_PLUGIN_DIR ?= $(firstword $(wildcard /opt/tf-plugins))
export TF_PLUGIN_DIR

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-z][a-z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

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

# make pytest runs the tests on this many pytest-xdist workers (0: one process, in file order). Tests
# that share a scoped fixture (the e2e stack, an applied root, the IAM evidence) share one worker:
# tests/support/worker_groups.py. More workers than cores pays: most tests wait on virtual clocks.
PYTEST_WORKERS ?= 4

.PHONY: pytest
pytest: $(VPY) ## Unit, policy and short end-to-end tests, on PYTEST_WORKERS workers
	$(VPY) -m pytest -m "not slow" -n $(PYTEST_WORKERS) --dist loadgroup --durations=40 --cpu-summary

# make test builds both virtual environments first, side by side, so that no lane builds one while
# another lane's step uses it (make pytest and make lint-policies both need .venv-checkov).
.PHONY: test
test: ## Everything CI runs: lint lint-policies except-lint terraform-check checkov pytest bench-smoke, side by side
	$(MAKE) --no-print-directory -j2 $(VPY) $(CHECKOV)
	PYTHONPATH=scripts $(VPY) -m outreach_dev.ci_steps

# --- terraform and packaging (modules/, terraform/, scripts/outreach_dev/packaging) ---
TF_CLI := PYTHONPATH=scripts $(VPY) -m outreach_dev.terraform_cli

.PHONY: package
package: $(VPY) ## Build dist/<function>.zip (reproducible; prints size and sha256)
	PYTHONPATH=scripts $(VPY) -m outreach_dev.packaging

.PHONY: validate
validate: $(VPY) ## terraform fmt -check and validate every module and environment root
	$(TF_CLI) validate

.PHONY: tf-test
tf-test: $(VPY) ## terraform test (mocked provider, plan) in every module and root with tests/
	$(TF_CLI) test

.PHONY: terraform-check
terraform-check: $(VPY) ## fmt -check, validate and terraform test everything (part of make test)
	$(TF_CLI) check

.PHONY: preflight
preflight: $(VPY) ## Read-only checks of the account ENV=dev|prod|local will deploy to (before make plan)
	PYTHONPATH=scripts $(VPY) -m outreach_operator.preflight --env $(ENV) \
		$(if $(filter local,$(ENV)),--endpoint-url http://127.0.0.1:$(LOCAL_AWS_PORT))

.PHONY: plan
plan: package ## Plan ENV=dev|prod into terraform/environments/$(ENV)/tfplan
	$(TF_CLI) plan --env $(ENV)

.PHONY: upgrade-check
upgrade-check: $(VPY) ## Plan each root against a state REV=<git revision> applied on the embedded AWS; fail on a destroy
	@test -n "$(REV)" || { echo "usage: make upgrade-check REV=<git revision>" >&2; exit 2; }
	PYTHONPATH=scripts $(VPY) -m outreach_dev.upgrade_check --rev $(REV)

.PHONY: apply
apply: $(VPY) ## Apply the plan saved by make plan ENV=...
	$(TF_CLI) apply --env $(ENV)

# --- policy checks (policies/, checkov) ---

$(CHECKOV):
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CHECKOV_VENV)/bin/python -m pip install --quiet '$(CHECKOV_SPEC)'
	touch $(CHECKOV)

.PHONY: checkov-venv
checkov-venv: $(CHECKOV) ## Create .venv-checkov (needed by make checkov and tests/policies)

.PHONY: checkov
checkov: $(VPY) $(CHECKOV) ## checkov built-in checks + policies/ over every environment root, offline
	PYTHONPATH=scripts $(VPY) -m outreach_dev.checkov_run

.PHONY: except-lint
except-lint: $(VPY) ## Fail on an except in functions/ that swallows its error
	PYTHONPATH=scripts $(VPY) -m outreach_dev.except_lint functions

.PHONY: lint-policies
lint-policies: $(VPY) $(CHECKOV) ## ruff, and mypy --strict against checkov's venv, over policies/
	$(VENV)/bin/ruff check policies
	$(VENV)/bin/ruff format --check policies
	MYPYPATH=policies $(VENV)/bin/mypy --python-executable $(CHECKOV_VENV)/bin/python --strict \
		--explicit-package-bases policies/*.py

# tests/policies runs checkov from .venv-checkov: build it before the test run.
pytest: $(CHECKOV)

# --- embedded AWS (scripts/embedded_aws) ---
SITES ?= 300
LOCAL_AWS_PORT ?= 4566
CLOCK_SCALE ?= 10

.PHONY: local
local: package ## The pipeline on loopback: embedded AWS, terraform apply, pollers, web farm, report
	SITES=$(SITES) LOCAL_AWS_PORT=$(LOCAL_AWS_PORT) CLOCK_SCALE=$(CLOCK_SCALE) \
		PYTHONPATH=functions:scripts $(VPY) -m outreach_dev.local_run

.PHONY: semantics
semantics: $(VPY) ## Delivery-semantics tests of the embedded AWS pollers
	$(VPY) -m pytest tests/embedded_aws -q

.PHONY: chaos
chaos: $(VPY) ## Fault scenarios on the embedded AWS, full size (short forms + the 3,575-task spike)
	$(VPY) -m pytest tests/e2e -m "slow or not slow" -p no:cacheprovider

# --- benchmarks (scripts/outreach_dev/bench) ---
BENCH := PYTHONPATH=functions:scripts $(VPY) -m outreach_dev.bench

.PHONY: bench
bench: $(VPY) ## Cost, scaling, cold start and makespan beside their baselines; writes bench/results.json
	$(BENCH) --log build/bench.log

.PHONY: bench-smoke
bench-smoke: $(VPY) ## Every benchmark at a tiny size (part of make test), so none rots
	$(BENCH) --smoke --log build/bench-smoke.log
