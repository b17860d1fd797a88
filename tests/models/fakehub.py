"""A loopback HTTP server answering the Hugging Face Hub endpoints huggingface_hub uses to stage a model:
model info with file metadata, the recursive tree, and HEAD/GET on resolve URLs. It serves a local directory as
one commit, records every request's Authorization header, and can publish a wrong sha256 for one file."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse


class FakeHub:
    def __init__(self, root: Path, repo: str, commit: str, branches: dict[str, str] | None = None,
                 repo_type: str = "model"):
        self.root, self.repo, self.commit = root, repo, commit
        self.api = "datasets" if repo_type == "dataset" else "models"
        self.prefix = "/datasets" if repo_type == "dataset" else ""
        self.branches = {"main": commit, **(branches or {})}
        self.authorizations: list[str | None] = []
        self.lie_about: dict[str, str] = {}  # path -> sha256 to publish instead of the real one
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_HEAD(self):
                hub._serve(self, body=False)

            def do_GET(self):
                hub._serve(self, body=True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def _files(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*") if p.is_file())

    def _entry(self, p: Path) -> dict:
        data = p.read_bytes()
        rel = p.relative_to(self.root).as_posix()
        sha = self.lie_about.get(rel, hashlib.sha256(data).hexdigest())
        return {"type": "file", "path": rel, "size": len(data), "oid": hashlib.sha1(data).hexdigest(),
                "lfs": {"oid": sha, "size": len(data), "pointerSize": 134}
                if p.suffix in (".safetensors", ".parquet") else None}

    def _json(self, h, obj, status=200, body=True):
        payload = json.dumps(obj).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if body:
            h.wfile.write(payload)

    def _error(self, h, status, code, body):
        h.send_response(status)
        h.send_header("X-Error-Code", code)
        h.send_header("Content-Type", "application/json")
        payload = json.dumps({"error": code}).encode()
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if body:
            h.wfile.write(payload)

    def _serve(self, h, body: bool):
        self.authorizations.append(h.headers.get("Authorization"))
        path = unquote(urlparse(h.path).path)
        info = f"/api/{self.api}/{self.repo}/revision/"
        tree = f"/api/{self.api}/{self.repo}/tree/"
        resolve = f"{self.prefix}/{self.repo}/resolve/"
        if path.startswith(info):
            rev = path[len(info):]
            if rev not in self.branches and rev != self.commit:
                return self._error(h, 404, "RevisionNotFound", body)
            siblings = []
            for p in self._files():
                e = self._entry(p)
                siblings.append({"rfilename": e["path"], "size": e["size"], "blobId": e["oid"],
                                 "lfs": {"sha256": e["lfs"]["oid"], "size": e["size"], "pointerSize": 134}
                                 if e["lfs"] else None})
            return self._json(h, {"id": self.repo, "modelId": self.repo, "sha": self.branches.get(rev, rev),
                                  "private": False, "siblings": siblings}, body=body)
        if path.startswith(tree):
            return self._json(h, [self._entry(p) for p in self._files()], body=body)
        if path.startswith(resolve):
            rev, _, rel = path[len(resolve):].partition("/")
            target = self.root / rel
            if rev != self.commit or not target.is_file():
                return self._error(h, 404, "EntryNotFound", body)
            data = target.read_bytes()
            h.send_response(200)
            h.send_header("X-Repo-Commit", self.commit)
            h.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            h.send_header("Content-Length", str(len(data)))
            h.send_header("Content-Type", "application/octet-stream")
            h.end_headers()
            if body:
                h.wfile.write(data)
            return None
        return self._error(h, 404, "RepoNotFound", body)
