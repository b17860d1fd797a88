"""Bad input for grpo-data / grpo-models: the CLI prints the one-line message and exits 2."""

from __future__ import annotations


class DataInputError(Exception):
    """Unusable input (unknown dataset, unreadable or unwritable path, empty result, missing revision)."""
