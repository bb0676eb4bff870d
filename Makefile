# Two commands do all set-up on a fresh machine: `make lab` (the main job: JupyterLab
# on the tutorials, with the dtfnb panel) and `make test` (the whole suite, what CI
# runs). Both create .venv on first use. `make demo` is the terminal tour.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup lab demo test lint protos tfvenv

setup: $(VENV)/.installed

# Installing also builds the JupyterLab panel (extension/, needs node) and copies it
# into the venv, so a change to its sources reinstalls.
$(VENV)/.installed: pyproject.toml extension/package.json extension/yarn.lock \
		$(wildcard extension/src/*.ts extension/style/*)
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-compile -e '.[dev]'
	touch $@

# TensorFlow for the differential tier (tests/differential/) and the benchmarks' comparisons:
# its own interpreter, never a dependency of dtfnb. Without it the tier skips.
TF_VENV ?= .tfvenv
tfvenv: $(TF_VENV)/.installed

# tf-keras is TensorFlow's legacy Keras, which tf.compat.v1.layers needs under Keras 3
# (the tier's worker sets TF_USE_LEGACY_KERAS=1); --no-deps, as it asks for `tensorflow`,
# which tensorflow-cpu provides under another name.
$(TF_VENV)/.installed: Makefile
	python3 -m venv $(TF_VENV)
	$(TF_VENV)/bin/python -m pip install -q --upgrade pip
	$(TF_VENV)/bin/python -m pip install -q "tensorflow-cpu==2.21.*"
	$(TF_VENV)/bin/python -m pip install -q --no-deps "tf-keras==2.21.*"
	touch $@

# LAB_ARGS passes options through, e.g. LAB_ARGS="--no-browser --port=9999".
lab: setup
	$(VENV)/bin/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=notebooks \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

demo: setup
	$(PY) -m dtfnb.tour

lint: setup
	$(VENV)/bin/ruff check dtfnb tests benchmarks examples

# The suite and the tutorials in one run: nbval runs every cell of notebooks/ and compares
# the outputs of cells marked NBVAL_CHECK_OUTPUT (notebooks/conftest.py hides CUDA from
# their kernels). TEST_WORKERS processes share the files, one file (a notebook) to each at
# a time, in the order tests/conftest.py puts them: most tests wait on processes, sockets
# and deadlines, so two keep two cores busy.
TEST_WORKERS ?= 2
test: lint
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=20 \
		tests notebooks \
		--nbval-lax --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg

# Regenerates dtfnb/protos/*_pb2.py; tests/packaging/test_protos.py fails when they are stale.
protos: setup
	$(PY) -m grpc_tools.protoc -Iprotos --python_out=. protos/dtfnb/protos/*.proto
