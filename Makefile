# chainrule — `make run` serves the app, `make test` runs the whole suite.
# Both work from a fresh Debian/Ubuntu machine: they create .venv and install what is missing.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000
WORKERS ?= 1
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test bench fuzz lint bundle pyodide-stdlib venv test-venv system-deps test-deps clean

# `make run` installs the package with its server (the `server` extra) alone ($(VENV)/.installed);
# `make test`, `make bench` and `make lint` add the test and dev extras ($(VENV)/.installed-test).
$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -m venv --help >/dev/null 2>&1 || { \
	  echo "Python's venv module is missing: run 'sudo apt-get install python3-venv' and retry."; exit 1; }
	[ -x $(PY) ] || $(PYTHON) -m venv $(VENV) || { \
	  echo "Could not create $(VENV): install python3-venv (sudo apt-get install python3-venv)."; exit 1; }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[server]'
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[server,test,dev]'
	touch $@

venv: $(VENV)/.installed
test-venv: $(VENV)/.installed-test

# Graphviz draws the layout; Chromium runs the browser tests. apt-get only when missing.
system-deps:
	@if ! command -v dot >/dev/null 2>&1; then \
	  if command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Graphviz with apt-get..."; \
	    $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz \
	    || { echo "Could not install Graphviz: run 'sudo apt-get install graphviz' (or your system's equivalent) and retry."; exit 1; }; \
	  else \
	    echo "Graphviz ('dot') is missing and apt-get is not available: install Graphviz from your package manager, then retry."; exit 1; \
	  fi; \
	fi

# The live class's tests: Debian's redis-server (started on a free port by a fixture) and zbar
# (zbarimg reads the QR code on the teacher's screen back); Node.js runs the page's evaluator
# against the engine (tests/engine/test_page_evaluator.py).
test-deps: system-deps
	@if [ ! -x /usr/bin/redis-server ] || [ ! -x /usr/bin/zbarimg ]; then \
	  if command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing redis-server and zbar-tools with apt-get for the live class's tests..."; \
	    $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server zbar-tools \
	    || { echo "Could not install them: run 'sudo apt-get install redis-server zbar-tools' and retry."; exit 1; }; \
	  else \
	    echo "redis-server or zbarimg is missing and apt-get is not available: install Redis and zbar, then retry."; exit 1; \
	  fi; \
	fi
	@if ! command -v node >/dev/null 2>&1; then \
	  if command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Node.js with apt-get: the page's evaluator is tested under it..."; \
	    $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs \
	    || { echo "Could not install Node.js: run 'sudo apt-get install nodejs' and retry."; exit 1; }; \
	  else \
	    echo "Node.js (node) is missing and apt-get is not available: install it, then retry."; exit 1; \
	  fi; \
	fi
	@if [ ! -x /usr/bin/chromium ]; then \
	  if command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Chromium with apt-get for the browser tests..."; \
	    $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
	    || { echo "Could not install Chromium: run 'sudo apt-get install chromium' and retry."; exit 1; }; \
	  else \
	    echo "Chromium (/usr/bin/chromium) is missing and apt-get is not available: install it, then retry."; exit 1; \
	  fi; \
	fi

# `chainrule serve` runs uvicorn with the options app/cli.py uvicorn_options gives (and says
# why), after checking that it can listen on HOST:PORT. X-Forwarded-For is believed only from
# FORWARDED_ALLOW_IPS (your proxy's address; none by default).
FORWARDED_ALLOW_IPS ?=
run: system-deps venv
	FORWARDED_ALLOW_IPS='$(FORWARDED_ALLOW_IPS)' $(VENV)/bin/chainrule serve \
	  --host $(HOST) --port $(PORT) --workers $(WORKERS)

# The suite runs on TEST_WORKERS processes (pytest-xdist; 2 by default, one a core), each with its
# own server, Chromium, Redis and free ports; a file's tests stay on one worker (--dist loadfile),
# so a module's fixture (the sandbox's one loaded Pyodide) loads once. The files are handed out in
# the order tests/conftest.py collects them (--no-loadscope-reorder): the slow layers first, so
# the last files are short ones and neither worker waits long for the other at the end.
# The package is compiled first: with PYTHONDONTWRITEBYTECODE set (as on this project's
# machines) every process the suite starts (servers, their pool workers, kernels, CLI runs) would
# compile it again, about 0.25 s of CPU each.
# Measured on this project's 2-core machine: docs/development.md. TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2
test: test-deps test-venv
	PYTHONDONTWRITEBYTECODE= $(PY) -m compileall -q -x '/(\.venv|build|node_modules|static)/' .
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# Each script prints a markdown table (about 15 minutes in all; bench/install.py half a minute to
# one (pip fetches the wheel's dependencies); bench/load.py takes 4.5 of them,
# bench/sandbox.py 2, bench/classroom.py 3: it starts redis-server, which test-deps installs;
# bench/notebook_show.py 2: JupyterLab, three kernels).
bench: test-deps test-venv
	$(PY) bench/engine.py
	$(PY) bench/demo.py
	$(PY) bench/demo_page.py
	$(PY) bench/notebook_show.py
	$(PY) bench/api.py
	$(PY) bench/tensors.py
	$(PY) bench/layout_cost.py
	$(PY) bench/page.py
	$(PY) bench/view_3d.py
	$(PY) bench/sandbox.py
	$(PY) bench/load.py
	$(PY) bench/classroom.py
	$(PY) bench/install.py

fuzz: test-venv
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-100000} $(PY) -m pytest tests -k fuzz -p no:cacheprovider --timeout=0

# The embeddable player (static/embed/: the notebook widget's and the one-file HTML's script),
# built with esbuild from npm at the version pinned in app/build/bundle.py. Run after changing any
# module or style it is built from: tests/app/test_bundle.py fails until you do.
bundle: venv
	$(PY) -m chainrule.app.build.bundle

# The sandbox's standard library compiled to bytecode by Pyodide itself (tools/pyodide_stdlib_pyc.mjs:
# a cold start 10 s faster): from npm's python_stdlib.zip of the vendored Pyodide's version.
PYODIDE_VERSION := 314.0.7
pyodide-stdlib:
	@d=$$(mktemp -d) && cd $$d && npm pack -q pyodide@$(PYODIDE_VERSION) >/dev/null \
	  && tar xzf pyodide-$(PYODIDE_VERSION).tgz package/python_stdlib.zip \
	  && node $(CURDIR)/tools/pyodide_stdlib_pyc.mjs $$d/package/python_stdlib.zip \
	     $(CURDIR)/static/vendor/pyodide/python_stdlib.zip && rm -rf $$d

lint: test-venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
