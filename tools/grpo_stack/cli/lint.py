"""grpo-lint: check values files (and plain manifests) before any GPU is requested.

  grpo-lint [FILE|DIR]... [-f FILE]... [--set KEY=VALUE]... [--format text|json|sarif|github] [--strict]
            [--chart DIR] [--kuberay-crd FILE] [--select CODES|CATEGORIES] [--ignore CODES|CATEGORIES]
  Each FILE (or .yaml under DIR) is one release, over the -f files and then the --set* flags, as `helm install
  -f F... FILE --set ...` would read it; with no FILE the -f files are one release (docs/values-flags.md).
  grpo-lint --cluster [--kubeconfig FILE] [--context NAME] VALUES...   the same, plus a read-only live preflight
                                                of the cluster the values go to (docs/preflight.md)
  grpo-lint rules [--format text|markdown]
  grpo-lint explain GRPO123
  grpo-lint crd fetch [--url URL] [--force]     download the pinned KubeRay RayCluster CRD once into the cache
  grpo-lint crd path                            print the CRD file grpo-lint would use

Exit status: 0 clean, 1 findings at error severity (warnings too with --strict), 2 usage or input errors,
3 an internal error (a bug: one line names it; --debug prints the traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

from .. import kuberay_crd
from ..errors import InputError, clip, printable
from ..helmvalues import add_value_options, command_line_layers, split_releases, value_options
from ..lint.cache import run_lint
from ..lint.finding import Severity
from ..lint.formatters import FORMATTERS
from ..lint.selection import Selection, SelectionError
from ..paths import use_chart
from ..release import DEFAULT_NAMESPACE, DEFAULT_RELEASE
from .conventions import CLOSED_PIPE, Parser, Usage, command, silence_stdout


def lint_parser() -> argparse.ArgumentParser:
    p = Parser(prog="grpo-lint", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", help="values files, directories of them, or manifest files: each its own "
                   "release")
    p.add_argument("--format", choices=sorted(FORMATTERS), default=None,
                   help="output format (default: github under GITHUB_ACTIONS, else text)")
    p.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    p.add_argument("--release", default=DEFAULT_RELEASE,
                   help=f"release name to render with (default: {DEFAULT_RELEASE})")
    p.add_argument("--namespace", default=None,
                   help=f"release namespace: values are rendered with it (default: {DEFAULT_NAMESPACE}, as "
                   "grpo-render); manifests must be in it or have none (default: the namespace the manifests set)")
    add_value_options(p, files_help="a values file layered under each checked file, in order, as helm -f layers "
                      "it (repeatable); with no FILE, the -f files are the release")
    p.add_argument("--base", dest="layers", action="append", help=argparse.SUPPRESS)  # the older name of -f
    p.add_argument("--config", help="suppressions file (default: .grpo-lint.yaml if present)")
    p.add_argument("--kuberay-crd", default=os.environ.get("GRPO_KUBERAY_CRD") or None,
                   help="KubeRay RayCluster CRD (YAML/JSON) to validate RayCluster objects against "
                   "(default: $GRPO_KUBERAY_CRD, else the cache `grpo-lint crd fetch` fills)")
    p.add_argument("--chart", help="the grpo-stack chart directory (default: the one shipped in the package)")
    p.add_argument("--select", help="comma-separated codes, code prefixes (GRPO8), rule names or categories "
                   "(correctness, security, hardening, cost) to run (default: all)")
    p.add_argument("--ignore", help="comma-separated codes, code prefixes, rule names or categories to leave out")
    p.add_argument("--model-config", metavar="CONFIG_JSON",
                   help="a Hugging Face config.json: lint with global.job.model.shape filled from it (any model) "
                   "and print the shape: block to paste; a file with neither preset nor shape is still refused")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the result cache ($GRPO_LINT_CACHE_DIR, else ~/.cache/grpo-stack/lint)")
    p.add_argument("--cluster", action="store_true",
                   help="also read the cluster (read-only) for what helm install needs: KubeRay CRD and operator, "
                   "namespace, Secrets, PVC, GPU/EFA nodes (docs/preflight.md)")
    p.add_argument("--kubeconfig", help="with --cluster: the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")
    p.add_argument("--context", help="with --cluster: the kubeconfig context (default: its current-context)")
    p.add_argument("--debug", action="store_true", help="on an internal error, print the traceback")
    return p


@command("grpo-lint", lambda: lint_parser(), subcommands=("rules", "explain", "crd"))
def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return guarded("grpo-lint", lambda: _dispatch(argv), debug="--debug" in argv)


def guarded(prog: str, run, debug: bool) -> int:
    """Exit codes the CLIs promise: usage/input errors 2, anything unexpected 3 with one line naming it."""
    try:
        return run()
    except Usage as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except InputError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `grpo-lint ... | head`: the reader left; stop quietly, as SIGPIPE would
        silence_stdout()
        return CLOSED_PIPE
    except Exception as exc:  # noqa: BLE001 - the one place an unexpected error becomes exit 3
        if debug:
            import traceback

            traceback.print_exc()
        where = _origin(exc)
        print(f"{prog}: internal error: {type(exc).__name__}: {printable(clip(str(exc), 200))}{where} "
              "(a bug in grpo-stack; rerun with --debug for the traceback)", file=sys.stderr)
        return 3



def _origin(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return ""
    return f" at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}"


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] in ("rules", "explain", "crd"):
        argv = [a for a in argv if a != "--debug"]
    if argv and argv[0] == "rules":
        return _rules(argv[1:])
    if argv and argv[0] == "explain":
        return _explain(argv[1:])
    if argv and argv[0] == "crd":
        return _crd(argv[1:])
    return _lint(lint_parser().parse_args(argv))


def _expand(paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        if not p:
            raise Usage("an empty path argument (an unset shell variable?); name a values file or directory")
        path = Path(p)
        try:
            is_dir = path.is_dir()
        except OSError as exc:  # a name too long, a directory that cannot be searched
            raise InputError(p, f"cannot read: {exc.strerror or exc}") from None
        if is_dir:
            found = sorted(_yaml_files(p))
            if not found:
                raise Usage(f"{p}: directory has no .yaml files")
            out += found
        else:
            out.append(p)
    return out


def _yaml_files(top: str) -> list[str]:
    """.yaml/.yml files below `top`; a directory that cannot be read or a file that vanishes is passed over
    (os.walk reports it and goes on), never an internal error."""
    out = []
    for folder, _dirs, files in os.walk(top):
        for name in files:
            full = os.path.join(folder, name)
            try:
                if name.endswith((".yaml", ".yml")) and os.path.isfile(full):
                    out.append(full)
            except OSError:
                continue
    return out


def _lint(args) -> int:
    fmt = args.format or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    if (args.kubeconfig or args.context) and not args.cluster:
        raise Usage("--kubeconfig and --context go with --cluster")
    colour = fmt == "text" and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    config_path = args.config or (".grpo-lint.yaml" if Path(".grpo-lint.yaml").exists() else None)
    check_release_args(args.release, args.namespace)
    select = Selection(args.select, args.ignore)
    if args.chart:
        use_chart_option(args.chart)
    crd = kuberay_crd.resolve(args.kuberay_crd)
    if crd and not Path(crd).is_file():
        raise Usage(f"--kuberay-crd {crd}: no such file")
    options = value_options(args)
    base, paths = split_releases(_expand(args.paths), options.files)
    if not paths:
        raise Usage("name a values file or a directory of them (or the release's files with -f FILE)")
    model, shape = [], None
    if args.model_config:
        try:
            shape, model_overlay = _model_overlay(args.model_config)
            model = [model_overlay]
        except InputError as exc:
            sys.stdout.write(FORMATTERS[fmt]([], [exc], colour=colour))
            return 2
    overlay = [*model, *command_line_layers(options)]
    # Values files one by one; all manifest files together, as one release (lint/release.py); each answered
    # from the content-addressed cache when nothing it depends on changed (lint/cache.py).
    try:
        result = run_lint(paths, base, args.release, args.namespace, crd, config_path, select,
                          use_cache=not args.no_cache, overlay=overlay)
    except SelectionError as exc:
        raise Usage(f"--select/--ignore: {exc}") from None
    findings, errors = result.findings, result.input_errors
    if model:
        findings, errors = _at_model_config(findings, errors, model[0], args.model_config)
        errors = errors + _without_model(paths, base, overlay[1:], args.model_config)
        _print_shape_block(shape, args.model_config)
    if args.cluster and not errors:
        findings = sorted(findings + _preflight(args, base, paths, overlay))
    unchecked, unchecked_kinds = result.unchecked_rayclusters, result.unchecked_kinds
    sys.stdout.write(FORMATTERS[fmt](findings, errors, colour=colour))
    if unchecked:
        print(f"grpo-lint: note: {unchecked} RayCluster object(s) were not checked against the KubeRay CRD "
              "(only their pod templates were); pass --kuberay-crd FILE, set GRPO_KUBERAY_CRD, or run "
              "`grpo-lint crd fetch` once", file=sys.stderr)
    _note_unchecked_kinds(unchecked_kinds)
    if colour and not findings and not errors:  # on a terminal, silence alone does not say what was looked at
        print(f"grpo-lint: {len(paths)} file(s) checked, no findings")
    if errors:
        return 2
    failing = [f for f in findings if f.severity is Severity.ERROR or args.strict]
    return 1 if failing else 0


def _preflight(args, base: list[str], paths: list[str], overlay: list) -> list:
    """The live preflight (grpo_stack.preflight) for every values file; its notes go to stderr, once each."""
    from ..lint.release import looks_like_manifests
    from ..preflight.run import preflight_many

    manifests = [p for p in paths if looks_like_manifests(p)]
    if manifests:
        raise Usage(f"--cluster checks values files; {manifests[0]} is a manifest file")
    items = [[*base, p, *overlay] for p in paths]
    result = preflight_many(items, args.release, args.namespace or DEFAULT_NAMESPACE, args.kubeconfig, args.context)
    for note in result.notes:
        print(f"grpo-lint: cluster: {printable(note)}", file=sys.stderr)
    return result.findings


def check_release_args(release: str, namespace: str | None) -> None:
    """--release and --namespace as Helm and the API server take them: a name either refuses is a usage error,
    never a silent default (`--namespace ''` used to lint `grpo`)."""
    from ..apivalidation import names

    if (why := names.helm_release(release)) is not None:
        raise Usage(f"--release {release[:80]!r}: {why}")
    if namespace is not None and (why := names.namespace(namespace)) is not None:
        raise Usage(f"--namespace {namespace[:80]!r}: {why}")


def _model_overlay(config_json: str) -> tuple[dict[str, int], str]:
    """The shape the config gives, and a values layer with global.job.model.shape from it (and no preset),
    written beside nothing the user owns: a temporary file named after the config, so findings name where the
    shape came from."""
    import tempfile

    import yaml

    from ..catalog.hf_config import shape_from_config

    shape = shape_from_config(config_json)
    folder = Path(tempfile.mkdtemp(prefix="grpo-lint-model-"))
    out = folder / (Path(config_json).name + ".values.yaml")
    out.write_text(f"# global.job.model.shape from {config_json}\n"
                   + yaml.safe_dump({"global": {"job": {"model": {"preset": None, "shape": shape}}}}))
    return shape, str(out)


def _without_model(paths: list[str], bases: list[str], set_layers: list, config_json: str) -> list[InputError]:
    """The values files that state a run (global.job) with neither model.preset nor model.shape: grpo-render and
    helm install refuse them whatever --model-config lints, so grpo-lint refuses them too (input error, exit 2),
    at the file's own key, naming the block to paste."""
    from ..lint.release import looks_like_manifests
    from ..values import as_values_file, locate, merge_user_values

    out = []
    for path in paths:
        if looks_like_manifests(path):
            continue
        try:
            files = [as_values_file(p) for p in [*bases, path, *set_layers]]
            job = merge_user_values(files).get("global", {})
        except InputError:
            continue  # already reported by the lint itself
        job = job.get("job") if isinstance(job, dict) else None
        if not isinstance(job, dict):
            continue
        model = job.get("model")
        model = model if isinstance(model, dict) else {}
        if model.get("preset") is None and model.get("shape") is None:
            key = "global.job.model" if isinstance(job.get("model"), dict) else "global.job"
            file, line, col = locate(files, key, defaults=False)
            out.append(InputError(file, "neither preset nor shape: grpo-render and helm install refuse this file "
                                  f"(--model-config only lints as if {config_json} were in it); paste the "
                                  "`shape:` block grpo-lint prints under global.job.model, or set preset",
                                  line, col, key_path="global.job.model"))
    return out


