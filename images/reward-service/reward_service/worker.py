"""The scoring worker process and the framing both ends of its socket use.

A worker reads (job id, golds, response, fault) frames, scores each on its main thread (where math-verify's SIGALRM
timeouts work) and writes (job id, kind, payload) frames back. It exits when the socket closes, so a worker never
outlives the server that owns it.
"""

from __future__ import annotations

import os
import pickle
import socket
import struct
import time

HEADER = struct.Struct("!I")
# A frame larger than this is a bug or a corrupted stream, never a real task (responses are capped far below it).
MAX_FRAME_BYTES = 256 * 1024 * 1024

# The worker's process name (`ps`, `top`, /proc/<pid>/comm): forked from the forkserver, it would otherwise carry
# the forkserver's name and command line, and could not be told apart from it once adopted after its death.
PROCESS_NAME = b"reward-worker"

READY = "ready"
RESULT = "result"
RAISED = "raised"


def encode(message: object) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


def _recv_exactly(sock: socket.socket, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def _recv(sock: socket.socket) -> object | None:
    header = _recv_exactly(sock, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    if size > MAX_FRAME_BYTES:
        raise ValueError(f"frame of {size} bytes")
    body = _recv_exactly(sock, size)
    return None if body is None else pickle.loads(body)


def main(sock: socket.socket, parse_timeout_s: int, memory_mb: int, break_start_file: str | None = None,
         slow_start_file: str | None = None) -> None:
    """Process target: initialise, say ready, then serve until the server closes the socket."""
    from reward_service import scoring  # preloaded in the forkserver, so this costs nothing

    try:
        with open("/proc/self/comm", "wb") as comm:
            comm.write(PROCESS_NAME)
    except OSError:
        pass  # not Linux: only the name is lost

    if break_start_file and os.path.exists(break_start_file):
        os._exit(17)  # test-only: a worker that can never start (REWARD_TEST_BREAK_START_FILE)
    if slow_start_file:
        try:  # test-only: every start as slow as on a starved node (REWARD_TEST_SLOW_START_FILE holds seconds)
            with open(slow_start_file) as seconds:
                time.sleep(float(seconds.read()))
        except (OSError, ValueError):
            pass

    scoring.init_worker(parse_timeout_s, memory_mb)
    sock.sendall(encode((READY, os.getpid())))
    while True:
        message = _recv(sock)
        if message is None:
            return
        job_id, golds, response, fault = message
        try:
            reply = (job_id, RESULT, scoring.score(golds, response, fault))
        except Exception as error:  # a scorer bug: the server turns it into a 500, never a reward
            reply = (job_id, RAISED, f"{type(error).__name__}: {error}"[:2000])
        sock.sendall(encode(reply))
