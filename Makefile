# tinycompile: the two set-up commands of the README.
#   make demo   install what is missing, build the bundled example for stm32f746, run it in QEMU
#   make test   install what is missing, run the test suite
PY ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PKGS := gcc make gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
STAMP := .setup.stamp

.PHONY: demo test setup lint models bench clean

$(STAMP): pyproject.toml
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	$(PY) -m pip install -q -e '.[test]'
	@touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(PY) -m tinycompile.cli plan examples/digits.tflite --board stm32f746
	$(PY) -m tinycompile.cli build examples/digits.tflite --board stm32f746 -o build/digits-stm32f746
	$(PY) -m tinycompile.cli run examples/digits.tflite --board stm32f746 --emulator \
	  --inputs examples/digits_inputs.npy --outputs build/digits_outputs.npy

test: $(STAMP)
	$(PY) -m pytest -q -n auto

lint:
	$(PY) -m ruff check tinycompile tests benchmarks
	$(PY) -m ruff format --check tinycompile tests benchmarks

models:  # regenerate the committed test models (needs tensorflow-cpu and scikit-learn)
	$(PY) -m pip install -q -e '.[models]'
	for m in tests/modelgen/ops_*.py tests/modelgen/whole_models.py; do \
	  $(PY) -m tests.modelgen.$$(basename $$m .py) || exit 1; done

bench: $(STAMP)
	$(PY) benchmarks/bench_compile.py
	$(PY) benchmarks/bench_emulator.py

clean:
	rm -rf build $(STAMP)
