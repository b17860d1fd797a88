"""One GPU's memory stated for an instance type the catalogue lacks (`global.instanceTypes.<type>.gpuMemory`, or
`.grpo-lint.yaml` `instance-types`): the memory model (GRPO920) judges the type by it, and passes over a type
whose memory nobody stated. Checked through grpo-lint's own CLI on a shipped values file; the stated figure itself
is the user's (nvidia-smi's memory.total): no check here reaches a real GPU.

g4dn.12xlarge (4 x T4, 16 GB each; 48 vCPU, 192 GiB) is a real EC2 type the catalogue does not list; the
allocatable figures are of the shape `kubectl describe node` reports."""

from __future__ import annotations

import json

from grpo_stack.catalog.instances import lookup
from grpo_stack.cli.lint import main
from grpo_stack.paths import REPO_ROOT

BASE = str(REPO_ROOT / "values" / "qwen3-8b.yaml")
TYPE = "g4dn.12xlarge"
CLUSTER = f"global:\n  cluster: {{gpuInstanceType: {TYPE}, gpusPerNode: 4, efaPerNode: 0}}\n"
CAPACITY = "{cpu: 47810m, memory: 182198Mi, gpus: 4, efa: 0"


def lint(capsys, tmp_path, values: str, config: str | None = None):
    path = tmp_path / "overlay.yaml"
    path.write_text(values)
    argv = ["--no-cache", "--format", "json", "--select", "GRPO920"]
    if config is not None:
        (tmp_path / "cfg.yaml").write_text(config)
        argv += ["--config", str(tmp_path / "cfg.yaml")]
    code = main([*argv, "--base", BASE, str(path)])
    report = json.loads(capsys.readouterr().out or "{}")
    return code, report.get("findings", []), report.get("input_errors", [])


def test_the_type_is_uncatalogued():
    assert lookup(TYPE) is None, f"{TYPE} is catalogued now: pick another real type the catalogue lacks"


def test_a_gpu_of_unstated_memory_is_not_modelled(capsys, tmp_path):
    _, findings, _ = lint(capsys, tmp_path, CLUSTER + f"  instanceTypes:\n    {TYPE}: {CAPACITY}}}\n")
    assert not findings


def test_stated_gpu_memory_is_what_the_model_judges(capsys, tmp_path):
    code, findings, _ = lint(capsys, tmp_path,
                             CLUSTER + f"  instanceTypes:\n    {TYPE}: {CAPACITY}, gpuMemory: 15360Mi}}\n")
    errors = [f for f in findings if f["severity"] == "error"]
    assert code == 1 and errors, findings
    assert f"{TYPE} GPU: 15.0 GiB" in errors[0]["message"]


def test_the_lint_config_states_it_for_every_file(capsys, tmp_path):
    config = f"instance-types:\n  {TYPE}: {CAPACITY}, gpuMemory: 15360Mi}}\n"
    code, findings, _ = lint(capsys, tmp_path, CLUSTER, config=config)
    assert code == 1 and any(f"{TYPE} GPU: 15.0 GiB" in f["message"] for f in findings), findings


def test_a_malformed_gpu_memory_is_an_input_error(capsys, tmp_path):
    config = f"instance-types:\n  {TYPE}: {CAPACITY}, gpuMemory: lots}}\n"
    code, _, errors = lint(capsys, tmp_path, CLUSTER, config=config)
    assert code == 2 and [e["key_path"] for e in errors] == [f"instance-types.{TYPE}.gpuMemory"], errors
    assert errors[0]["line"] == 2 and errors[0]["column"] == config.splitlines()[1].index("gpuMemory") + 1, errors
