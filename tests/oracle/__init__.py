"""Differential-test oracle tier: verl's and megatron-core's own validators run in a separate venv."""
