"""Precision of grpo-lint on manifests written by other projects, against hand-triaged labels.

    python bench/foreign_precision.py SRC_DIR [--labels bench/foreign/labels.yaml] [--tools DIR] [--json]

SRC_DIR holds the source repositories checked out at the labelled commits, as SRC_DIR/<owner>/<name> (run the
script without a checkout to print the `git clone` / `git checkout` commands). Each source lists how its files
are applied, and the script lints them that way:

- `each`: independent samples, every file linted alone (one release per file);
- `together`: files applied as one release (`kubectl apply -f a.yaml -f b.yaml`), linted in one run;
- `helm`: a chart rendered with the real helm (`helm template RELEASE CHART -n NS -f VALUES`, one release per
  values file; chart dependencies are dropped, the values leave them disabled) and linted with `--namespace NS`.

Every finding is matched to a label by (repository, path, code, key path), and by a `match` text its message
holds where one key path carries several findings: `verdict: true` is a real defect of the rule's class, `false` is
noise. It prints per-rule and overall precision (true / labelled findings), the
findings no label covers (to triage), and the known misses (defects of the rules' classes nothing reports).
`--tools DIR` lints with the grpo_stack package under DIR (another checkout's `tools/`, for a before/after);
`--before DIR` lints with both and prints only the findings that differ, with their recorded verdicts, and
`--present` lints the sources that are checked out and skips the rest (a corpus fetched again in part).

Recall: sources marked `triaged` had every file read and its certain defects listed under `defects` (class and
object) before grpo-lint ran on them; a defect counts as caught when a finding of a rule that answers for its class
(`classes` in the labels) is reported on that file. Files listed under `clean` have no certain defect: an
error-severity finding on one is an error on a clean file. `substitute` replaces placeholders the way the source's
walkthrough does before `kubectl apply` (envsubst, or by hand), in a copy of the file under the same name.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
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
# The rules of the `hardening` category (`grpo-lint rules`): one finding per pod that lacks a Pod Security
# `restricted` setting (GRPO809 folds them per pod on manifests) and Ray's whole-volume mounts; most findings on
# samples written without hardening, so precision is also shown without them.
HARDENING = frozenset({"GRPO809", "GRPO810", "GRPO811", "GRPO812", "GRPO813", "GRPO814", "GRPO816"})
LINT = "import sys; from grpo_stack.cli.lint import main; sys.exit(main())"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path, help="directory holding <owner>/<name> checkouts")
    ap.add_argument("--labels", type=Path, default=ROOT / "bench" / "foreign" / "labels.yaml")
    ap.add_argument("--tools", type=Path, help="lint with the grpo_stack package under this directory")
    ap.add_argument("--json", action="store_true", help="print every finding with its verdict as JSON lines")
    ap.add_argument("--half", choices=["tune", "held-out"],
                    help="with a labels file that has a `split`: lint and score only that half")
    ap.add_argument("--before", type=Path,
                    help="also lint with the grpo_stack package under this directory (another checkout's tools/) "
                         "and print only the findings that differ, with their verdicts: a change's effect on a corpus")
    ap.add_argument("--present", action="store_true",
                    help="lint the sources that are checked out under SRC and skip the others (a corpus fetched again "
                         "in part), instead of refusing")
    args = ap.parse_args(argv)
    labels = yaml.safe_load(args.labels.read_text())
    if args.half:
        labels = half(labels, args.half)
    missing = [s for s in labels["sources"] if not (args.src / s["repo"]).is_dir()]
    if missing and args.present:
        print(f"{len(missing)} of {len(labels['sources'])} sources not checked out: skipped", file=sys.stderr)
        kept = {s["repo"] for s in labels["sources"] if s not in missing}
        labels = {**labels, "sources": [s for s in labels["sources"] if s not in missing],
                  **{k: [x for x in labels.get(k) or [] if x.get("repo") in kept]
                     for k in ("defects", "possible", "clean", "findings", "misses")}}
        missing = []
    if missing:
        print(f"{args.src}: missing checkouts; get them with:", file=sys.stderr)
        for s in missing:
            print(f"  git clone https://github.com/{s['repo']} {args.src / s['repo']} && "
                  f"git -C {args.src / s['repo']} checkout {s['commit']}", file=sys.stderr)
        return 2
    findings, earlier = [], []
    for source in labels["sources"]:
        head = _head(args.src / source["repo"])
        if head != source["commit"]:
            print(f"warning: {source['repo']} is at {head}, labelled at {source['commit']}", file=sys.stderr)
        findings += lint_source(args.src, source, args.tools)
        if args.before:
            earlier += lint_source(args.src, source, args.before)
    verdicts: dict = {}
    for f in labels.get("findings") or []:  # several findings at one key path are told apart by `match`
        verdicts.setdefault((f["repo"], f["path"], f["code"], f["at"]), []).append(f)
    if args.before:
        print_difference(earlier, findings, verdicts)
        return 0
    report(findings, verdicts, labels.get("misses") or [], args.json)
    report_recall(findings, labels)
    return 0


def _held_out(seed: str, repo: str, path: str) -> bool:
    return int(hashlib.sha256(f"{seed}:{repo}:{path}".encode()).hexdigest()[:16], 16) % 2 == 1


def half(labels: dict, which: str) -> dict:
    """The labels of one half of a split corpus: each file listed by exact path in `each`, and each `together`
    group (one release) as a whole, by the hash of its release path (`a.yaml + b.yaml`); the held-out half's files
    and labels must hash to the committed `held_out_sha256`, so an edit of them after the split is seen."""
    seed = labels["split"]["seed"]
    files = [(s["repo"], p) for s in labels["sources"] for p in s.get("each") or []]
    held = {f for f in files if _held_out(seed, *f)}
    for s in labels["sources"]:
        for group in s.get("together") or []:
            members = {(s["repo"], p) for p in group}
            files += sorted(members)
            if _held_out(seed, s["repo"], " + ".join(group)):
                held |= members
    kept = held if which == "held-out" else set(files) - held

    def of(key: str, keys: set) -> list[dict]:
        return [x for x in labels.get(key) or [] if (x["repo"], x["path"]) in keys]

    held_labels = {k: sorted(of(k, held), key=lambda x: json.dumps(x, sort_keys=True))
                   for k in ("defects", "possible", "clean")}
    digest = hashlib.sha256(json.dumps({"files": sorted(held), "labels": held_labels}, sort_keys=True).encode())
    if digest.hexdigest() != labels["split"]["held_out_sha256"]:
        raise SystemExit("the held-out half's files or labels changed after the split (held_out_sha256 differs)")
    sources = [{**s, "each": [p for p in s.get("each") or [] if (s["repo"], p) in kept],
                "together": [g for g in s.get("together") or [] if (s["repo"], g[0]) in kept]}
               for s in labels["sources"]]
    return {**labels, "sources": [s for s in sources if s.get("each") or s.get("together")],
            **{k: of(k, kept) for k in ("defects", "possible", "clean")}}


def _head(repo: Path) -> str:
    out = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip()


def releases(src: Path, source: dict) -> list[tuple[str, list[Path]]]:
    """(label path, files) for each release the source's files make, in the documented way."""
    repo = src / source["repo"]
    files = sorted({str(p.relative_to(repo)) for p in repo.rglob("*.y*ml") if p.is_file()}
                   | {f for f in source.get("each") or [] if (repo / f).is_file()})  # `x.yaml-template` by name
    skip = source.get("skip") or []
    each = [f for f in files if any(fnmatch.fnmatchcase(f, p) for p in source.get("each") or [])
            and not any(fnmatch.fnmatchcase(f, s) for s in skip)]
    out = [(f, [repo / f]) for f in each]
    for group in source.get("together") or []:
        out.append((" + ".join(group), [repo / f for f in group]))
    return out


