"""global.job.deadline: the end time, each framework's own save trigger as the builder emits it, the grace-period
arithmetic and the RayJob's activeDeadlineSeconds (grpo_stack.deadline).

Where the check stops: verl reading the emitted keys is the loop tier's (tests/loop/test_deadline.py: a real
verl 0.9.1 run saves at the step before the deadline); miles reading `--save-trigger-sentinel` is checked against
its parser's catalogue only (the miles tier cannot train on a CPU, docs/loop.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from grpo_stack import deadline as dl
from grpo_stack.deadline import request
from grpo_stack.job import build, miles_flags
from grpo_stack.render import job_spec, render

from tests.conftest import REPO_ROOT, with_overrides

END = "2027-01-04T11:30:00Z"
END_TS = 1799062200.0  # date -u -d 2027-01-04T11:30:00Z +%s


def spec_of(shipped_values, name: str, overrides: dict) -> dict:
    return job_spec(render(with_overrides(shipped_values[name], overrides), release="grpo", namespace="grpo"))


def plan(**deadline) -> dl.Deadline:
    return dl.from_job({"deadline": deadline}, parameters=8e9)


def test_end_time_is_rfc3339_and_the_earlier_of_end_and_budget():
    assert dl.parse_rfc3339(END) == END_TS
    assert dl.parse_rfc3339("2027-01-04T12:30:00+01:00") == END_TS
    only_end = plan(end=END)
    assert only_end.end_time(started=0.0) == END_TS
    both = plan(end=END, hours=2)
    assert both.end_time(started=END_TS - 3 * 3600) == END_TS - 3600  # the budget ends first
    assert both.end_time(started=END_TS - 3600) == END_TS  # the end time comes first
    for bad in ("2027-01-04 11:30:00", "2027-01-04T11:30:00", "tomorrow"):
        with pytest.raises(dl.DeadlineError, match="global.job.deadline.end: .* RFC 3339"):
            dl.parse_rfc3339(bad)
    with pytest.raises(dl.DeadlineError, match="set end .* hours"):
        dl.from_job({"deadline": {"marginMinutes": 5}}, None)


def test_the_checkpoint_write_is_the_values_or_a_stated_assumption():
    stated = plan(end=END, checkpointWriteMinutes=3)
    assert stated.write_s == 180 and stated.write_source == "values: global.job.deadline.checkpointWriteMinutes"
    assumed = plan(end=END)  # 8e9 parameters x 12 bytes at 1 GB/s
    assert assumed.write_s == pytest.approx(96.0)
    assert assumed.write_source.startswith("assumed: 96 GB (12 bytes per parameter) at 1 GB/s")


def test_verl_is_given_the_same_grace_period_it_measures_the_step_of():
    """verl saves when the time left is under 60 s (its assumed write) + its longest step + esi_redundant_time;
    with the margin plus the write beyond 60 s as esi_redundant_time, that is grace_seconds: the save ends at least
    `margin` before the deadline whenever no step is longer than the longest before it."""
    for write_min, margin_min in ((3, 10), (0.5, 10), (1, 0)):
        d = plan(end=END, checkpointWriteMinutes=write_min, marginMinutes=margin_min)
        step = 420.0
        verl_threshold = dl.VERL_ASSUMED_SAVE_S + step + dl.verl_redundant_time(d)
        assert verl_threshold == pytest.approx(max(dl.grace_seconds(step, d.write_s, d.margin_s),
                                                   dl.VERL_ASSUMED_SAVE_S + step + d.margin_s))
    assert dl.verl_redundant_time(plan(end=END, checkpointWriteMinutes=3, marginMinutes=10)) == 720
    assert dl.verl_redundant_time(plan(end=END, checkpointWriteMinutes=0.5, marginMinutes=10)) == 600


def test_miles_is_asked_one_step_write_and_margin_ahead():
    d = plan(end=END, stepMinutes=20, checkpointWriteMinutes=2, marginMinutes=10)
    assert dl.miles_save_request_at(d, END_TS) == END_TS - (20 + 2 + 10) * 60
    with pytest.raises(dl.DeadlineError, match="stepMinutes: required under framework miles"):
        dl.miles_save_request_at(plan(end=END), END_TS)


def test_ray_job_env_carries_the_end_time_for_verls_legacy_trainer_only():
    assert dl.runtime_env("verl", False, END_TS + 0.7) == {dl.VERL_END_ENV: "1799062200"}  # verl parses int()
    assert dl.runtime_env("verl", True, END_TS) == {}
    assert dl.runtime_env("miles", False, END_TS) == {}


def test_verl_build_emits_esi_redundant_time_for_the_legacy_trainer_only(shipped_values):
    deadline = {"end": END, "checkpointWriteMinutes": 3, "marginMinutes": 10}
    legacy = build(spec_of(shipped_values, "qwen3-8b", {"global.job.deadline": deadline,
                                                        "global.job.verl.useV1Trainer": False})).argv()
    assert "trainer.esi_redundant_time=720" in legacy and "trainer.use_v1=false" in legacy
    v1 = build(spec_of(shipped_values, "qwen3-8b", {"global.job.deadline": deadline})).argv()
    assert not [a for a in v1 if a.startswith("trainer.esi_redundant_time")]
    plain = build(spec_of(shipped_values, "qwen3-8b", {"global.job.verl.useV1Trainer": False})).argv()
    assert not [a for a in plain if a.startswith("trainer.esi_redundant_time")]  # verl's default 0 stays


def test_miles_build_emits_the_sentinel_on_the_checkpoint_storage(shipped_values):
    spec = spec_of(shipped_values, "miles-qwen3-4b", {"global.job.deadline": {"end": END, "stepMinutes": 20}})
    built = build(spec)
    argv = built.argv()
    i = argv.index("--save-trigger-sentinel")
    ckpt = f"{spec['storage']['mountPath']}/{spec['job']['trainer']['checkpointDir']}"
    assert argv[i + 1] == f"{ckpt}/grpo-stack/save-now"
    assert miles_flags.dests("--save-trigger-sentinel")  # a flag of the pinned miles build's parser
    assert "--save" in argv  # miles asserts --save with the sentinel (miles/utils/arguments.py)
    assert "--save-trigger-sentinel" not in build(spec_of(shipped_values, "miles-qwen3-4b", {})).argv()


def test_sentinel_is_created_when_due(tmp_path):
    path = tmp_path / "ckpt" / "grpo-stack" / "save-now"
    lines: list[str] = []
    request.schedule_sentinel(str(path), at=time.time() - 1, now=time.time(), report=lines.append).join(10)
    assert path.exists() and lines == [f"deadline: save requested: created {path} (miles saves at the end of "
                                       "the step in flight)"]


def run_submit(spec: dict, tmp_path, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "job.json"
    path.write_text(json.dumps(spec))
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "tools")}
    return subprocess.run([sys.executable, "-m", "grpo_stack.job.submit", "--spec", str(path), "--dry-run", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_submit_states_the_deadline_and_gives_verl_the_end_time(shipped_values, tmp_path):
    spec = spec_of(shipped_values, "qwen3-8b", {
        "global.job.deadline": {"hours": 2, "checkpointWriteMinutes": 3}, "global.job.verl.useV1Trainer": False,
        "global.storage.mountPath": str(tmp_path)})
    started = END_TS - 3600 * 24 * 365  # a past start: the budget ended long ago
    out = run_submit(spec, tmp_path, "--started-at", str(started))
    assert out.returncode == 2 and "global.job.deadline: the deadline 2026-01-04T13:30:00Z has passed" in out.stderr
    now = time.time()
    out = run_submit(spec, tmp_path, "--started-at", str(now))
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("submit: deadline:"))
    assert "verl saves at the first step that ends with less than its longest step + 60 s + 720 s" in line, line
    env = next(ln for ln in out.stdout.splitlines() if dl.VERL_END_ENV in ln)
    assert abs(int(env.rsplit("=", 1)[1]) - (now + 7200)) <= 1, env


def test_submit_says_verls_v1_trainer_does_not_save_for_it(shipped_values, tmp_path):
    """The in-pod gate runs GRPO907: the v1 trainer with a deadline is refused like grpo-lint refuses it."""
    spec = spec_of(shipped_values, "qwen3-8b", {"global.job.deadline": {"hours": 2},
                                                "global.storage.mountPath": str(tmp_path)})
    out = run_submit(spec, tmp_path)
    assert out.returncode == 1 and "GRPO907" in out.stderr and "v1 trainer" in out.stderr, out.stderr
    assert dl.VERL_END_ENV not in out.stdout