def _print_shape_block(shape: dict[str, int] | None, config_json: str) -> None:
    """The `shape:` block --model-config read, as values YAML to paste (stderr: stdout stays the findings)."""
    if not shape:
        return
    body = "".join(f"        {key}: {value}\n" for key, value in shape.items())
    print(f"grpo-lint: global.job.model.shape read from {printable(clip(config_json, 200))}; paste it into the "
          f"values file (instead of preset):\nglobal:\n  job:\n    model:\n      shape:\n{body}", end="",
          file=sys.stderr)


def _at_model_config(findings, errors, overlay: str, config_json: str):
    """Findings and input errors located in the generated overlay, moved to the config.json key they came from:
    the user never saw the overlay file."""
    import dataclasses

    from ..catalog.hf_config import config_position

    def where(key_path: str | None) -> tuple[int | None, int | None, str]:
        shape_key = (key_path or "").removeprefix("global.job.model.shape.").split(".")[0]
        found = config_position(config_json, shape_key) if (key_path or "").startswith("global.job.model.shape.") \
            else None
        return (found[0], found[1], f" (from {found[2]})") if found else (None, None, "")

    moved = []
    for f in findings:
        if f.file == overlay:
            line, column, source = where(f.key_path)
            f = dataclasses.replace(f, file=config_json, line=line or 1, column=column or 1,
                                    message=f.message + source)
        moved.append(f)
    for e in errors:
        if e.file == overlay:
            e.file = config_json
            e.line, e.column, source = where(e.key_path)
            e.message += source
    return moved, errors


