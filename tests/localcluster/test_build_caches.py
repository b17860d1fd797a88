"""`grpo-cluster build` keeps the binaries, not Go's caches: a build compiles with a module and build cache of its own
(deleted with it, ~9 GB for the control plane), unless the environment names its own GOCACHE / GOMODCACHE.

Where the check stops: the Go toolchain is not run here (a cold build takes minutes); that a build leaves only its
binaries behind was checked by building the promtool toolset into an empty cache root (204 s, 59 MB left)."""

from __future__ import annotations

from grpo_stack.localcluster import binaries


def test_a_build_compiles_with_caches_of_its_own(tmp_path, monkeypatch):
    monkeypatch.delenv("GOCACHE", raising=False)
    monkeypatch.delenv("GOMODCACHE", raising=False)
    env = binaries.go_env(tmp_path)
    assert env["GOCACHE"].startswith(str(tmp_path)) and env["GOMODCACHE"].startswith(str(tmp_path))
    assert "-modcacherw" in env["GOFLAGS"].split()  # or the scratch module cache could not be deleted


def test_caches_the_user_names_are_used_as_given(tmp_path, monkeypatch):
    monkeypatch.setenv("GOCACHE", "/srv/go/build")
    monkeypatch.setenv("GOMODCACHE", "/srv/go/mod")
    env = binaries.go_env(tmp_path)
    assert (env["GOCACHE"], env["GOMODCACHE"]) == ("/srv/go/build", "/srv/go/mod")
