"""The reader of miles' collector page on inputs its real pages never hold (the real pages are read in the miles
tier, tests/miles/test_miles_step_metrics.py): a page before any rollout, non-finite and malformed samples, a
collector that does not answer, a step that goes back, and a page read while the collector was setting a rollout's
gauges."""

from __future__ import annotations

from grpo_stack.stepmetrics.miles_steps import CollectorSteps, gauges, record

PAGE = """# HELP miles_metric_rollout_step rollout/step
# TYPE miles_metric_rollout_step gauge
miles_metric_rollout_step{run_name="r"} 4.0
miles_metric_perf_step_time{run_name="r"} 12.5
miles_metric_perf_train_time{run_name="r"} 9.0
miles_metric_perf_train_wait_time{run_name="r"} 3.5
miles_metric_perf_log_probs_tflops{run_name="r"} NaN
miles_metric_perf_update_weights_time{run_name="r"} +Inf
miles_metric_bad{run_name="r"} not-a-number
python_gc_objects_collected_total{generation="0"} 12.0
"""


def test_a_page_is_read_into_the_step_and_its_finite_phases():
    found = record(gauges(PAGE))
    assert found.step == 4 and found.seconds == 12.5
    assert found.phases == {"train": 9.0, "train_wait": 3.5}  # the infinite one is not a time
    assert found.reward_mean is None and found.response_length_mean is None


def test_nothing_before_miles_logged_a_rollout():
    assert record(gauges("miles_metric_train_loss{run_name=\"r\"} 0.1\n")) is None
    assert record(gauges("")) is None


def test_a_collector_that_does_not_answer_or_goes_back_gives_no_step():
    five = PAGE.replace("} 4.0", "} 5.0")
    pages = iter([None, PAGE, PAGE, PAGE.replace("} 4.0", "} 3.0"), five, five])  # a moved step is read twice
    urls = iter([None, "u", "u", "u", "u"])
    source = CollectorSteps(lambda: next(urls), read=lambda _url: next(pages))
    assert source.new() == []  # no driver yet: nothing is read
    steps = [r.step for _ in range(4) for r in source.new()]
    assert steps == [4, 5]


def test_a_page_that_mixes_two_rollouts_is_not_taken_as_the_new_step():
    # rollout 5's step gauge already set, its timings still rollout 4's: the next read shows rollout 5 whole
    torn = PAGE.replace("} 4.0", "} 5.0")
    whole = torn.replace("} 12.5", "} 14.0").replace("} 9.0", "} 10.5")
    pages = iter([torn, whole, whole, whole])
    source = CollectorSteps(lambda: "u", read=lambda _url: next(pages))
    assert source.new() == []  # the two reads disagree: not taken yet
    (taken,) = source.new()
    assert (taken.step, taken.seconds, taken.phases["train"]) == (5, 14.0, 10.5)
