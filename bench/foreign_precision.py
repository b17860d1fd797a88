"""Precision of grpo-lint on manifests written by other projects, against hand-triaged labels.

    python bench/foreign_precision.py SRC_DIR [--labels bench/foreign/labels.yaml] [--tools DIR] [--json]

SRC_DIR holds the source repositories checked out at the labelled commits, as SRC_DIR/<owner>/<name> (run the
script without a checkout to print the `git clone` / `git checkout` commands). Each source lists how its files
are applied, and the script lints them that way:

- `each`: independent samples, every file linted alone (one release per file);
- `together`: files applied as one release (`kubectl apply -f a.yaml -f b.yaml`), linted in one run;
- `helm`: a chart rendered with the real helm (`helm template RELEASE CHART -n NS -f VALUES`, one release per
  values file; chart dependencies are dropped, the values leave them disabled) and linted with `--namespace NS`.

Every finding is matched to a label by (repository, path, code, key path): `verdict: true` is a real defect of
the rule's class, `false` is noise. It prints per-rule and overall precision (true / labelled findings), the
findings no label covers (to triage), and the known misses (defects of the rules' classes nothing reports).
`--tools DIR` lints with the grpo_stack package under DIR (another checkout's `tools/`, for a before/after).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# One finding per pod that lacks a Pod Security `restricted` setting (GRPO809 folds them per pod on manifests):
# most findings on samples written without hardening, so precision is also shown without them.
HARDENING = frozenset({"GRPO809", "GRPO810", "GRPO811", "GRPO812", "GRPO813", "GRPO816"})
LINT = "import sys; from grpo_stack.cli.lint import main; sys.exit(main())"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path, help="directory holding <owner>/<name> checkouts")
    ap.add_argument("--labels", type=Path, default=ROOT / "bench" / "foreign" / "labels.yaml")
    ap.add_argument("--tools", type=Path, help="lint with the grpo_stack package under this directory")
    ap.add_argument("--json", action="store_true", help="print every finding with its verdict as JSON lines")
    args = ap.parse_args(argv)
    labels = yaml.safe_load(args.labels.read_text())
    missing = [s for s in labels["sources"] if not (args.src / s["repo"]).is_dir()]
    if missing:
        print(f"{args.src}: missing checkouts; get them with:", file=sys.stderr)
        for s in missing:
            print(f"  git clone https://github.com/{s['repo']} {args.src / s['repo']} && "
                  f"git -C {args.src / s['repo']} checkout {s['commit']}", file=sys.stderr)
        return 2
    findings = []
    for source in labels["sources"]:
        head = _head(args.src / source["repo"])
        if head != source["commit"]:
            print(f"warning: {source['repo']} is at {head}, labelled at {source['commit']}", file=sys.stderr)
        findings += lint_source(args.src, source, args.tools)
    verdicts = {(f["repo"], f["path"], f["code"], f["at"]): f["verdict"] for f in labels.get("findings") or []}
    report(findings, verdicts, labels.get("misses") or [], args.json)
    return 0


def _head(repo: Path) -> str:
    out = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip()


def releases(src: Path, source: dict) -> list[tuple[str, list[Path]]]:
    """(label path, files) for each release the source's files make, in the documented way."""
    repo = src / source["repo"]
    files = sorted(str(p.relative_to(repo)) for p in repo.rglob("*.y*ml") if p.is_file())
    skip = source.get("skip") or []
    each = [f for f in files if any(fnmatch.fnmatchcase(f, p) for p in source.get("each") or [])
            and not any(fnmatch.fnmatchcase(f, s) for s in skip)]
    out = [(f, [repo / f]) for f in each]
    for group in source.get("together") or []:
        out.append((" + ".join(group), [repo / f for f in group]))
    return out


