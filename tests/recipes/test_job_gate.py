"""The in-pod submit runs grpo-lint's job checks (grpo_stack.jobgate) on the job ConfigMap before it submits.

As a user meets it: `helm template --set` (the real Helm 4 CLI) of a train batch that verl rejects renders a job
ConfigMap; run-on-cluster.sh, with the recording kubectl shim of tests/recipes (not a cluster), copies the package
into the "head pod" and the in-pod submit refuses it with the finding grpo-lint prints for the same values, and
grpo-lint's exit status. Where the check stops: no Ray head pod or training image runs here; the image's Python
is stood in for by this interpreter with no site-packages at all (`python -I -S`), which is stricter than any
image (the gate then may import nothing but the standard library and the copied package).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from grpo_stack.lint.rules import JOB_RULES
from grpo_stack.paths import REPO_ROOT

from tests.recipes.test_run_on_cluster import NAMESPACE, RELEASE, cluster_state, run_recipe

VALUES = "qwen25-72b.yaml"  # TP4/PP4 on 48 GPUs: dp = 3
CRASHING = "global.job.verl.batch.trainBatchSize=256"  # 256 x 4 rows do not split into dp x micro = 6 (verl V2)
JOB_CM = "templates/configmap-job.yaml"


def helm_job_json(helm_bin, helm_env, *sets: str, values: str = VALUES) -> str:
    """The job.json `helm template -f values/<VALUES> --set ...` renders (what `helm install --set` would apply)."""
    args = [str(helm_bin), "template", RELEASE, str(REPO_ROOT / "charts" / "grpo-stack"), "--namespace", NAMESPACE,
            "-f", str(REPO_ROOT / "values" / values), "--show-only", JOB_CM]
    for s in sets:
        args += ["--set", s]
    out = subprocess.run(args, env=helm_env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return yaml.safe_load(out.stdout)["data"]["job.json"]


def lint_lines(tmp_path: Path, *sets: str) -> tuple[int, list[str]]:
    """grpo-lint's exit status and its finding lines (location stripped) for the values plus the --set keys,
    written as an overlay file (`helm -f` and `--set` merge the same way)."""
    overlay: dict = {}
    for s in sets:
        key, _, value = s.partition("=")
        node = overlay
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = yaml.safe_load(value)
    path = tmp_path / "set.yaml"
    path.write_text(yaml.safe_dump(overlay))
    proc = subprocess.run([str(Path(sys.executable).parent / "grpo-lint"), "--format", "text", "--no-cache",
                           "--release", RELEASE, "--namespace", NAMESPACE, "--base",
                           str(REPO_ROOT / "values" / VALUES), str(path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    return proc.returncode, [strip_location(ln) for ln in proc.stdout.splitlines() if " GRPO" in ln]


def strip_location(line: str) -> str:
    """`file:line:col: GRPO302 [error] key: message (name)` -> `GRPO302 [error] key: message (name)`."""
    return "GRPO" + line.split(": GRPO", 1)[1]


def job_codes(lines: list[str]) -> list[str]:
    return [ln for ln in lines if ln.split(" ", 1)[0] in JOB_RULES]


def test_set_of_a_crashing_batch_is_refused_with_grpo_lints_finding(tmp_path, helm_bin, helm_env):
    """`--set` of a train batch verl rejects at start-up never met grpo-lint: the in-pod submit refuses it with the
    finding and exit status grpo-lint gives the same values; nothing is submitted. The unchanged values submit."""
    state, spec = cluster_state(VALUES)
    state["configmaps"][0]["data"]["job.json"] = helm_job_json(helm_bin, helm_env, CRASHING)
    proc, _ = run_recipe(tmp_path, state, spec, "--dry-run")
    lint_rc, lint_found = lint_lines(tmp_path, CRASHING)
    assert lint_rc == 1 and any(ln.startswith("GRPO302 [error]") for ln in lint_found), lint_found
    assert proc.returncode == lint_rc, (proc.stdout, proc.stderr)
    gate_found = [strip_location(ln) for ln in proc.stderr.splitlines() if ": GRPO" in ln]
    assert gate_found == job_codes(lint_found)
    assert "refused: grpo-lint's job checks found" in proc.stderr
    assert "submit: framework" not in proc.stdout and "dry run" not in proc.stdout

    (tmp_path / "ok").mkdir()
    state["configmaps"][0]["data"]["job.json"] = helm_job_json(helm_bin, helm_env)
    proc, _ = run_recipe(tmp_path / "ok", state, spec, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "submit: dry run, nothing submitted" in proc.stdout


ROUTED = "qwen3-30b.yaml"  # scored by the reward service; prepares dapo-math-17k (math_dapo) and aime (aime2024)
UNROUTED = ("data_source '{}', which reward-service.routes does not route: every sample would be refused as "
            "unknown_source")
UNROUTES = {  # --set (Helm's null deletes the chart default) -> the datasets left unrouted
    "reward-service.routes.math_dapo=null": [("train", "dapo-math-17k", "math_dapo")],
    "reward-service.routes=null": [("train", "dapo-math-17k", "math_dapo"), ("val", "aime", "aime2024")],
}


@pytest.mark.parametrize("unroute", list(UNROUTES))
def test_set_that_unroutes_a_prepared_dataset_is_refused_with_grpo550(tmp_path, helm_bin, helm_env, unroute):
    """`--set` deleting the routes of datasets the release prepares (Helm drops the chart default; grpo-lint
    refuses a null in a values file as an input error, so only `helm install --set` gets this far).
    reward-service.routes lives in the reward-service subchart, not in the job: the chart renders it into
    job.json's release.values and the in-pod submit refuses it with GRPO550's finding, exit 1. The shipped values
    submit."""
    state, spec = cluster_state(ROUTED)
    state["configmaps"][0]["data"]["job.json"] = helm_job_json(helm_bin, helm_env, unroute, values=ROUTED)
    proc, _ = run_recipe(tmp_path, state, spec, "--dry-run")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    gate_found = [strip_location(ln) for ln in proc.stderr.splitlines() if ": GRPO" in ln]
    assert gate_found == [f"GRPO550 [error] fsx-utils.data.{split}.0: dataset {name} is prepared with "
                          f"{UNROUTED.format(source)} (reward-routing)" for split, name, source in UNROUTES[unroute]]
    assert "fix: add `math_dapo: math` to reward-service.routes" in proc.stderr
    assert "refused: grpo-lint's job checks found" in proc.stderr
    assert "submit: framework" not in proc.stdout and "dry run" not in proc.stdout

    (tmp_path / "ok").mkdir()
    state["configmaps"][0]["data"]["job.json"] = helm_job_json(helm_bin, helm_env, values=ROUTED)
    proc, _ = run_recipe(tmp_path / "ok", state, spec, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "submit: dry run, nothing submitted" in proc.stdout


def test_hand_edited_routes_in_the_configmap_are_refused_with_grpo550(tmp_path):
    """A job ConfigMap whose rendered routes were edited by hand (kubectl edit) to drop the val set's
    data_source, and then to send it to the code scorer: each is refused with GRPO550's finding, exit 1."""
    state, _ = cluster_state(ROUTED)
    data = json.loads(state["configmaps"][0]["data"]["job.json"])
    routes = data["release"]["values"]["reward-service"]["routes"]
    del routes["aime2024"]
    state["configmaps"][0]["data"]["job.json"] = json.dumps(data)
    proc, _ = run_recipe(tmp_path, state, data, "--dry-run")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert ("GRPO550 [error] fsx-utils.data.val.0: dataset aime is prepared with data_source 'aime2024', which "
            "reward-service.routes does not route") in proc.stderr
    routes["aime2024"] = "code"
    state["configmaps"][0]["data"]["job.json"] = json.dumps(data)
    (tmp_path / "code").mkdir()
    proc, _ = run_recipe(tmp_path / "code", state, data, "--dry-run")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    want = "GRPO550 [error] reward-service.routes.aime2024: 'aime2024' (aime, math) is routed to the code scorer"
    assert want in proc.stderr


