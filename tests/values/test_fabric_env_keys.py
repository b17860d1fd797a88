"""The fabric settings have typed keys (issue: `extraEnv` with NCCL_SOCKET_IFNAME, FI_PROVIDER,
FI_EFA_USE_DEVICE_RDMA or NCCL_NET_GDR_LEVEL was refused "use its typed key instead", and no such key existed, so a
cluster whose pod interface differs could not run). Each variable in extraEnv is refused naming the key that sets
it; that key, set, is accepted by grpo-lint and rendered on every Ray container by grpo-render and the real Helm;
a pasted token under a variable the chart sets from a Secret is called a secret, with the Secret key to set."""

from __future__ import annotations

import subprocess

import pytest
import yaml
from grpo_stack.lint.engine import lint_values
from grpo_stack.render import render
from grpo_stack.values import load_values_file, merge_user_values

from tests.conftest import REPO_ROOT

BASE = str(REPO_ROOT / "values" / "qwen3-8b.yaml")
# variable -> (typed key under raycluster, value set, what the pods get)
FABRIC = {"NCCL_SOCKET_IFNAME": ("nccl.socketIfname", "=ens5", "=ens5"),
          "NCCL_NET_GDR_LEVEL": ("nccl.netGdrLevel", "SYS", "SYS"),
          "FI_PROVIDER": ("libfabric.provider", "tcp", "tcp"),
          "FI_EFA_USE_DEVICE_RDMA": ("libfabric.efaUseDeviceRdma", False, "0")}


def _write(tmp_path, name: str, doc: dict) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _typed(key: str, value) -> dict:
    section, leaf = key.split(".")
    return {"raycluster": {section: {leaf: value}}}


def _ray_env(objects) -> list[dict[str, str]]:
    out = []
    for o in objects:
        if o.get("kind") != "RayCluster":
            continue
        spec = o["spec"]
        for group in [spec["headGroupSpec"], *spec["workerGroupSpecs"]]:
            for c in group["template"]["spec"]["containers"]:
                out.append({e["name"]: e.get("value") for e in c.get("env") or []})
    return out


@pytest.mark.parametrize("variable", sorted(FABRIC))
def test_fabric_variable_in_extra_env_names_its_typed_key(tmp_path, variable):
    key, value, _ = FABRIC[variable]
    extra = _write(tmp_path, "extra.yaml", {"global": {"job": {"extraEnv": [{"name": variable, "value": "x"}]}}})
    [error] = lint_values([BASE, extra]).input_errors
    assert error.line == 4 and error.key_path == "global.job.extraEnv.0.name", error
    assert f"raycluster.{key}" in error.message, error.message


def test_typed_fabric_keys_reach_every_ray_container(tmp_path, helm_bin, helm_env):
    doc: dict = {}
    for key, value, _ in FABRIC.values():
        section, leaf = key.split(".")
        doc.setdefault("raycluster", {}).setdefault(section, {})[leaf] = value
    typed = _write(tmp_path, "fabric.yaml", doc)
    result = lint_values([BASE, typed])
    assert not result.input_errors, [str(e) for e in result.input_errors]
    want = {variable: pods for variable, (_, _, pods) in FABRIC.items()}
    data = merge_user_values([load_values_file(BASE), load_values_file(typed)])
    mine = _ray_env([o.obj for o in render(data, release="grpo", namespace="grpo").objects])
    helm = subprocess.run([str(helm_bin), "template", "grpo", str(REPO_ROOT / "charts" / "grpo-stack"), "-f", BASE,
                           "-f", typed], env=helm_env, capture_output=True, text=True, timeout=120)
    assert helm.returncode == 0, helm.stderr
    theirs = _ray_env([d for d in yaml.safe_load_all(helm.stdout) if isinstance(d, dict)])
    assert mine and len(mine) == len(theirs)
    for env in mine + theirs:
        assert {k: env.get(k) for k in want} == want


@pytest.mark.parametrize(("variable", "secret_key"), [("HF_TOKEN", "global.secrets.hfToken"),
                                                      ("WANDB_API_KEY", "global.secrets.tracking")])
def test_pasted_token_in_extra_env_is_called_a_secret(tmp_path, variable, secret_key):
    extra = _write(tmp_path, "extra.yaml", {"global": {"job": {"extraEnv": [
        {"name": variable, "value": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"}]}}})
    [error] = lint_values([BASE, extra]).input_errors
    assert f"{variable} is a secret" in error.message and secret_key in error.message, error.message
    assert "hf_AbCdEf" not in error.message
