# The two commands: `make app` (demo workspace in the browser) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.installed-runtime
STAMP := $(VENV)/.installed-dev
# Label Studio pins older numpy/opencv/pyarrow than vadscene: the round-trip tests run the real
# server from a venv of its own.
LABEL_STUDIO := .venv-labelstudio
LABEL_STUDIO_STAMP := $(LABEL_STUDIO)/.installed
DEMO := demo-workspace
PORT ?= 8501

.PHONY: app test test-fast demo lint schema clean

# `make app` needs only the runtime dependencies; the tests add the dev extra.
$(RUNTIME): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(STAMP): $(RUNTIME)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

$(LABEL_STUDIO_STAMP): tests/support/labelstudio-requirements.txt
	test -x $(LABEL_STUDIO)/bin/python || $(PYTHON) -m venv $(LABEL_STUDIO)
	$(LABEL_STUDIO)/bin/python -m pip install --quiet --upgrade pip
	$(LABEL_STUDIO)/bin/python -m pip install --quiet -r tests/support/labelstudio-requirements.txt
	touch $@

$(DEMO)/vadscene.yaml: | $(RUNTIME)
	$(BIN)/vadscene demo $(DEMO)

demo: $(DEMO)/vadscene.yaml

app: $(RUNTIME) $(DEMO)/vadscene.yaml
	@echo "The vadscene command is in $(BIN): run '. $(BIN)/activate' in another terminal, then"
	@echo "'vadscene --help' (or 'vadscene status $(DEMO)'). Stop the app with Ctrl+C."
	$(BIN)/vadscene app $(DEMO) --port $(PORT)

test: $(STAMP) $(LABEL_STUDIO_STAMP)
	@test -x /usr/bin/chromium || echo "\n*** Chromium not found: browser tests will be SKIPPED (apt-get install chromium) ***\n"
	$(BIN)/python -m pytest

# Everything but the browser, durability, slow and 1,000-example fuzz tests.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -n 2 -m "not browser and not durability and not slow"

lint: $(STAMP)
	$(BIN)/ruff check vadscene app tests bench
	$(BIN)/ruff format --check vadscene app tests bench
	$(BIN)/mypy vadscene app

# Regenerate the shipped release JSON Schema from the pydantic models.
schema: $(STAMP)
	$(BIN)/python -c "import json; from vadscene.release.releases import release_json_schema, shipped_schema_path as p; p().parent.mkdir(exist_ok=True); p().write_text(json.dumps(release_json_schema(), indent=2) + '\n')"

clean:
	rm -rf $(VENV) $(LABEL_STUDIO) $(DEMO) .pytest_cache .ruff_cache .mypy_cache