def lint_source(src: Path, source: dict, tools: Path | None) -> list[dict]:
    out = []
    for label, files in releases(src, source):
        out += _lint(source["repo"], label, files, [], tools)
    helm = source.get("helm")
    if helm:
        with tempfile.TemporaryDirectory() as tmp:
            chart = Path(tmp) / "chart"
            shutil.copytree(src / source["repo"] / helm["chart"], chart)
            meta = yaml.safe_load((chart / "Chart.yaml").read_text())
            meta.pop("dependencies", None)  # OCI subcharts (monitoring), disabled by the values rendered here
            (chart / "Chart.yaml").write_text(yaml.safe_dump(meta))
            for values in helm["values"]:
                rendered = Path(tmp) / (Path(values).stem + ".rendered.yaml")
                cmd = [_helm(), "template", helm["release"], str(chart), "-n", helm["namespace"], "-f",
                       str(src / source["repo"] / values)]
                rendered.write_text(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
                out += _lint(source["repo"], f"helm:{values}", [rendered], ["--namespace", helm["namespace"]], tools)
    return out


def _helm() -> str:
    if os.environ.get("GRPO_HELM"):
        return os.environ["GRPO_HELM"]
    lines = subprocess.run([sys.executable, "-m", "tests.helm_binaries"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    return next(line.split("=", 1)[1] for line in lines if line.startswith("GRPO_HELM="))


def _lint(repo: str, label: str, files: list[Path], extra: list[str], tools: Path | None) -> list[dict]:
    env = dict(os.environ)
    if tools:
        env["PYTHONPATH"] = str(tools)
    cmd = [sys.executable, "-c", LINT, "--format", "json", "--no-cache", *extra, *map(str, files)]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if run.returncode not in (0, 1):
        return [{"repo": repo, "path": label, "code": "INPUT", "at": "",
                 "message": (run.stderr.strip() or run.stdout.strip())[-300:]}]
    return [{"repo": repo, "path": label, "code": f["code"], "at": f"{Path(f['file']).name}:{f['key_path']}",
             "message": f["message"]} for f in json.loads(run.stdout)["findings"]]


def report(findings: list[dict], verdicts: dict, misses: list[dict], as_json: bool) -> None:
    per_rule: dict[str, Counter] = defaultdict(Counter)
    unlabelled = []
    for f in findings:
        if f["code"] == "INPUT":
            print(f"input error (not a finding): {f['repo']} {f['path']}: {f['message']}")
            continue
        verdict = verdicts.get((f["repo"], f["path"], f["code"], f["at"]))
        f["verdict"] = verdict
        per_rule[f["code"]]["true" if verdict is True else "false" if verdict is False else "unlabelled"] += 1
        if verdict is None:
            unlabelled.append(f)
        if as_json:
            print(json.dumps(f))
    print(f"{'rule':<9} {'findings':>8} {'true':>6} {'false':>6} {'unlab.':>6} {'precision':>9}")
    total = Counter()
    for code in sorted(per_rule):
        c = per_rule[code]
        total.update(c)
        print(f"{code:<9} {sum(c.values()):>8} {c['true']:>6} {c['false']:>6} {c['unlabelled']:>6} "
              f"{_precision(c):>9}")
    print(f"{'all':<9} {sum(total.values()):>8} {total['true']:>6} {total['false']:>6} {total['unlabelled']:>6} "
          f"{_precision(total):>9}")
    rest = sum((per_rule[c] for c in per_rule if c not in HARDENING), Counter())
    print(f"{'all but pod hardening (' + ', '.join(sorted(HARDENING)) + ')':<9}: {sum(rest.values())} findings, "
          f"precision {_precision(rest)}")
    real = [f for f in findings if f["code"] != "INPUT"]
    print(f"\n{len(real)} finding(s) in {len({(f['repo'], f['path']) for f in real})} release(s) with findings")
    if unlabelled:
        print(f"\n{len(unlabelled)} finding(s) not in the labels (triage them):")
        for f in unlabelled:
            print(f"  {f['repo']} {f['path']} {f['code']} {f['at']}: {f['message'][:160]}")
    if misses:
        print(f"\n{len(misses)} recorded miss(es) (defects of the rules' classes that went unreported; the note says "
              "which are fixed):")
        for m in misses:
            print(f"  {m['repo']} {m['path']}: [{m['class']}] {m['note']}")


def _precision(c: Counter) -> str:
    labelled = c["true"] + c["false"]
    return f"{c['true'] / labelled:.3f}" if labelled else "-"


if __name__ == "__main__":
    sys.exit(main())
