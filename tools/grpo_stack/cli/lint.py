"""grpo-lint: check values files (and plain manifests) before any GPU is requested.

  grpo-lint [FILE|DIR]... [--format text|json|sarif|github] [--strict]
  grpo-lint rules [--format text|markdown]
  grpo-lint explain GRPO123

Exit status: 0 clean, 1 findings at error severity (warnings too with --strict), 2 usage or input errors.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..errors import InputError
from ..lint.engine import lint_manifests, lint_values, looks_like_manifests
from ..lint.finding import Severity
from ..lint.formatters import FORMATTERS
from ..lint.rules import RULES, by_name_or_code
from ..lint.rules.docs import rules_markdown
from ..lint.suppress import load_config
from ..release import DEFAULT_NAMESPACE, DEFAULT_RELEASE


class Usage(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 too, but we want one consistent line
        raise Usage(message)


def lint_parser() -> argparse.ArgumentParser:
    p = Parser(prog="grpo-lint", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", help="values files, directories of them, or manifest files")
    p.add_argument("--format", choices=sorted(FORMATTERS), default=None,
                   help="output format (default: github under GITHUB_ACTIONS, else text)")
    p.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    p.add_argument("--release", default=DEFAULT_RELEASE,
                   help=f"release name to render with (default: {DEFAULT_RELEASE})")
    p.add_argument("--namespace", default=DEFAULT_NAMESPACE,
                   help=f"release namespace to render with (default: {DEFAULT_NAMESPACE}, as grpo-render)")
    p.add_argument("--base", action="append", default=[], metavar="FILE",
                   help="values file(s) merged under each checked file, like an earlier helm -f")
    p.add_argument("--config", help="suppressions file (default: .grpo-lint.yaml if present)")
    p.add_argument("--kuberay-crd", default=os.environ.get("GRPO_KUBERAY_CRD"),
                   help="KubeRay RayCluster CRD schema (JSON) to validate RayCluster objects against "
                   "(default: $GRPO_KUBERAY_CRD)")
    p.add_argument("--select", help="comma-separated codes to run (default: all)")
    p.add_argument("--model-config", metavar="CONFIG_JSON",
                   help="a Hugging Face config.json: lint with global.job.model.shape filled from it (any model)")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "rules":
            return _rules(argv[1:])
        if argv and argv[0] == "explain":
            return _explain(argv[1:])
        return _lint(lint_parser().parse_args(argv))
    except Usage as exc:
        print(f"grpo-lint: {exc}", file=sys.stderr)
        return 2


def _expand(paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(str(f) for f in path.rglob("*") if f.suffix in (".yaml", ".yml") and f.is_file())
            if not found:
                raise Usage(f"{p}: directory has no .yaml files")
            out += found
        else:
            out.append(p)
    return out


def _lint(args) -> int:
    fmt = args.format or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    colour = fmt == "text" and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    config_path = args.config or (".grpo-lint.yaml" if Path(".grpo-lint.yaml").exists() else None)
    findings, errors = [], []
    try:
        config = load_config(config_path) if config_path else []
    except InputError as exc:
        errors.append(exc)
        config = []
    select = frozenset(c.strip().upper() for c in args.select.split(",")) if args.select else None
    if args.kuberay_crd and not Path(args.kuberay_crd).is_file():
        raise Usage(f"--kuberay-crd {args.kuberay_crd}: no such file")
    overlay = []
    if args.model_config:
        try:
            overlay = [_model_overlay(args.model_config)]
        except InputError as exc:
            sys.stdout.write(FORMATTERS[fmt]([], [exc], colour=colour))
            return 2
    for path in _expand(args.paths):
        kw = dict(kuberay_crd=args.kuberay_crd, config=config, select=select)
        if Path(path).is_file() and looks_like_manifests(path):
            result = lint_manifests(path, **kw)
        else:
            result = lint_values([*args.base, path, *overlay], release=args.release, namespace=args.namespace, **kw)
        findings += result.findings
        errors += result.input_errors
    sys.stdout.write(FORMATTERS[fmt](findings, errors, colour=colour))
    if errors:
        return 2
    failing = [f for f in findings if f.severity is Severity.ERROR or args.strict]
    return 1 if failing else 0


def _model_overlay(config_json: str) -> str:
    """A values layer with global.job.model.shape from the config (and no preset), written beside nothing the
    user owns: a temporary file named after the config, so findings name where the shape came from."""
    import tempfile

    import yaml

    from ..catalog.hf_config import shape_from_config

    shape = shape_from_config(config_json)
    folder = Path(tempfile.mkdtemp(prefix="grpo-lint-model-"))
    out = folder / (Path(config_json).name + ".values.yaml")
    out.write_text(f"# global.job.model.shape from {config_json}\n"
                   + yaml.safe_dump({"global": {"job": {"model": {"preset": None, "shape": shape}}}}))
    return str(out)


def _rules(argv: list[str]) -> int:
    p = Parser(prog="grpo-lint rules", description="list every rule")
    p.add_argument("--format", choices=["text", "markdown"], default="text")
    args = p.parse_args(argv)
    if args.format == "markdown":
        sys.stdout.write(rules_markdown())
        return 0
    for code, rule in RULES.items():
        print(f"{code}  {rule.NAME:<28} {rule.SEVERITY.value:<8} {rule.SUMMARY}")
    return 0


def _explain(argv: list[str]) -> int:
    if len(argv) != 1:
        raise Usage("explain takes one rule code or name, e.g. grpo-lint explain GRPO401")
    rule = by_name_or_code(argv[0])
    if rule is None:
        raise Usage(f"no such rule: {argv[0]!r} (see grpo-lint rules)")
    print(f"# {rule.CODE} {rule.NAME} ({rule.SEVERITY.value})\n\n{rule.SUMMARY}\n\n{rule.DOC.strip()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
