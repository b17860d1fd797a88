"""GRPO701's severity follows its certainty: a bare major/minor tag, or one with no version, moves for certain on
Docker's official images (documented to follow every patch release). Elsewhere a bare version is a project's
release tag (not reported) and a tag with no version only probably moves (a warning)."""

from __future__ import annotations

import textwrap

from tests.lint.fixtures import severities


def _severities(tmp_path, image: str) -> list[str]:
    return severities(tmp_path, textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: p}}
        spec:
          containers:
            - {{name: c, image: "{image}"}}
        """), "GRPO701")


def test_official_images_moving_version_is_an_error(tmp_path):
    assert _severities(tmp_path, "python:3.11-slim") == ["error"]
    assert _severities(tmp_path, "docker.io/library/nginx:1.27") == ["error"]


def test_a_projects_version_like_tag_is_its_release_tag(tmp_path):
    """Reviewers of five labelled corpora read `1.0` or `v6` on a project's image as its release (one build), and
    only one of them counted such a tag as floating: it is not reported."""
    assert _severities(tmp_path, "kubeflow/tf-dist-mnist-test:1.0") == []
    assert _severities(tmp_path, "docker.io/koordinatorsh/nginx:v1.18-koord-example") == []


def test_moving_words_stay_errors_anywhere(tmp_path):
    assert _severities(tmp_path, "quay.io/org/app:latest") == ["error"]
    assert _severities(tmp_path, "org/app:nightly") == ["error"]


def test_a_placeholder_tag_is_not_judged(tmp_path):
    assert _severities(tmp_path, "<account>.dkr.ecr.<region>.amazonaws.com/app:<tag>") == []


def test_a_tag_without_a_version_follows_the_same_certainty(tmp_path):
    """No digit in the tag: an official image's variant name (`busybox:musl`) moves with every release for certain;
    a project's own (`team/trainer:mpi`, built by its walkthrough) only probably."""
    assert _severities(tmp_path, "busybox:musl") == ["error"]
    assert _severities(tmp_path, "registry.example.com/team/trainer:mpi") == ["warning"]


def test_an_image_file_on_the_node_is_not_judged(tmp_path):
    assert _severities(tmp_path, "/scratch/images/trainer_v2.sif") == []


def test_one_segment_names_are_official_only_when_docker_publishes_them(tmp_path):
    """Docker's official images are a listed set (catalog/docker_official_images.json): `busybox:1.28` follows
    every patch release (an error). A one-segment name Docker publishes nothing under is a build loaded on the node:
    no registry can move it, so its tag is not judged; only a pull (Always, or the default for `latest` and no tag)
    goes wrong, and always does."""
    assert _severities(tmp_path, "busybox:1.28") == ["error"]
    assert _severities(tmp_path, "docker.io/library/python:3.11") == ["error"]
    assert _severities(tmp_path, "k8s-llm-job-backend:local") == []
    assert _severities(tmp_path, "docker.io/library/vllm-gemma4:local") == []
    assert _severities(tmp_path, "my-backend:latest") == ["error"]
    assert _severities(tmp_path, "my-backend") == ["error"]