def lint_source(src: Path, source: dict, tools: Path | None) -> list[dict]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, files in releases(src, source):
            linted = _substituted(files, source, Path(tmp))
            members = dict(zip(map(str, linted), label.split(" + "), strict=True)) if len(linted) > 1 else {}
            out += _lint(source["repo"], label, linted, [], tools, members)
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


def _substituted(files: list[Path], source: dict, tmp: Path) -> list[Path]:
    """The files with the source's placeholders filled in, as its walkthrough does before applying them."""
    subst = source.get("substitute") or {}
    if not subst:
        return files
    out = []
    for f in files:
        text = f.read_text()
        for old, new in subst.items():
            text = text.replace(old, new)
        name = f.name if f.suffix in (".yaml", ".yml") else f.name + ".yaml"  # a template, once filled in
        copy = tmp / str(len(list(tmp.iterdir()))) / name
        copy.parent.mkdir(parents=True)
        copy.write_text(text)
        out.append(copy)
    return out


def _helm() -> str:
    if os.environ.get("GRPO_HELM"):
        return os.environ["GRPO_HELM"]
    lines = subprocess.run([sys.executable, "-m", "tests.helm_binaries"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    return next(line.split("=", 1)[1] for line in lines if line.startswith("GRPO_HELM="))


def _lint(repo: str, label: str, files: list[Path], extra: list[str], tools: Path | None,
          members: dict[str, str] | None = None) -> list[dict]:
    """The findings of one release. `members` maps each linted file to its path in the repository, so a finding is
    put on the right member of a release whose files share a name (`llm/deployment.yaml + gateway/deployment.yaml`)."""
    env = dict(os.environ)
    if tools:
        env["PYTHONPATH"] = str(tools)
    cmd = [sys.executable, "-c", LINT, "--format", "json", "--no-cache", *extra, *map(str, files)]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    try:
        doc = json.loads(run.stdout)
    except json.JSONDecodeError:  # a crash (Python exits 1 on a traceback) or text around the JSON
        doc = None
    out = []
    if run.returncode not in (0, 1) or doc is None:
        errors = (doc or {}).get("input_errors") or []
        message = "; ".join(f"{Path(e['file']).name}:{e.get('line')} {e.get('key_path', '')}: {e['message']}"
                            for e in errors) or f"exit {run.returncode}: {(run.stderr or run.stdout).strip()[-300:]}"
        out.append({"repo": repo, "path": label, "code": "INPUT", "at": "", "severity": "", "message": message})
    # an input error in one file of a release leaves the others linted (exit 2 with their findings): keep them
    return out + [{"repo": repo, "path": label, "code": f["code"], "at": f"{Path(f['file']).name}:{f['key_path']}",
                   "severity": f["severity"], "message": f["message"],
                   **({"member": members[f["file"]]} if f["file"] in (members or {}) else {})}
                  for f in (doc or {}).get("findings") or []]


def _verdict(entries: list[dict], message: str) -> bool | None:
    """The verdict of the entry whose `match` the finding's message contains, else of the one without `match`."""
    matched = [e for e in entries if e.get("match") and e["match"] in message]
    plain = [e for e in entries if not e.get("match")]
    chosen = (matched or plain)[-1:]
    return chosen[0]["verdict"] if chosen else None


def print_difference(before: list[dict], after: list[dict], verdicts: dict) -> None:
    """The findings one package reports and the other does not, each with the verdict its key path has in the labels
    (`-` where none is recorded): what a rule change does to a corpus already triaged."""
    def key(f: dict) -> tuple:
        return f["repo"], f["path"], f["code"], f["at"], f["message"]

    old, new = {key(f): f for f in before}, {key(f): f for f in after}
    print(f"{len(old)} findings before, {len(new)} after")
    for sign, keys, side in (("-", sorted(set(old) - set(new)), old), ("+", sorted(set(new) - set(old)), new)):
        for k in keys:
            labelled = verdicts.get((k[0], k[1], k[2], k[3])) or []
            verdict = labelled[0]["verdict"] if labelled else "-"
            print(f"{sign} [{verdict}] {k[0]} {side[k].get('member', k[1])} {k[2]} {k[3]}: {k[4]}")


def report(findings: list[dict], verdicts: dict, misses: list[dict], as_json: bool) -> None:
    per_rule: dict[str, Counter] = defaultdict(Counter)
    unlabelled = []
    for f in findings:
        if f["code"] == "INPUT":
            print(f"input error (not a finding): {f['repo']} {f['path']}: {f['message']}")
            continue
        verdict = _verdict(verdicts.get((f["repo"], f["path"], f["code"], f["at"])) or [], f["message"])
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


def report_recall(findings: list[dict], labels: dict) -> None:
    """Recall on the certain defects of the triaged sources, precision and errors on clean files per project."""
    # a repository read at several commits has one source per commit: count its defects once
    triaged = list(dict.fromkeys(s["repo"] for s in labels["sources"] if s.get("triaged")))
    if not triaged:
        return
    codes = {c: set(v) for c, v in (labels.get("classes") or {}).items()}
    defects = labels.get("defects") or []
    clean = {(c["repo"], c["path"]) for c in labels.get("clean") or []}
    on_file: dict[tuple, set] = defaultdict(set)
    for f in findings:
        on_file[_member(f)].add(f["code"])
    print("\nrecall on certain defects (triaged sources), precision and errors on clean files, per project:")
    print(f"{'project':<46} {'defects':>7} {'caught':>6} {'recall':>6} {'prec.':>6} {'prec.-hard.':>11} "
          f"{'clean files':>11} {'with error':>10}")
    per_class: dict[str, Counter] = defaultdict(Counter)
    missed = []
    totals = Counter()
    for repo in triaged:
        mine = [d for d in defects if d["repo"] == repo]
        caught = 0
        for d in mine:
            hit = bool(on_file[(repo, d["path"])] & codes.get(d["class"], set()))
            caught += hit
            per_class[d["class"]]["caught" if hit else "missed"] += 1
            if not hit:
                missed.append(d)
        found = [f for f in findings if f["repo"] == repo and f["code"] != "INPUT"]
        c = Counter("true" if f.get("verdict") is True else "false" if f.get("verdict") is False else "unlabelled"
                    for f in found)
        rest = Counter("true" if f.get("verdict") is True else "false" if f.get("verdict") is False
                       else "unlabelled" for f in found if f["code"] not in HARDENING)
        files = [k for k in clean if k[0] == repo]
        dirty = {_member(f) for f in found if f["severity"] == "error" and _member(f) in clean}
        print(f"{repo:<46} {len(mine):>7} {caught:>6} {_ratio(caught, len(mine)):>6} {_precision(c):>6} "
              f"{_precision(rest):>11} {len(files):>11} {len(dirty):>10}")
        totals.update({"defects": len(mine), "caught": caught, "clean": len(files), "dirty": len(dirty)})
        for f in sorted(dirty):
            print(f"    error on a clean file: {f[1]}: " + ", ".join(sorted(
                {g["code"] for g in found if _member(g) == f and g["severity"] == "error"})))
    print(f"{'all triaged':<46} {totals['defects']:>7} {totals['caught']:>6} "
          f"{_ratio(totals['caught'], totals['defects']):>6} {'':>6} {'':>11} {totals['clean']:>11} "
          f"{totals['dirty']:>10}")
    print("\nper defect class (rules that answer for it):")
    for cls in sorted(per_class):
        c = per_class[cls]
        print(f"  {cls:<14} {c['caught']:>3} of {c['caught'] + c['missed']:<3} "
              f"{_ratio(c['caught'], c['caught'] + c['missed']):>6}  ({', '.join(sorted(codes.get(cls, ()))) or '-'})")
    if missed:
        print(f"\n{len(missed)} certain defect(s) missed:")
        for d in missed:
            print(f"  {d['repo']} {d['path']} [{d['class']}] {d['object']}: {d['note']}")


def _member(finding: dict) -> tuple[str, str]:
    """(repo, file) a finding is on: for a `together` release (`a.yaml + b.yaml`), the member it was reported in."""
    if finding.get("member"):
        return finding["repo"], finding["member"]
    members = finding["path"].split(" + ")
    name = finding["at"].split(":", 1)[0]
    return finding["repo"], next((m for m in members if Path(m).name == name), finding["path"])


def _ratio(n: int, d: int) -> str:
    return f"{n / d:.3f}" if d else "-"


def _precision(c: Counter) -> str:
    labelled = c["true"] + c["false"]
    return f"{c['true'] / labelled:.3f}" if labelled else "-"


if __name__ == "__main__":
    sys.exit(main())