def test_hand_edited_configmap_is_refused_and_skip_check_passes_it(tmp_path):
    """A job ConfigMap edited by hand (kubectl edit) to a mini batch larger than the train batch: refused with
    GRPO303's finding; `--skip-check GRPO303` (what a grpo-lint suppression in the values file does) lets it
    through with a note, and a code the gate does not run is refused (exit 2)."""
    state, spec = cluster_state("qwen3-8b.yaml")
    data = json.loads(state["configmaps"][0]["data"]["job.json"])
    batch = data["job"]["verl"]["batch"]
    batch["ppoMiniBatchSize"] = batch["trainBatchSize"] * 2
    state["configmaps"][0]["data"]["job.json"] = json.dumps(data)
    proc, _ = run_recipe(tmp_path, state, data, "--dry-run")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "GRPO303 [error] global.job.verl.batch.ppoMiniBatchSize:" in proc.stderr
    proc, _ = run_recipe(tmp_path, state, data, "--dry-run", "--skip-check", "GRPO303")
    assert proc.returncode == 0, proc.stderr
    assert "job check GRPO303 skipped" in proc.stdout
    proc, _ = run_recipe(tmp_path, state, data, "--dry-run", "--skip-check", "GRPO701")
    assert proc.returncode == 2 and "not a job check" in proc.stderr


