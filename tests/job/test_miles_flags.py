"""The miles command checked against miles' own argparse definitions (catalog/miles_flags.json, extracted from
the pinned radixark/miles + Megatron-LM source), and the extractor that produces that catalogue."""

from __future__ import annotations

import argparse
import copy
import json
import textwrap

import pytest
from grpo_stack.catalog import argparse_extract
from grpo_stack.job import BuildError, build, miles_flags
from grpo_stack.job.miles import MODEL_SCRIPTS

MILES_FILES = ("miles-qwen3-4b", "miles-qwen3-30b-a3b")


@pytest.fixture(scope="module")
def miles_specs(base_specs):
    return {name: base_specs[name] for name in MILES_FILES}


def train_flags(spec) -> list[str]:
    argv = build(spec).argv()
    assert argv[:2] == ["python3", "/root/miles/train.py"]
    return argv[2:]


def with_job(spec, **changes):
    out = copy.deepcopy(spec)
    for dotted, value in changes.items():
        node = out["job"]
        *parents, leaf = dotted.split("__")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


# --- the catalogue ---------------------------------------------------------------------------------------------

def test_catalogue_names_its_sources():
    """A catalogue without provenance cannot be re-checked against the image's build."""
    cat = miles_flags.catalogue()
    repos = {s["repository"]: s for s in cat["sources"]}
    assert set(repos) == {"radixark/miles", "radixark/Megatron-LM"}
    for s in repos.values():
        assert len(s["commit"]) == 40 and s["files"]
    assert len(cat["flags"]) > 900


@pytest.mark.parametrize("name", MILES_FILES)
def test_every_emitted_flag_exists_with_its_arity_and_a_valid_value(miles_specs, name):
    """Each flag the builder emits for a shipped miles file is one miles' parser knows, with the number of values
    it takes and a value of its type/choices (miles' parse is strict: an unknown flag aborts the run)."""
    tokens = train_flags(miles_specs[name])
    groups, errors = miles_flags.split_flags(tokens)
    assert errors == []
    assert len(groups) > 40


def test_list_values_are_separate_tokens(miles_specs):
    """`--eval-prompt-data 'eval /fsx/…'` as ONE argv element was read by miles as one path (reviewed failure)."""
    tokens = train_flags(miles_specs["miles-qwen3-4b"])
    i = tokens.index("--eval-prompt-data")
    assert tokens[i + 1] == "eval" and tokens[i + 2].endswith("aime-2024.jsonl")
    assert not any(" " in t for t in tokens), "a flag value was joined with spaces"


def test_joined_list_value_is_caught_by_the_catalogue():
    """The catalogue check itself fails on the old joined form (a check that cannot fail is a defect)."""
    assert miles_flags.check_argv(["--eval-prompt-data", "eval /fsx/a.jsonl"]) != []  # 1 value: odd pairs
    assert miles_flags.check_argv(["--tensor-model-parallel-size", "2", "4"])  # arity 1
    assert miles_flags.check_argv(["--recompute-granularity", "everything"])  # not a choice
    assert miles_flags.check_argv(["--lr", "fast"])  # not a float
    assert miles_flags.check_argv(["--no-such-flag"])


def test_dropout_is_zero_where_megatron_defaults_to_point_one(miles_specs):
    """Megatron's TransformerConfig defaults both dropouts to 0.1; the upstream recipes set 0 (reviewed failure)."""
    cat = miles_flags.catalogue()["flags"]
    assert cat["--hidden-dropout"]["default"] == 0.1 and cat["--attention-dropout"]["default"] == 0.1
    for spec in miles_specs.values():
        tokens = train_flags(spec)
        for flag in ("--hidden-dropout", "--attention-dropout"):
            assert float(tokens[tokens.index(flag) + 1]) == 0.0


def test_recompute_optimizer_and_runtime_env_of_the_upstream_recipes(miles_specs):
    built = build(miles_specs["miles-qwen3-30b-a3b"])
    tokens = built.argv()
    for flag, value in (("--recompute-granularity", "full"), ("--recompute-method", "uniform"),
                        ("--recompute-num-layers", "1"), ("--optimizer", "adam"), ("--weight-decay", "0.1")):
        assert tokens[tokens.index(flag) + 1] == value
    env = dict(built.env)
    assert env["CUDA_DEVICE_MAX_CONNECTIONS"] == "1"
    assert "/root/Megatron-LM" in env["PYTHONPATH"].split(":")


