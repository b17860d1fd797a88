"""What every grpo-* command does alike: `--version`, `completion bash|zsh`, a quiet end on a closed pipe, and
usage errors as one line and exit 2 (Usage, Parser)."""

from __future__ import annotations

import argparse
import functools
import os
import sys


class Usage(Exception):
    """A command line the command refuses: said in one line, exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 too, but with its whole usage text: one consistent line instead
        raise Usage(message)


def check_endpoint(endpoint: str | None) -> None:
    """--endpoint as the Hub clients need it: an http(s) URL with a host (a Usage error names the option; `::::`
    used to end in the HTTP client's traceback)."""
    if endpoint is None:
        return
    from urllib.parse import urlsplit

    try:
        url = urlsplit(endpoint)
        _ = url.port  # a port that is not a number raises here
        ok = url.scheme in ("http", "https") and bool(url.hostname) and not any(
            c.isspace() or not c.isprintable() for c in endpoint)
    except ValueError:
        ok = False
    if not ok:
        raise Usage(f"--endpoint {endpoint[:200]!r}: not an http(s) URL with a host (e.g. https://huggingface.co)")


def tools_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # only for --version: a lint run never asks

    try:
        return version("grpo-stack")
    except PackageNotFoundError:
        return "unknown"


def silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush of a closed pipe raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


CLOSED_PIPE = 141  # what a shell reports for a command SIGPIPE ended (128 + 13)


def command(prog: str, parser_factory, subcommands: tuple[str, ...] = ()):
    """Wrap a command's main(argv): `PROG --version`, `PROG completion bash|zsh`, and `PROG ... | head` ending
    quietly (exit 141, as SIGPIPE would) instead of as an internal error. `subcommands`: words the command
    dispatches itself, outside its argparse parser (completion offers them)."""

    def wrap(main):
        @functools.wraps(main)
        def run(argv: list[str] | None = None) -> int:
            argv = list(sys.argv[1:] if argv is None else argv)
            try:
                if argv[:1] == ["--version"]:
                    print(f"{prog} {tools_version()}")
                    code = 0
                elif argv[:1] == ["completion"]:
                    code = _completion(prog, parser_factory(), subcommands, argv[1:])
                else:
                    code = main(argv)
                sys.stdout.flush()
                return code
            except BrokenPipeError:
                silence_stdout()
                return CLOSED_PIPE

        return run

    return wrap


def _completion(prog: str, parser: argparse.ArgumentParser, extra: tuple[str, ...], argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("bash", "zsh"):
        print(f"{prog}: usage: {prog} completion bash|zsh  (e.g. `source <({prog} completion bash)`)",
              file=sys.stderr)
        return 2
    print(completion_script(prog, parser, extra, zsh=argv[0] == "zsh"))
    return 0


def _options(parser: argparse.ArgumentParser) -> tuple[list[str], dict[str, list[str]]]:
    """(top-level words, words per subcommand) from the parser's own declarations."""
    top, subs = ["--version", "completion"], {}
    for action in parser._actions:  # argparse keeps its declarations here; there is no public accessor
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                top.append(name)
                subs[name] = [o for a in sub._actions for o in a.option_strings]
        else:
            top += action.option_strings
    return list(dict.fromkeys(top)), subs  # once each: data and models declare --version in argparse too


def completion_script(prog: str, parser: argparse.ArgumentParser, extra: tuple[str, ...] = (),
                      zsh: bool = False) -> str:
    """A bash completion function for `prog` (zsh loads it through bashcompinit): subcommands and options,
    file names elsewhere."""
    top, subs = _options(parser)
    top += list(extra)
    subs.setdefault("completion", ["bash", "zsh"])
    fn = "_" + prog.replace("-", "_")
    cases = "".join(f"    {name}) words=\"{' '.join(words)}\";;\n" for name, words in sorted(subs.items()))
    script = f"""{fn}() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" words
  case "${{COMP_WORDS[1]}}" in
{cases}    *) words="{' '.join(top)}";;
  esac
  if [[ $COMP_CWORD -eq 1 || "$cur" == -* || "${{COMP_WORDS[1]}}" == completion ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
  if [[ ${{#COMPREPLY[@]}} -eq 0 ]]; then COMPREPLY=($(compgen -f -- "$cur")); fi
}}
complete -o filenames -F {fn} {prog}
"""
    if zsh:
        script = "autoload -U +X bashcompinit && bashcompinit\n" + script
    return script
