"""The project's in-pod submit (`python3 -m grpo_stack.job.submit`), with the loop's CPU set applied to the
command its gate builds (tests/loop/cpu_set.py) and LOOP_EVENTS (JSON, when set) added to the job's runtime env.
Everything else, the gate, the banner, the resume gate, the Ray job submission and --follow, is the submit's own.

    python tests/loop/submit_cpu.py [submit's arguments]   (PYTHONPATH: tools/ and tests/loop)
"""

from __future__ import annotations

import os
import sys

import cpu_set
from grpo_stack.job import submit

_gate = submit.gate


def gate(path, data, skip):
    built = _gate(path, data, skip)
    if built is None:
        return None
    events = os.environ.get("LOOP_EVENTS")
    return cpu_set.extend(built, data["storage"]["mountPath"], {"LOOP_EVENTS": events} if events else None)


submit.gate = gate

if __name__ == "__main__":
    sys.exit(submit.main(sys.argv[1:]))
