# The dev loop (see CONTRIBUTING.md). Run `bash scripts/install.sh` once first.
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install lint format typecheck dvc-yaml test test-slow repro ci

install:
	bash scripts/install.sh

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format:
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

typecheck:
	$(BIN)/mypy

dvc-yaml:
	$(BIN)/ragcourt dvc generate

test:
	$(BIN)/python -m pytest

test-slow:
	$(BIN)/python -m pytest -m slow

repro:
	. $(BIN)/activate && dvc repro

ci:
	bash .ci/run