def test_hf_checkpoint_is_converted_before_training(miles_specs):
    """--ref-load pointed at a Hugging Face directory without bridge mode: miles stops at "Only bridge mode is
    supported for loading HF checkpoint" (reviewed failure). The reference is the converted checkpoint, and the
    conversion step is part of the built job (shown by --dry-run and grpo-render --job)."""
    for spec in miles_specs.values():
        built = build(spec)
        tokens = built.argv()
        ref = tokens[tokens.index("--ref-load") + 1]
        hf = tokens[tokens.index("--hf-checkpoint") + 1]
        assert ref != hf and ref.endswith("_torch_dist")
        assert "--megatron-to-hf-mode" not in tokens  # raw mode: miles' default
        (step,) = built.prepare
        assert step.output == ref and "convert_hf_to_torch_dist.py" in " ".join(step.argv)
        assert step.argv[step.argv.index("--hf-checkpoint") + 1] == hf


def test_load_equals_save_only_when_resuming(miles_specs):
    """`--load` always equalled `--save`, so a run meant to start fresh silently resumed (reviewed failure)."""
    spec = miles_specs["miles-qwen3-4b"]
    auto = build(with_job(spec, resume__mode="auto")).argv()
    assert auto[auto.index("--load") + 1] == auto[auto.index("--save") + 1]
    assert "--load" not in build(with_job(spec, resume__mode="disable")).argv()
    given = build(with_job(spec, resume__mode="fromPath", resume__path="checkpoints/old")).argv()
    assert given[given.index("--load") + 1] == "/fsx/checkpoints/old"
    with pytest.raises(BuildError, match="resume.path"):
        build(with_job(spec, resume__mode="fromPath"))


def test_only_presets_with_a_model_script_at_the_pinned_build(miles_specs):
    """A preset without scripts/models/<name>.sh in the image cannot start (reviewed failure)."""
    assert "qwen2.5-72b" not in MODEL_SCRIPTS and "llama-3.1-8b" not in MODEL_SCRIPTS
    spec = with_job(miles_specs["miles-qwen3-4b"], model__preset="qwen2.5-72b")
    with pytest.raises(BuildError, match="global.job.model.preset.*no miles model script"):
        build(spec)


def test_version_label_is_the_pinned_build(miles_specs):
    notes = build(miles_specs["miles-qwen3-4b"]).notes
    cat = miles_flags.catalogue()
    assert f"miles-build: miles@{cat['sources'][0]['commit'][:12]}" in " ".join(notes)


# --- job.miles.extraArgs ---------------------------------------------------------------------------------------

def test_extra_args_are_appended_after_checking(miles_specs):
    spec = with_job(miles_specs["miles-qwen3-4b"], miles__extraArgs=["--lr-warmup-iters", "10", "--balance-data"])
    tokens = build(spec).argv()
    assert tokens[-3:] == ["--lr-warmup-iters", "10", "--balance-data"]
    assert miles_flags.check_argv(tokens[2:]) == []


@pytest.mark.parametrize("extra, message", [
    (["--no-such-flag", "1"], "not a miles/Megatron flag"),
    (["--lr-warmup-iters"], "takes 1 value"),
    (["--lr-warmup-iters", "ten"], "takes int values"),
    (["--tensor-model-parallel-size", "4"], "set from global.job.parallel.tensor"),
    (["--load", "/elsewhere"], "set from global.job.resume.mode"),
    (["--ref-load", "/elsewhere"], "set from model.path converted"),
    (["--offload-train", "--offload-train"], "given twice"),
    (["10"], "is not a flag"),
    (["--pin-rollout-manager-to-head"], "advertises zero CPUs"),
])
def test_extra_args_refused(miles_specs, extra, message):
    spec = with_job(miles_specs["miles-qwen3-4b"], miles__extraArgs=extra)
    with pytest.raises(BuildError, match=f"global.job.miles.extraArgs: .*{message}"):
        build(spec)


