# tinycompile: the two set-up commands of the README.
#   make demo   install what is missing, build the bundled example for stm32f746, run it in QEMU
#   make test   install what is missing, run the test suite
# Both create a virtualenv .venv (with $(BASE_PY), the system's python3 by default) and install
# the project into it with `pip install -e '.[test]'`, so they work with a distribution Python
# that refuses pip installs (PEP 668, Debian 12 / Ubuntu 24.04). `python3-venv` is installed
# from apt when the system Python cannot make a virtualenv.
# To use an interpreter of your own instead of .venv: make PY=/path/to/python test
BASE_PY ?= python3
VENV := .venv
PY ?= $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PKGS := gcc make gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
# The stamp says "installed for this pyproject.toml": kept inside .venv, so that removing .venv
# also forces a new install; beside the Makefile when PY is an interpreter of your own.
USE_VENV := $(filter $(VENV)/bin/python,$(PY))
STAMP := $(if $(USE_VENV),$(VENV)/.setup.stamp,.setup.stamp)

.PHONY: demo test setup lint models bench clean

$(STAMP): pyproject.toml setup.py
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$(USE_VENV)" ] && ! $(VENV)/bin/python -m pip --version >/dev/null 2>&1 \
	   && ! $(BASE_PY) -c 'import ensurepip, venv' >/dev/null 2>&1; then \
	  missing="$$missing python3-venv"; \
	fi; \
	if [ -n "$$missing" ]; then \
	  echo "installing (apt):$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@if [ -n "$(USE_VENV)" ] && ! $(VENV)/bin/python -m pip --version >/dev/null 2>&1; then \
	  $(BASE_PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	    || { echo "tinycompile needs Python >= 3.11: make BASE_PY=python3.12 ..."; exit 1; }; \
	  echo "creating $(VENV) with $$(command -v $(BASE_PY)) ($$($(BASE_PY) --version 2>&1))"; \
	  rm -rf $(VENV); \
	  $(BASE_PY) -m venv $(VENV) || { rm -rf $(VENV); \
	    echo "'$(BASE_PY) -m venv' failed: on Debian/Ubuntu, apt-get install python3-venv"; exit 1; }; \
	  $(VENV)/bin/python -m pip install -q --upgrade pip; \
	fi
	$(PY) -m pip install -q -e '.[test]'
	@touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(PY) -m tinycompile.cli plan examples/digits.tflite --board stm32f746
	$(PY) -m tinycompile.cli build examples/digits.tflite --board stm32f746 -o build/digits-stm32f746
	$(PY) -m tinycompile.cli run examples/digits.tflite --board stm32f746 --emulator \
	  --inputs examples/digits_inputs.npy --outputs build/digits_outputs.npy

# the tests also render report.html in a headless browser (tests/test_report_html.py) and run
# onnxruntime on an emulated AVX2 CPU without VNNI (qemu-user: tests/test_onnx_cpus.py), and
# flash through a GDB server and OpenOCD (tests/test_flash_gdb.py, test_flash_probe.py), and build
# exported libraries as a user's project would: CMake, C++ for the host and for Cortex-M
# (tests/test_export.py)
TEST_APT_PKGS := chromium qemu-user gdb-multiarch openocd cmake g++ libstdc++-arm-none-eabi-newlib
test: $(STAMP)
	@missing=""; for p in $(TEST_APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing (apt, for the tests):$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	$(PY) -m pytest -q -n auto --durations=15

lint: $(STAMP)
	$(PY) -m ruff check tinycompile tests benchmarks
	$(PY) -m ruff format --check tinycompile tests benchmarks

models: $(STAMP)  # regenerate the committed test models (needs tensorflow-cpu and scikit-learn)
	$(PY) -m pip install -q -e '.[models]'
	for m in tests/modelgen/ops_*.py tests/modelgen/whole_models.py tests/modelgen/real_models.py; do \
	  $(PY) -m tests.modelgen.$$(basename $$m .py) || exit 1; done

# bench: compile time and arena vs TFLM, then instructions per inference in QEMU per model and
# core (portable vs fast kernels, vs issue 11's TFLM + CMSIS-NN figures). Options of the second:
#   make bench BENCH_ARGS="kws_dscnn --cores M4,M0+ -n 1 --json"
BENCH_ARGS ?=
bench: $(STAMP)
	$(PY) benchmarks/bench_compile.py
	$(PY) benchmarks/bench_emulator.py $(BENCH_ARGS)

clean:  # build outputs and the install stamps; `rm -rf .venv` removes the virtualenv too
	rm -rf build .setup.stamp $(VENV)/.setup.stamp
