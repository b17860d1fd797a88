"""Attempt records on the run's storage: whole lines under concurrent writers, a torn last line skipped."""

from __future__ import annotations

import multiprocessing

from grpo_stack.supervise import records


def _write_many(root: str, writer: int, count: int) -> None:
    for i in range(count):
        line = records.Attempt(i + 1, float(writer), None, 0, None, None, f"writer {writer} " + "x" * 300)
        records.append(root, line)


def test_concurrent_writers_interleave_whole_records(tmp_path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_write_many, args=(str(tmp_path), w, 200)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    got = records.read(tmp_path)
    assert len(got) == 800
    assert sorted({a.started for a in got}) == [0.0, 1.0, 2.0, 3.0]
    assert len(records.path(tmp_path).read_bytes().splitlines()) == 800


def test_a_torn_last_line_is_skipped_and_the_next_append_still_reads(tmp_path):
    records.append(tmp_path, records.Attempt(1, 0.0, 1.0, 0, 2, 2, "driver lost at step 2 of 4"))
    with records.path(tmp_path).open("ab") as fh:
        fh.write(b'{"attempt": 2, "started": 5.0, "end')  # a writer killed mid-line
    records.append(tmp_path, records.Attempt(3, 9.0, 10.0, 2, 4, 4, "finished: step 4 of 4"))
    assert [a.attempt for a in records.read(tmp_path)] == [1, 3]


def test_no_file_is_no_attempt_and_foreign_keys_are_ignored(tmp_path):
    assert records.read(tmp_path) == []
    records.path(tmp_path).parent.mkdir(parents=True)
    records.path(tmp_path).write_text('{"attempt": 1, "started": 0, "ended": null, "start_step": 0, "last_step": null,'
                                      ' "checkpoint": null, "end": "x", "added_later": true}\n[1, 2]\n"text"\n')
    assert [a.end for a in records.read(tmp_path)] == ["x"]