def test_extra_args_cannot_set_a_flag_the_values_turned_off(miles_specs):
    """sequenceParallel: false emits nothing, but the flag is still the values' to set."""
    spec = with_job(miles_specs["miles-qwen3-4b"], parallel__sequenceParallel=False,
                    miles__extraArgs=["--sequence-parallel"])
    with pytest.raises(BuildError, match="--sequence-parallel is set from global.job.parallel.sequenceParallel"):
        build(spec)


def test_extra_args_replace_a_builder_default(miles_specs):
    """A flag only defaulted by the builder (the upstream recipe's recompute) is replaced, never emitted twice."""
    spec = with_job(miles_specs["miles-qwen3-4b"], miles__extraArgs=["--recompute-granularity", "selective"])
    tokens = build(spec).argv()
    assert tokens.count("--recompute-granularity") == 1
    assert tokens[-2:] == ["--recompute-granularity", "selective"]


# --- the extractor ---------------------------------------------------------------------------------------------

FIXTURE = textwrap.dedent('''
    import argparse
    from dataclasses import dataclass, field
    from enum import Enum
    from typing import Literal, Optional

    MODES = ["a", "b"]

    class Backend(Enum):
        flash = 1
        local = 2

    @dataclass
    class Base:
        seed: int = 7
        """The seed."""

    @dataclass
    class Cfg(Base):
        hidden_dropout: float = 0.1
        use_x: bool = False
        fuse: bool = True
        names: list[str] = field(default_factory=list)
        style: Literal["constant", "cosine"] = "cosine"
        backend: Backend = Backend.flash
        window: Optional[int] = None
        hidden: int = field(default=0, init=False)
        skipped: int = 3
        custom: int | str = field(default=1, metadata={"argparse_meta": {"type": int, "nargs": 2}})

    def reset_arg(parser, name, **kwargs):
        for action in parser._actions:
            if name in action.option_strings:
                action.default = kwargs.get("default", action.default)
                break
        else:
            parser.add_argument(name, **kwargs)

    def add(parser):
        g = parser.add_argument_group("g")
        g.add_argument("--pairs", nargs="+", type=str, default=None)
        g.add_argument("--mode", choices=MODES, default="a")
        g.add_argument("--flag", action="store_true")
        g.add_argument("--count", "-c", type=int, default=3, dest="n")
        parser.add_argument("--opt", action=argparse.BooleanOptionalAction, default=True)
        reset_arg(parser, "--count", default=5)
        reset_arg(parser, "--fresh", type=float, default=0.5)
        return parser

    def factory(parser):
        exclude = ["skipped"]
        ArgumentGroupFactory(Cfg, exclude=exclude).build_group(parser, "cfg")
''')


def test_extractor_matches_argparse_on_a_fixture(tmp_path):
    """Flags read from source equal what argparse itself builds from the same file (plain add_argument part)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "args.py").write_text(FIXTURE)
    flags, unread = argparse_extract.extract_file(tmp_path, "pkg/args.py",
                                                  argparse_extract.ClassIndex(tmp_path, "pkg"))
    cat = argparse_extract.Catalogue()
    cat.add(flags)
    got = cat.flags
    namespace: dict = {"ArgumentGroupFactory": None}
    exec(compile(FIXTURE, "fixture", "exec"), namespace)  # noqa: S102  (our own fixture text)
    parser = namespace["add"](argparse.ArgumentParser())
    for action in parser._actions:
        for opt in action.option_strings:
            if opt in ("-h", "--help"):
                continue
            rec = got[opt]
            assert rec["nargs"] == action.nargs or (rec["nargs"] is None and action.nargs in (None, 0)), opt
            assert rec["default"] == action.default, opt
            if action.choices is not None:
                assert rec["choices"] == list(action.choices), opt
    assert got["--count"]["default"] == 5 and got["-c"] is got["--count"]
    assert got["--fresh"]["type"] == "float"
    assert "--no-opt" in got
    assert unread == ["pkg/args.py:37: parser.add_argument(name, **kwargs)"]  # reset_arg's own body


def test_extractor_reads_dataclass_flags_like_megatron(tmp_path):
    """Megatron builds half its flags from dataclasses (ArgumentGroupFactory); the extractor applies the same rules:
    base-class fields, bool -> store_true / --no-x|--disable-x, list -> nargs +, Literal/Enum -> choices,
    init=False and exclude skipped, argparse_meta overrides."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "args.py").write_text(FIXTURE)
    flags, _ = argparse_extract.extract_file(tmp_path, "pkg/args.py", argparse_extract.ClassIndex(tmp_path, "pkg"))
    cat = argparse_extract.Catalogue()
    cat.add(flags)
    f = cat.flags
    assert f["--seed"]["default"] == 7 and f["--seed"]["type"] == "int"
    assert f["--hidden-dropout"]["default"] == 0.1
    assert f["--use-x"]["action"] == "store_true"
    assert f["--no-fuse"]["action"] == "store_false" and f["--disable-fuse"] is f["--no-fuse"]
    assert "--fuse" not in f
    assert f["--names"]["nargs"] == "+"
    assert f["--style"]["choices"] == ["constant", "cosine"]
    assert f["--backend"]["choices"] == ["flash", "local"]
    assert f["--window"]["type"] == "int"
    assert "--hidden" not in f and "--skipped" not in f
    assert f["--custom"]["nargs"] == 2 and f["--custom"]["type"] == "int"


