"""Instance type typos: every one-edit typo of every catalogued name (EC2 and `ml.` HyperPod spellings) is
answered with the name it came from. A typo one edit from two catalogued names (`g7.4xlarge`) names both."""

import string

from grpo_stack.catalog.instances import KNOWN_NAMES, edit_distance, suggestions

ALPHABET = sorted(set("".join(KNOWN_NAMES)) | set(string.ascii_lowercase[:3]))


def one_edit_typos(name: str):
    """Deletions, adjacent transpositions, substitutions and insertions (a few characters per position)."""
    for i in range(len(name)):
        yield name[:i] + name[i + 1:]
        if i + 1 < len(name):
            yield name[:i] + name[i + 1] + name[i] + name[i + 2:]
    for i in range(len(name) + 1):
        for c in (ALPHABET[(i * 7) % len(ALPHABET)], ALPHABET[(i * 11 + 3) % len(ALPHABET)]):
            if i < len(name) and c != name[i]:
                yield name[:i] + c + name[i + 1:]
            yield name[:i] + c + name[i:]


def test_every_one_edit_typo_suggests_its_origin():
    known = set(KNOWN_NAMES)
    checked, wrong = 0, []
    for name in KNOWN_NAMES:
        for typo in set(one_edit_typos(name)) - known:
            found = suggestions(typo)
            checked += 1
            if name not in found or any(edit_distance(typo, f) > 1 and not f.startswith(typo) for f in found):
                wrong.append((typo, name, found))
    assert checked > 5000
    assert not wrong, wrong[:20]


def test_examples_a_user_writes():
    assert suggestions("p5.48xl") == ["p5.48xlarge"]
    assert suggestions("p5en.48xlarg") == ["p5en.48xlarge"]
    assert suggestions("ml.p5en.48xlarg") == ["ml.p5en.48xlarge"]
    assert "c6i.xlarge" in suggestions("c7i.xlarge")
    assert suggestions("n1-standard-8") == [] and suggestions("Standard_ND96asr_v4") == []