def _note_unchecked_kinds(counts: Counter) -> None:
    """Kinds with no bundled schema (custom resources): one line per kind, never one error per object. A note,
    not a finding: nothing in the objects is known to be wrong, and their pod templates were still linted."""
    for (api_version, kind), n in sorted(counts.items()):
        kind, api_version = clip(str(kind), 100), clip(str(api_version), 100)  # hostile names stay one line
        print(f"grpo-lint: note: not schema-checked: {n} object(s) of kind {kind} ({api_version}); no bundled "
              "schema for this kind (their pod templates were linted)", file=sys.stderr)


def use_chart_option(chart: str) -> None:
    if not (Path(chart) / "Chart.yaml").is_file():
        raise Usage(f"--chart {chart}: not a chart directory (no Chart.yaml)")
    use_chart(chart)


def _crd(argv: list[str]) -> int:
    p = Parser(prog="grpo-lint crd", description=f"the KubeRay {kuberay_crd.KUBERAY_VERSION} RayCluster CRD cache")
    sub = p.add_subparsers(dest="action", required=True)
    fetch = sub.add_parser("fetch", help="download the pinned CRD once into the user cache (a download is "
                           "recognized by its schema's pinned sha256; any other is cached as custom and used "
                           "only with --kuberay-crd)")
    fetch.add_argument("--url", default=kuberay_crd.CRD_URL, help="where to download it from (a mirror)")
    fetch.add_argument("--force", action="store_true", help="download again even when cached")
    sub.add_parser("path", help="print the CRD file grpo-lint would use")
    args = p.parse_args(argv)
    if args.action == "fetch":
        dest, downloaded = kuberay_crd.fetch(args.url, force=args.force)
        print(f"{'downloaded' if downloaded else 'already cached'}: {dest}")
        _say_which_crd(dest)
        return 0
    found = kuberay_crd.resolve(os.environ.get("GRPO_KUBERAY_CRD") or None)
    if not found:
        print(f"none (run `grpo-lint crd fetch` to cache it at {kuberay_crd.cache_path()})")
        return 1
    print(found)
    return 0