def test_extractor_cli_writes_a_catalogue(tmp_path):
    (tmp_path / "m.py").write_text("def f(p):\n    p.add_argument('--x', type=int, default=1)\n")
    out = tmp_path / "out.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert argparse_extract.main(["file", str(tmp_path), "m.py"]) == 0
    assert json.loads(buf.getvalue())["flags"]["--x"]["default"] == 1
    assert not out.exists()


def test_image_pins_the_commits_the_catalogue_was_extracted_from():
    """The version label said 0.1.0 while the image was an earlier build (reviewed failure): the Dockerfile checks
    the base image holds exactly the catalogue's commits and labels the image with them."""
    import re

    from grpo_stack.paths import REPO_ROOT

    text = (REPO_ROOT / "images" / "miles" / "Dockerfile").read_text()
    args = dict(re.findall(r"^ARG (MILES_COMMIT|MEGATRON_COMMIT)=([0-9a-f]{40})$", text, re.M))
    commits = {s["repository"]: s["commit"] for s in miles_flags.catalogue()["sources"]}
    assert args == {"MILES_COMMIT": commits["radixark/miles"], "MEGATRON_COMMIT": commits["radixark/Megatron-LM"]}
    assert 'rev-parse HEAD)" && [ "$have" = "$MILES_COMMIT" ]' in text


def test_flag_equals_value_form_is_checked_too():
    assert miles_flags.check_argv(["--lr=1e-5", "--seed", "3"]) == []
    assert miles_flags.check_argv(["--lr=fast"])
    assert miles_flags.check_argv(["--lr=1e-5", "2e-5"])
    assert miles_flags.check_argv(["--colocate=yes"])  # a store_true flag takes no value


def test_extractor_bad_input_is_one_line_exit_2(tmp_path, capsys):
    (tmp_path / "broken.py").write_text("def f(:\n")
    assert argparse_extract.main(["file", str(tmp_path), "broken.py"]) == 2
    assert argparse_extract.main(["file", str(tmp_path), "missing.py"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("argparse_extract: ") for line in err)


def test_refused_extra_flags_exist_in_the_catalogue():
    """A refusal for a flag the build does not have would be a check that cannot fire."""
    from grpo_stack.job.miles import REFUSED_EXTRA

    assert all(miles_flags.lookup(f) for f in REFUSED_EXTRA)


@pytest.mark.parametrize("name", MILES_FILES)
def test_grpo_render_job_shows_the_conversion_and_separate_tokens(miles_specs, name):
    """`grpo-render --job` (the explain format) and the shell format show the step that runs before training."""
    from grpo_stack.job.__main__ import render

    built = build(miles_specs[name])
    text = render(built, "explain")
    assert "# before training, step 1: convert-hf-to-torch-dist" in text
    assert "convert_hf_to_torch_dist.py --hf-checkpoint" in text
    assert "eval-prompt-data" in text and "(2 values)" in text
    assert "# runtime env: CUDA_DEVICE_MAX_CONNECTIONS=1" in text
    shell = render(built, "shell")
    assert "--eval-prompt-data eval /fsx/" in shell
    data = json.loads(render(built, "json"))
    assert data["prepare"][0]["name"] == "convert-hf-to-torch-dist" and data["env"]["PYTHONPATH"]
