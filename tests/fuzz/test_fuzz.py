"""Property-based fuzz test: grpo-lint and grpo-render on mutations of the shipped values files and of the
manifests they render never crash, never hang, and locate every input error at the key that was mutated.

Prevents the reviewed failures: 71 tracebacks reported as exit 1 (YAML tag constructors, wrong-typed manifest
fields, a KeyError on a deleted optional key, TypeErrors on huge integers), 4 hangs (a FIFO, /dev/zero read
whole, unbounded searches on 2**64), NaN/Inf/10**4000 errors without a key path, and a 1.5 M-character value
echoed whole. Cases: GRPO_FUZZ_EXAMPLES (default 2000 in-process: 3/4 values files, 1/4 manifests)."""

from __future__ import annotations

import os
import re

import pytest
from grpo_stack.cli.lint import main as lint_main
from grpo_stack.cli.render import main as render_main
from grpo_stack.values import load_values_file
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.conftest import VALUES_FILES
from tests.fuzz.harness import check, console, in_process, related
from tests.fuzz.mutations import KINDS, Mutation, dump, key_paths, mutate

EXAMPLES = int(os.environ.get("GRPO_FUZZ_EXAMPLES", "2000"))
CONSOLE_EXAMPLES = int(os.environ.get("GRPO_FUZZ_CONSOLE_EXAMPLES", "12"))
VALUES = {p.stem: [load_values_file(p).data] for p in VALUES_FILES}
# No shrinking: a failing case is already one mutation of a real file, and shrinking re-runs the whole pipeline
# hundreds of times. The failure report names the source, key path, mutation and variant.
# Derandomized: CI runs the same cases every time, so a red run reproduces here and a green one is not luck;
# GRPO_FUZZ_RANDOM=1 explores new cases (then a failure prints the blob to replay it).
SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), print_blob=True,
                phases=[Phase.explicit, Phase.reuse, Phase.generate],
                derandomize=os.environ.get("GRPO_FUZZ_RANDOM") != "1")


@pytest.fixture(scope="session")
def manifests(rendered_all) -> dict[str, list]:
    """Each shipped values file's rendered objects as one manifest stream (documents)."""
    return {name: [o.obj for o in r.objects] for name, r in rendered_all.items()}


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def draw_mutation(data, sources: dict[str, list]) -> Mutation:
    name = data.draw(st.sampled_from(sorted(sources)), label="source")
    docs = sources[name]
    index = data.draw(st.integers(0, len(docs) - 1), label="document")
    path = data.draw(st.sampled_from(key_paths(docs[index])), label="key path")
    kind = data.draw(st.sampled_from(KINDS), label="mutation")
    mutation = mutate(docs, index, path, kind, data.draw(st.integers(0, 60), label="variant"))
    if index == 0 and path[0] in ("apiVersion", "kind") and len(docs) > 1:
        # The first document's apiVersion/kind make a file a manifest stream; without them it is read as a
        # values file, whose errors are about the whole document, not the key that was changed.
        mutation = Mutation(mutation.kind, "", mutation.text, mutation.snippet)
    return mutation


def assert_located(outcome, mutation: Mutation, where: str, manifest: bool = False) -> None:
    """Exit 2 after one key was mutated: some input error names that key (or a key inside its new value). A
    scalar Helm reads differently from YAML 1.1 (`y`, `1:30`, `08`, `! 8`) is always refused, but for a plain
    octal integer in a manifest, which kubectl's reader (go-yaml v2) and PyYAML read alike."""
    octal = manifest and re.fullmatch(r"[-+]?0[0-7]+", mutation.snippet)
    if mutation.kind == "helmscalar" and not octal:
        assert outcome.code == 2, f"{where}: a Helm-divergent scalar passed\n{outcome.text[-2000:]}"
    if outcome.code == 2 and mutation.path:
        paths = outcome.error_key_paths()
        assert any(related(p, mutation.path) for p in paths), (
            f"{where}: mutated {mutation.path!r} ({mutation.kind}); errors at {paths}\n{outcome.text[-2000:]}")


def agree(lint: int, render: int, where: str) -> None:
    """Unusable input for grpo-lint is unusable for grpo-render --job, and what grpo-render --job refuses
    grpo-lint fails (as input, or with the finding that explains it)."""
    assert lint != 2 or render == 2, f"{where}: grpo-lint exit 2 but grpo-render --job rendered"
    assert render != 2 or lint in (1, 2), f"{where}: grpo-render --job refused it but grpo-lint passed"


@settings(max_examples=EXAMPLES * 3 // 4, **SETTINGS)
@given(data=st.data())
def test_values_mutations(data, workdir):
    """Mutated values files: lint exits 0/1/2 with the error at the mutated key; grpo-render --job (one case
    in six) agrees with it."""
    mutation = draw_mutation(data, VALUES)
    path = workdir / "values.yaml"
    path.write_text(mutation.text)
    where = f"{mutation.kind} at {mutation.path}"
    outcome = in_process(lint_main, ["--format", "json", str(path)])
    check(outcome, where)
    assert_located(outcome, mutation, where)
    if data.draw(st.integers(0, 5), label="also render") == 0:
        rendered = in_process(render_main, [str(path), "--job"])
        check(rendered, f"grpo-render --job, {where}")
        assert rendered.code in (0, 2), rendered.text[-2000:]
        agree(outcome.code, rendered.code, where)


@settings(max_examples=EXAMPLES // 4, **SETTINGS)
@given(data=st.data())
def test_manifest_mutations(data, workdir, manifests):
    """Mutated rendered manifests (e.g. `metadata: true`): object rules never crash on wrong types."""
    mutation = draw_mutation(data, manifests)
    path = workdir / "manifests.yaml"
    path.write_text(mutation.text)
    outcome = in_process(lint_main, ["--format", "json", str(path)])
    where = f"manifest {mutation.kind} at {mutation.path}"
    check(outcome, where)
    assert_located(outcome, mutation, where, manifest=True)


@settings(max_examples=CONSOLE_EXAMPLES, **SETTINGS)
@given(data=st.data())
def test_console_scripts_exit_codes(data, tmp_path_factory):
    """A smaller sample through the installed grpo-lint / grpo-render scripts: the exit codes users and CI see."""
    mutation = draw_mutation(data, VALUES)
    path = tmp_path_factory.mktemp("console") / "values.yaml"
    path.write_text(mutation.text)
    where = f"{mutation.kind} at {mutation.path}"
    lint = console("grpo-lint", ["--format", "json", str(path)])
    check(lint, f"grpo-lint, {where}")
    assert_located(lint, mutation, where)
    render = console("grpo-render", [str(path), "--job"])
    check(render, f"grpo-render, {where}")
    assert render.code in (0, 2), render.text[-2000:]
    agree(lint.code, render.code, where)


def test_shipped_files_are_the_baseline(workdir, manifests):
    """The unmutated sources lint clean, so every failure above comes from the mutation."""
    for name, docs in {**VALUES, **{f"{k} (manifests)": v for k, v in manifests.items()}}.items():
        path = workdir / "baseline.yaml"
        path.write_text(dump(docs))
        outcome = in_process(lint_main, ["--format", "json", str(path)])
        check(outcome, name)
        assert outcome.code in (0, 1), f"{name}: {outcome.text[-2000:]}"
