"""A run's wall-clock deadline: when it falls, what each framework is told so that it saves before it, and when
the cluster may be stopped after that save (a RayJob's activeDeadlineSeconds)."""

from .plan import (
    MILES_SENTINEL,
    RAY_STOP_WAIT_S,
    VERL_ASSUMED_SAVE_S,
    VERL_END_ENV,
    Deadline,
    DeadlineError,
    active_deadline_seconds,
    from_job,
    grace_seconds,
    honoured_by,
    job_active_deadline_seconds,
    miles_save_request_at,
    parse_rfc3339,
    runtime_env,
    verl_redundant_time,
)

__all__ = ["MILES_SENTINEL", "RAY_STOP_WAIT_S", "VERL_ASSUMED_SAVE_S", "VERL_END_ENV", "Deadline", "DeadlineError",
           "active_deadline_seconds", "from_job", "grace_seconds", "honoured_by", "job_active_deadline_seconds",
           "miles_save_request_at", "parse_rfc3339", "runtime_env", "verl_redundant_time"]