GATE_RUN = """
import sys
sys.path.insert(0, sys.argv[1])
from grpo_stack.job.submit import main
rc = main(["--dry-run", "--spec", sys.argv[2]])
first = {name.split(".")[0] for name in sys.modules}
foreign = sorted(m for m in first if m not in ("grpo_stack", "__main__") and m not in sys.stdlib_module_names)
print("FOREIGN " + ",".join(foreign), file=sys.stderr)
sys.exit(rc)
"""


@pytest.mark.parametrize("values", ["qwen3-8b.yaml", "miles-qwen3-4b.yaml"])
def test_in_pod_gate_imports_nothing_but_the_copied_package(tmp_path, values):
    """The head pod has only the training image's packages and the grpo_stack directory run-on-cluster.sh copies
    there. Run the in-pod entry point with site-packages switched off (`-I -S`) and sys.path = the copy plus the
    standard library: it gates (refuses a crashing spec with exit 1) and passes a clean one, and imports no
    module from outside the standard library and the copy."""
    copy = tmp_path / "pod"
    shutil.copytree(REPO_ROOT / "tools" / "grpo_stack", copy / "grpo_stack",
                    ignore=shutil.ignore_patterns("__pycache__"))
    state, _ = cluster_state(values)
    data = json.loads(state["configmaps"][0]["data"]["job.json"])
    good = tmp_path / "good.json"
    good.write_text(json.dumps(data))
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", GATE_RUN, str(copy), str(good)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "FOREIGN \n" in proc.stderr + "\n", proc.stderr
    if data["job"]["framework"] == "verl":
        data["job"]["verl"]["batch"]["ppoMiniBatchSize"] = data["job"]["verl"]["batch"]["trainBatchSize"] * 2
        want = "GRPO303 [error] global.job.verl.batch.ppoMiniBatchSize:"
    else:
        data["job"].setdefault("miles", {})["globalBatchSize"] = 7  # not a multiple of the data-parallel size
        want = "GRPO320 [error] global.job.miles.globalBatchSize:"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", GATE_RUN, str(copy), str(bad)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert want in proc.stderr and "refused: grpo-lint's job checks" in proc.stderr
    assert "FOREIGN \n" in proc.stderr + "\n", proc.stderr
