"""A submitted run's day 2 (grpo-run): find a release's Ray cluster, show the run's status, logs, stop it, list runs."""


class Refused(Exception):
    """Bad input, a release that is not there, a cluster that cannot be reached: said in one line, exit 2."""
