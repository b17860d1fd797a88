"""Megatron-LM's 140 measured H100 peaks as a regression report (tests/memory/golden.py; not a gate: most rows
lack the vocabulary, KV heads and world size). Print it with `python -m tests.memory.golden`."""

from __future__ import annotations

from .golden import report, table


def test_every_row_is_modelled_or_says_why():
    found = report()
    assert len(found) == 140
    assert all(r.predicted_gib is not None or r.why for r in found)
    assert "modelled" in table(found)


def test_rows_stating_every_input_of_a_plain_pretraining_run_stay_within_25_percent():
    """The GPT-7B memory tests state vocabulary, layout, batch and optimizer; the GRPO tests add an inference
    buffer and the multimodal ones a vision tower, which these rows do not state."""
    plain = [r for r in report() if r.complete and r.test.startswith("gpt3_7b")]
    assert len(plain) == 2
    assert all(abs(r.error) <= 0.25 for r in plain), [(r.test, r.error) for r in plain]
