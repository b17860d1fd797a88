"""GRPO857 on TensorBoard behind a Service: TensorBoard 2 listens on localhost unless told otherwise, 1.x on every
interface. An image of TensorFlow 2 makes the refused connection a plain finding; an image that does not say which
TensorBoard it runs (a project's own build) gets the same warning with that assumption named."""

from __future__ import annotations

import textwrap

from grpo_stack.lint.release import lint_manifests

DEPLOYMENT = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: board}
    spec:
      selector: {matchLabels: {app: board}}
      template:
        metadata: {labels: {app: board}}
        spec:
          containers:
            - name: board
              image: IMAGE
              command: [/usr/local/bin/tensorboard]
              args: [--logdir, /runs]
              ports: [{containerPort: 6006}]
    ---
    apiVersion: v1
    kind: Service
    metadata: {name: board}
    spec:
      selector: {app: board}
      ports: [{port: 80, targetPort: 6006}]
    """)


def _messages(tmp_path, image: str) -> list[str]:
    path = tmp_path / "board.yaml"
    path.write_text(DEPLOYMENT.replace("IMAGE", image))
    return [f.message for f in lint_manifests(str(path)).findings if f.code == "GRPO857"]


def test_a_tensorflow_2_image_is_reported_without_an_assumption(tmp_path):
    [message] = _messages(tmp_path, "tensorflow/tensorflow:2.19.0")
    assert "localhost only" in message and "assumed" not in message


def test_an_image_that_names_no_tensorboard_version_names_the_assumption(tmp_path):
    [message] = _messages(tmp_path, "registry.example.com/team/board:3.1.0")
    assert "assumed: TensorBoard 2.0 or later" in message


def test_a_tensorflow_1_image_is_left_alone(tmp_path):
    assert _messages(tmp_path, "tensorflow/tensorflow:1.15.5") == []
