"""Logs on the run's storage (grpo_stack.supervise.logstore): written as streamed, read back by job id, listed in
the order they were written; a storage that refuses the copy does not stop the stream."""

from __future__ import annotations

import pytest
from grpo_stack.supervise import logstore


def test_a_streamed_log_reads_back_whole(tmp_path):
    writer = logstore.LogWriter(tmp_path, "grpo-verl-1")
    for chunk in ("submit: banner\n", "(TaskRunner pid=1) step:1 - a:1\n", "ünïcode\n"):
        writer.write(chunk)
    writer.close()
    assert logstore.log_path(tmp_path, "grpo-verl-1") == tmp_path / "grpo-stack" / "logs" / "grpo-verl-1" / "driver.log"
    assert logstore.read_log(tmp_path, "grpo-verl-1") == "submit: banner\n(TaskRunner pid=1) step:1 - a:1\nünïcode\n"


def test_job_ids_are_listed_oldest_first_and_a_missing_log_is_an_error(tmp_path):
    assert logstore.job_ids(tmp_path) == []
    for job in ("b-job", "a-job"):
        w = logstore.LogWriter(tmp_path, job)
        w.write("x\n")
        w.close()
    logstore.steps_path(tmp_path, "c-job").parent.mkdir(parents=True)  # a step file's directory, no driver log
    assert logstore.job_ids(tmp_path) == ["b-job", "a-job"]
    with pytest.raises(FileNotFoundError):
        logstore.read_log(tmp_path, "c-job")


def test_a_job_id_cannot_leave_the_logs_directory(tmp_path):
    for bad in ("", "..", "a/b"):
        with pytest.raises(ValueError):
            logstore.log_path(tmp_path, bad)


def test_an_unwritable_store_is_reported_once_and_the_stream_goes_on(tmp_path):
    (tmp_path / "grpo-stack").write_text("a file where the directory should be")
    lines: list[str] = []
    writer = logstore.LogWriter(tmp_path, "job", report=lines.append)
    writer.write("x\n")
    writer.close()
    assert len(lines) == 1 and "cannot write" in lines[0]