def _say_which_crd(dest: Path) -> None:
    """Which KubeRay release the cached CRD is (by its schema's digest), and whether grpo-lint uses it."""
    release = dest.parent.name
    if release == kuberay_crd.KUBERAY_VERSION:
        print(f"KubeRay {release} RayCluster CRD (recognized by its schema's sha256); grpo-lint validates against it")
        return
    import json

    digest = kuberay_crd.schema_digest(json.loads(dest.read_text()))
    what = (f"the KubeRay {release} RayCluster CRD (recognized by its schema's sha256), not the "
            f"{kuberay_crd.KUBERAY_VERSION} the chart targets" if release != kuberay_crd.CUSTOM else
            f"custom: its schema (sha256 {digest[:16]}…) is no KubeRay release grpo-lint knows")
    print(f"grpo-lint: note: {what}; cached apart and not used by default: pass --kuberay-crd {dest} to validate "
          "RayClusters against it (findings then come from that schema, not the chart's target)", file=sys.stderr)


def _rules(argv: list[str]) -> int:
    p = Parser(prog="grpo-lint rules", description="list every rule")
    p.add_argument("--format", choices=["text", "markdown"], default="text")
    args = p.parse_args(argv)
    from ..lint.rules import RULES
    from ..lint.rules.docs import rules_markdown

    if args.format == "markdown":
        sys.stdout.write(rules_markdown())
        return 0
    for code, rule in RULES.items():
        print(f"{code}  {rule.NAME:<28} {rule.CATEGORY:<11} {rule.SEVERITY.value:<8} {rule.SUMMARY}")
    return 0


def _explain(argv: list[str]) -> int:
    if len(argv) != 1:
        raise Usage("explain takes one rule code or name, e.g. grpo-lint explain GRPO401")
    from ..lint.rules import by_name_or_code

    rule = by_name_or_code(argv[0])
    if rule is None:
        from ..preflight.checks import CODES

        for code, (name, summary) in CODES.items():
            if argv[0].upper() == code or argv[0] == name:
                print(f"# {code} {name} (grpo-lint --cluster)\n\n{summary}\n\nSee docs/preflight.md.")
                return 0
        raise Usage(f"no such rule: {argv[0]!r} (see grpo-lint rules)")
    print(f"# {rule.CODE} {rule.NAME} ({rule.SEVERITY.value})\n\n{rule.SUMMARY}\n\n{rule.DOC.strip()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
