"""Rule texts that name a command name one the pinned tools install.

GRPO871's fix once recommended `huggingface-cli`, which the pinned huggingface_hub does not install (and which,
in 1.x, downloaded nothing). Checked against the installed distribution's own console scripts: this venv pins
huggingface_hub to the fsx-utils image's version (tests/images checks the image's requirements resolve).
"""

from __future__ import annotations

import re
from importlib.metadata import distribution

from grpo_stack.lint.rules import RULES, doc_section, fix_text

from tests.conftest import REPO_ROOT

HUB_CLIS = ("hf", "huggingface-cli")


def _image_pin(name: str) -> str:
    text = (REPO_ROOT / "images" / "fsx-utils" / "requirements.txt").read_text()
    return re.search(rf"^{re.escape(name)}==(\S+)", text, re.MULTILINE | re.IGNORECASE).group(1)


def test_the_venv_has_the_images_huggingface_hub():
    assert distribution("huggingface_hub").version == _image_pin("huggingface_hub")


def test_hub_commands_the_rules_recommend_are_installed():
    """What a rule tells the user to run (its example's `Use instead` part and its fix) uses only Hub CLIs the
    pinned huggingface_hub installs."""
    scripts = {e.name for e in distribution("huggingface_hub").entry_points if e.group == "console_scripts"}
    assert "hf" in scripts and "huggingface-cli" not in scripts  # what the texts are checked against
    for code, rule in RULES.items():
        recommended = {"Use instead": doc_section(rule, "Example").partition("Use instead")[2],
                       "Fix": fix_text(rule)}
        for part, text in recommended.items():
            for cli in HUB_CLIS:
                for m in re.finditer(rf"(?<![\w-]){re.escape(cli)} (download|upload|login)\b", text):
                    assert cli in scripts, f"{code} {part}: `{m.group(0)}` names {cli}, which huggingface_hub " \
                        f"{distribution('huggingface_hub').version} does not install"
