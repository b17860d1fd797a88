"""`--set`, `--set-string`, `--set-file`, `--set-json` and `--set-literal` as grpo-lint and grpo-render read them
are what the real Helm binaries make of them: for each command line of a corpus, the values Helm 4.1.4 hands a
chart (printed by `toJson .Values` in a one-template chart, over a values file with lists, maps, a string and a
null) equal grpo-stack's, or both refuse the line. Helm 3.17.3 reads the same except where docs/values-flags.md
says it does not."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from grpo_stack.errors import InputError
from grpo_stack.helmvalues import SET_FLAGS, ValueOptions, command_line_layers
from grpo_stack.values import load_values_file, merge_user_values

from .corpus import BASE, HAND, held_aside

# Where Helm 3.17.3 reads a line otherwise than Helm 4.1.4 (docs/values-flags.md).
HELM3_DIFFERS = {"a[1", '{"a": {"d": {"x": 1}}, "new": [1]}'}


@pytest.fixture(scope="module")
def chart(tmp_path_factory) -> Path:
    top = tmp_path_factory.mktemp("values-chart")
    (top / "c" / "templates").mkdir(parents=True)
    (top / "c" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (top / "c" / "values.yaml").write_text("{}\n")
    (top / "c" / "templates" / "values.json").write_text("{{ toJson .Values }}\n")
    (top / "base.yaml").write_text(BASE)
    return top


def helm_values(helm: Path, chart: Path, line: list[tuple[str, str]], env: dict[str, str]) -> dict | None:
    """The values the chart sees, or None when Helm refuses the line."""
    argv = [str(helm), "template", "x", str(chart / "c"), "-f", str(chart / "base.yaml")]
    for flag, argument in line:
        argv += [flag, argument]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=chart, timeout=60, check=False)
    if proc.returncode != 0:
        return None
    return comparable(json.loads(proc.stdout.strip().splitlines()[-1]))


def comparable(node):
    """Values with every number beyond 2**53 as a float: toJson prints a float64 that holds a large integer
    (what --set-json makes of one) as digits, the same as an int64 (what --set makes of one)."""
    if isinstance(node, dict):
        return {k: comparable(v) for k, v in node.items()}
    if isinstance(node, list):
        return [comparable(v) for v in node]
    if isinstance(node, (int, float)) and not isinstance(node, bool) and abs(node) > 2 ** 53:
        return float(node)
    return node


def our_values(chart: Path, line: list[tuple[str, str]]) -> dict | None:
    options = ValueOptions(sets={f: [a for g, a in line if g == f] for f in SET_FLAGS})
    try:
        layers = command_line_layers(options)
        return comparable(merge_user_values([load_values_file(chart / "base.yaml"), *layers]))
    except InputError:
        return None


def _id(line: list[tuple[str, str]]) -> str:
    return " ".join(f"{flag} {argument}" for flag, argument in line)


@pytest.mark.parametrize("line", HAND, ids=[_id(c) for c in HAND])
def test_a_set_line_gives_the_values_helm_4_gives(line, chart, helm_bin, helm_env):
    assert our_values(chart, line) == helm_values(helm_bin, chart, line, helm_env)


def test_helm_3_reads_the_corpus_the_same_except_where_documented(chart, helm_bin, helm3_bin, helm_env):
    differs = {_id(line) for line in HAND
               if helm_values(helm3_bin, chart, line, helm_env) != helm_values(helm_bin, chart, line, helm_env)}
    assert differs == {f"{flag} {argument}" for line in HAND for flag, argument in line if argument in HELM3_DIFFERS}


def test_random_lines_set_aside_read_as_helm_4_reads_them(chart, helm_bin, helm_env):
    """A corpus generated from a fixed seed, first run only when the parser was done: every line agrees."""
    disagree = [_id(line) for line in held_aside()
                if our_values(chart, line) != helm_values(helm_bin, chart, line, helm_env)]
    assert disagree == []


def test_set_file_reads_the_files_it_names_as_helm_does(chart, helm_bin, helm_env, tmp_path):
    (tmp_path / "script.sh").write_text("#!/bin/sh\necho 'a,b'\n")
    (tmp_path / "other.txt").write_text("true")
    lines = [[("--set-file", f"s.script={tmp_path / 'script.sh'}")],
             [("--set-file", f"both={{{tmp_path / 'script.sh'},{tmp_path / 'other.txt'}}}")],
             [("--set-file", f"a.d.e={tmp_path / 'other.txt'}"), ("--set", "a.d.e=1")],
             [("--set-file", f"x={tmp_path / 'missing.txt'}")]]
    for line in lines:
        assert our_values(chart, line) == helm_values(helm_bin, chart, line, helm_env), _id(line)
