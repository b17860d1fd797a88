"""Questions the loop harness asks the Ray head, in the loop venv (Ray's client must match the head's version).

    python ray_query.py DASHBOARD_URL ready          exit 0 once the head's job agent accepts jobs
    python ray_query.py DASHBOARD_URL pids JOB_ID    JSON list: the job's driver pid and its actors' pids
    python ray_query.py DASHBOARD_URL jobs           JSON list of every submission id the head knows
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    from ray.job_submission import JobSubmissionClient

    address, what = argv[0], argv[1]
    client = JobSubmissionClient(address)
    if what == "ready":
        # The job agent registers after the dashboard answers: a job that runs `true` proves it is there.
        job = client.submit_job(entrypoint="true")
        for _ in range(60):
            if str(client.get_job_status(job).value) in ("SUCCEEDED", "FAILED", "STOPPED"):
                return 0
            import time

            time.sleep(1)
        return 1
    if what == "jobs":
        print(json.dumps(sorted(j.submission_id for j in client.list_jobs() if j.submission_id)))
        return 0
    if what == "pids":
        from ray.util.state import list_actors

        info = client.get_job_info(argv[2])
        pids = []
        driver = getattr(info, "driver_info", None)
        if driver is not None and driver.pid:
            pids.append(int(driver.pid))
        if info.job_id:
            for actor in list_actors(address=address, filters=[("job_id", "=", info.job_id)], limit=1000):
                if actor.state == "ALIVE" and actor.pid:
                    pids.append(int(actor.pid))
        print(json.dumps(sorted(set(pids))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
