"""GRPO847's severity: a writable host location the node or every pod uses is an error; a node-local model cache kept
on purpose (the container's own Hub cache or Ollama store lies in the mount) on a directory of the workload's own,
which reviewers of the labelled corpora read as a deliberate design 22 times in 23, is not reported (in a node
location it is a warning); any other directory of the workload's own is a warning that names what it risks."""

from __future__ import annotations

import textwrap

from grpo_stack.lint.release import lint_manifests

from tests.lint.fixtures import severities


def _findings(tmp_path, env: str, mount: str, host: str = "/mnt/data/huggingface"):
    path = tmp_path / "pod.yaml"
    path.write_text(textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: p}}
        spec:
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.10.0
              args: ["--model", "Qwen/Qwen3-8B", "--revision", "b968826d9c46dd6066d109eabc6255188de91218"]
              env: [{env}]
              volumeMounts: [{{name: host, mountPath: {mount}}}]
          volumes:
            - {{name: host, hostPath: {{path: {host}}}}}
        """))
    return [f for f in lint_manifests(str(path)).findings if f.code == "GRPO847"]


def test_node_local_model_cache_of_its_own_is_not_reported(tmp_path):
    assert _findings(tmp_path, "", "/root/.cache/huggingface") == []
    assert _findings(tmp_path, "{name: HF_HOME, value: /models/hf}", "/models") == []
    # the same cache in a location the node or every pod uses is a warning that says what it is
    found = _findings(tmp_path, "", "/root/.cache/huggingface", host="/tmp/hf")
    assert [f.severity.value for f in found] == ["warning"] and "node-local model cache" in found[0].message


def test_a_directory_of_the_workloads_own_is_a_warning(tmp_path):
    found = _findings(tmp_path, "", "/scratch")
    assert [f.severity.value for f in found] == ["warning"] and "workload's own" in found[0].message


def test_locations_the_node_or_every_pod_uses_stay_errors(tmp_path):
    for host in ("/", "/etc/kubernetes", "/var/lib/kubelet/pods", "/var/log", "/tmp", "/var/lib", "/home/ubuntu",
                 "/run/containerd"):
        assert _mount(tmp_path, host) == ["error"], host
    for host in ("/opt/ollama", "/mnt/disks/models", "/var/lib/llm-model-cache", "/home/ubuntu/models"):
        assert _mount(tmp_path, host) == ["warning"], host


def test_the_default_hub_cache_of_the_images_user_is_a_model_cache(tmp_path):
    """Ray's images run as `ray`: the Hub's default cache is /home/ray/.cache/huggingface, whichever home the env
    does not name."""
    assert _findings(tmp_path, "", "/home/ray/.cache/huggingface") == []
    # a HOME the env names is the one that counts: this mount is no cache, a directory of the workload's own
    elsewhere = _findings(tmp_path, "{name: HOME, value: /work}", "/home/ray/.cache/huggingface")
    assert [f.severity.value for f in elsewhere] == ["warning"] and "model cache" not in elsewhere[0].message


def _mount(tmp_path, host: str):
    return severities(tmp_path, textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: p}}
        spec:
          restartPolicy: Never
          containers:
            - name: c
              image: nvcr.io/nvidia/pytorch:24.07-py3
              volumeMounts: [{{name: host, mountPath: /mnt/x}}]
          volumes:
            - {{name: host, hostPath: {{path: {host}}}}}
        """), "GRPO847")


def test_device_directories_are_not_data(tmp_path):
    assert _mount(tmp_path, "/dev/infiniband") == []
    assert _mount(tmp_path, "/dev/shm") == ["error"]  # a shared tree, not a device


def test_a_node_installed_driver_directory_mounted_as_its_vendor_documents_is_not_reported(tmp_path):
    assert _mount(tmp_path, "/home/kubernetes/bin/nvidia") == []
    assert _mount(tmp_path, "/home/kubernetes/bin/gib") == []
    assert _mount(tmp_path, "/home/kubernetes") == ["error"]
