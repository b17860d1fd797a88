"""The user docs as a new reader meets them: docs/README.md indexes every page in docs/, and a page that speaks
of "the predecessor" says what it was where it first does (docs/rules.md is generated from the rule docs and is
not covered here)."""

from __future__ import annotations

import re

from grpo_stack.paths import REPO_ROOT

DOCS = REPO_ROOT / "docs"


def test_index_names_every_page():
    index = (DOCS / "README.md").read_text()
    missing = [p.name for p in DOCS.glob("*.md") if p.name != "README.md" and f"`{p.name}`" not in index]
    assert not missing, f"docs/README.md does not index {missing}"


def test_predecessor_is_said_what_it_was_at_first_mention():
    vague = []
    for page in sorted(DOCS.glob("*.md")):
        if page.name == "rules.md":
            continue
        text = " ".join(page.read_text().split())
        first = re.search(r"predecessor", text, re.IGNORECASE)
        if first and "recipe" not in text[first.start():first.start() + 120]:
            vague.append(page.name)
    assert not vague, f"first mention of the predecessor does not say what it was: {vague}"
