"""grpo-models: stage a model onto the shared volume at a pinned revision, verified, with a manifest.

  grpo-models stage REPO --revision COMMIT [--mount /fsx | --dest DIR] [--values FILE] [--allow-mutable]
  grpo-models verify DIR

stage downloads REPO (HF_TOKEN from the environment, never printed) to <mount>/models/<name>, checks every
.safetensors file (header, tensor byte ranges: truncation is caught), the shard index, config.json and the
tokenizer, compares the files with the sha256 the Hub publishes, and writes grpo-model-manifest.json (file,
size, sha256, revision). With --values, config.json must match the model shape the values declare.
verify re-checks a staged directory against its manifest (after a copy, before a run).
Exit status: 0 good, 1 a file failed a check (each named), 2 bad input or a download the source refused.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .conventions import Parser, Usage, check_endpoint, command


def parser() -> argparse.ArgumentParser:
    from .data import tools_version

    top = Parser(prog="grpo-models", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"grpo-models {tools_version()}")
    sub = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    st = sub.add_parser("stage", help="download, verify and record a model")
    st.add_argument("repo", metavar="MODEL", help="Hugging Face repository, e.g. Qwen/Qwen3-8B")
    st.add_argument("--revision", required=True, help="a 40-hex commit (a branch needs --allow-mutable)")
    st.add_argument("--allow-mutable", action="store_true", help="accept a branch or tag; recorded as mutable")
    st.add_argument("--mount", type=Path, default=None,
                    help="storage mount (default: the values' global.storage.mountPath, else /fsx)")
    st.add_argument("--name", help="directory name under <mount>/models (default: the repository's name)")
    st.add_argument("--dest", type=Path, help="exact destination directory (overrides --mount/--name)")
    st.add_argument("--values", type=Path, help="values file whose model shape config.json must match; without "
                    "--dest/--name the model goes to <mount>/<global.job.model.path>")
    st.add_argument("--from-dir", type=Path, help="copy this local snapshot instead of downloading")
    st.add_argument("--endpoint", help="Hub endpoint (default: huggingface_hub's, i.e. $HF_ENDPOINT or the Hub)")
    st.add_argument("--no-progress", action="store_true")
    ve = sub.add_parser("verify", help="re-check a staged directory against its manifest")
    ve.add_argument("dir", type=Path)
    ve.add_argument("--no-progress", action="store_true")
    return top


@command("grpo-models", lambda: parser())
def main(argv: list[str] | None = None) -> int:
    from ..errors import printable

    try:
        # Imported here so that a missing safetensors is this one line, not a traceback: without it nothing
        # could be verified, and a check that cannot run must never pass.
        from ..models import safetensors_check  # noqa: F401
    except ImportError as exc:
        print(f"grpo-models: {exc.name or 'safetensors'} is not installed; it is required to verify weights "
              "(pip install the grpo-stack tools with their pinned dependencies)", file=sys.stderr)
        return 2
    try:
        args = parser().parse_args(argv)
        check_stage_args(args)
        if args.no_progress:
            from huggingface_hub.utils import disable_progress_bars

            disable_progress_bars()
        return _stage(args) if args.command == "stage" else _verify(args)
    except Usage as exc:
        print(printable(f"grpo-models: {exc}"), file=sys.stderr)
        return 2


def check_stage_args(args) -> None:
    """Arguments that would write outside the mount or reach no Hub are usage errors, before any download."""
    if getattr(args, "command", None) != "stage":
        return
    if args.mount is not None and not args.mount.is_absolute():
        raise Usage(f"--mount {str(args.mount)!r}: give the absolute mount path of the shared volume (e.g. /fsx)")
    if args.name is not None and (not args.name or "/" in args.name or "\\" in args.name
                                  or args.name in (".", "..") or "\0" in args.name):
        raise Usage(f"--name {args.name!r}: one directory name under <mount>/models (no '/', '.' or '..')")
    check_endpoint(args.endpoint)


def _manifest_problems(body: dict) -> list[str]:
    """A manifest must say what was staged: a pinned revision is a commit (an edited `main` is refused)."""
    from ..models.fetch import COMMIT

    revision, mutable = body.get("revision"), body.get("mutable")
    if not isinstance(revision, str) or not isinstance(mutable, bool):
        return ["manifest has no revision/mutable record (not written by grpo-models stage)"]
    if not mutable and not COMMIT.match(revision):
        return [f"manifest revision {revision!r} is not a commit but is recorded as pinned (mutable: false): the "
                "manifest was edited; stage the model again"]
    commit = body.get("commit")
    if not mutable and commit is not None and commit != revision:
        return [f"manifest revision {revision!r} differs from its commit {commit!r}: the manifest was edited"]
    return []


def _report(bad: dict[str, list[str]], where: Path) -> int:
    for rel, problems in sorted(bad.items()):
        for p in problems:
            print(f"grpo-models: {where / rel}: {p}", file=sys.stderr)
    return 1 if bad else 0


def _declared_shape(path: Path):
    from ..errors import InputError
    from ..job.args import BuildError
    from ..models.shape import declared
    from ..render import RenderError, merged_values
    from ..values import load_values_file, merge_user_values

    try:
        values = merged_values(merge_user_values([load_values_file(path)]))
        glob = values.get("global") or {}
        place = ((glob.get("storage") or {}).get("mountPath"), ((glob.get("job") or {}).get("model") or {}).get("path"))
        return (*declared(values), place)
    except InputError as exc:
        raise Usage(str(exc)) from None
    except (BuildError, RenderError) as exc:
        raise Usage(f"{path}: {exc}") from None


def _stage(args) -> int:
    from ..models import checks, fetch, manifest
    from ..models.shape import mismatches
    from .data import tools_version

    if "/" not in args.repo or args.repo.count("/") != 1 or not all(args.repo.split("/")):
        raise Usage(f"{args.repo!r}: expected a repository id like Qwen/Qwen3-8B")
    if not args.revision.strip():
        raise Usage("--revision is empty: give the 40-hex commit to stage")
    mutable = not fetch.COMMIT.match(args.revision)
    if mutable and not args.allow_mutable:
        raise Usage(f"--revision {args.revision!r} is a branch or tag, not a commit: pin the commit "
                    "(the Hub shows it on the model's 'Files' page) or pass --allow-mutable to record it as mutable")
    want = _declared_shape(args.values) if args.values else None
    mount = args.mount or Path((want[2][0] if want and want[2][0] else None) or "/fsx")
    if args.dest:
        dest = args.dest
    elif want and want[2][1] and not args.name:
        dest = mount / want[2][1]  # exactly where the run will read it
    else:
        dest = mount / "models" / (args.name or args.repo.split("/")[1])
    try:
        dest.mkdir(parents=True, exist_ok=True)
        probe = dest / ".grpo-models-probe"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise Usage(f"{dest}: cannot write there ({exc.strerror or exc})") from None
    old = dest / checks.MANIFEST
    if old.exists():
        old.unlink()  # a directory being restaged has no valid manifest until the new one is written
    try:
        if args.from_dir:
            got = fetch.from_directory(args.from_dir, args.revision, dest)
        else:
            got = fetch.from_hub(args.repo, args.revision, dest, args.endpoint)
    except fetch.FetchError as exc:
        print(f"grpo-models: {exc}", file=sys.stderr)
        return 2
    bad = checks.check_dir(dest)
    table = manifest.file_table(dest, progress=not args.no_progress)
    by_path = {f["path"]: f for f in table}
    for rel in sorted(set(by_path) - got.files):
        bad.setdefault(rel, []).append(f"not part of {args.repo}@{args.revision} (left from an earlier staging? "
                                       "remove it or stage into an empty directory)")
    for rel, sha in sorted(got.expected_sha256.items()):
        if rel not in by_path:
            bad.setdefault(rel, []).append("published by the source but not downloaded")
        elif by_path[rel]["sha256"] != sha:
            bad.setdefault(rel, []).append(f"sha256 {by_path[rel]['sha256']} but the source publishes {sha}")
    if want is not None and "config.json" not in bad:
        shape, origin, _ = want
        config = json.loads((dest / "config.json").read_text(encoding="utf-8"))
        for m in mismatches(shape, config):
            bad.setdefault("config.json", []).append(f"{m} ({args.values}: {origin})")
    if bad:
        _report(bad, dest)
        print(f"grpo-models: {dest}: NOT staged ({len(bad)} bad file(s)); no manifest written", file=sys.stderr)
        return 1
    body = {
        "tool": f"grpo-models {tools_version()}", "repo": args.repo, "revision": args.revision,
        "commit": got.commit, "mutable": mutable, "source": str(args.from_dir) if args.from_dir else "hub",
        "files": table,
    }
    try:
        manifest.write(dest, body)
    except OSError as exc:
        print(f"grpo-models: {dest}: cannot write the manifest ({exc.strerror or exc}); NOT staged", file=sys.stderr)
        return 2
    note = " (MUTABLE revision: recorded as such)" if mutable else ""
    print(f"staged {args.repo}@{args.revision}{note} to {dest}: {len(table)} files, manifest {checks.MANIFEST}")
    return 0


def _verify(args) -> int:
    from ..models import checks, manifest

    root = args.dir
    mpath = root / checks.MANIFEST
    if not root.is_dir():
        raise Usage(f"{root}: no such directory")
    if not mpath.is_file():
        raise Usage(f"{mpath}: no manifest (stage the model with grpo-models stage first)")
    try:
        body = json.loads(mpath.read_text(encoding="utf-8"))
        if not isinstance(body, dict) or not isinstance(body.get("files"), list):
            raise ValueError("no files list")
    except (ValueError, UnicodeDecodeError) as exc:
        raise Usage(f"{mpath}: unreadable manifest ({exc})") from None
    except RecursionError:
        raise Usage(f"{mpath}: unreadable manifest (JSON nested too deeply)") from None
    bad = manifest.compare(root, body, progress=not args.no_progress)
    if problems := _manifest_problems(body):
        bad[checks.MANIFEST] = problems
    for rel, problems in checks.check_dir(root).items():
        if rel not in bad:
            bad[rel] = problems
    if bad:
        _report(bad, root)
        return 1
    print(f"{root}: {len(body['files'])} files match the manifest ({body.get('repo')}@{body.get('revision')})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
