"""Fixtures shared with the job tests: every shipped values file's rendered job spec."""

from tests.job.conftest import base_specs  # noqa: F401
