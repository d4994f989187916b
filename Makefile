# Abstract Atlas: `make run` opens the app, `make test` runs every test. Both set themselves up.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SEED_MAP := assets/maps/seeds

.PHONY: run test test-fast lint map bench screenshot clean

# requirements.txt is what the hosted app needs; requirements-pipeline.txt adds the build stack.
$(VENV)/.runtime: requirements.txt requirements-pipeline.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-pipeline.txt
	@touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt requirements-ray.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@touch $@

# TypeScript, pinned in package.json/package-lock.json, type-checks the map's browser code (tsc --strict
# over app/map_component/js): `make lint`, and a test of `make test`.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

# Browser tests drive Debian's Chromium through Playwright; never `playwright install`.
/usr/bin/chromium:
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

run: $(VENV)/.runtime
	$(PY) -m pipeline build seeds --out $(SEED_MAP) --if-stale
	$(PY) -m streamlit run streamlit_app.py

# PYTEST_ARGS: more pytest options, e.g. `make test PYTEST_ARGS=--durations=25` (what .ci/run does).
PYTEST_ARGS ?=

test: $(VENV)/.dev /usr/bin/chromium node_modules/.package-lock.json
	$(PY) -m ruff check .
	$(PY) -m pytest tests pipeline app $(PYTEST_ARGS)

# The fast tier: everything but the tests marked slow (the real model, a real build of the seeds, a
# browser, Ray): under two minutes, on tiny synthetic maps and one shared fake encoder.
test-fast: $(VENV)/.dev node_modules/.package-lock.json
	$(PY) -m pytest tests pipeline app -m "not slow" -q $(PYTEST_ARGS)

lint: $(VENV)/.dev node_modules/.package-lock.json
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	node_modules/.bin/tsc -p app/map_component/js

# Rebuild the committed seed map as a fresh build (not anchored to the map it replaces); commit it
# with tests/fixtures/seed_reference.json (`python -m tests.seed_reference write`).
map: $(VENV)/.runtime
	$(PY) -m pipeline build seeds --out $(SEED_MAP) --no-previous

# The README's screenshot of the seed map (assets/screenshot.png), taken in headless Chromium.
screenshot: $(VENV)/.dev /usr/bin/chromium
	$(PY) benchmarks/screenshot.py

bench: $(VENV)/.dev
	$(PY) benchmarks/bench_pipeline.py
	$(PY) benchmarks/bench_app.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache node_modules
