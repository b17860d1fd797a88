"""A run's wall-clock deadline: when it falls, what each framework is told so that it saves before it (the
RayJob's activeDeadlineSeconds, which stops the cluster after that save, is the chart's)."""

from .plan import (
    MILES_SENTINEL,
    RAY_STOP_WAIT_S,
    VERL_ASSUMED_SAVE_S,
    VERL_END_ENV,
    Deadline,
    DeadlineError,
    from_job,
    grace_seconds,
    honoured_by,
    miles_save_request_at,
    parse_rfc3339,
    runtime_env,
    verl_redundant_time,
)

__all__ = ["MILES_SENTINEL", "RAY_STOP_WAIT_S", "VERL_ASSUMED_SAVE_S", "VERL_END_ENV", "Deadline", "DeadlineError",
           "from_job", "grace_seconds", "honoured_by", "miles_save_request_at", "parse_rfc3339", "runtime_env",
           "verl_redundant_time"]
