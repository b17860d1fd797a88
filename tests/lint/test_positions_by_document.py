"""Locating a finding composes the document that holds it, not the whole stream, and finds the same line and column
as reading the whole stream does.

grpo-lint reads a manifest file once for its values (safeyaml) and, for a file with a finding, again for
positions. The first reading notes where each document lies; the second composes only the documents whose findings
it locates. These tests compare every key's and item's position, document by document, against the whole-stream
reading, on streams built to break a cut: anchors and merge keys, a flow document on its `---` line, an indented
root, non-ASCII text, CRLF line ends, a `%TAG` directive (the cut cannot compose alone: the whole stream is read).
"""

from __future__ import annotations

import pytest
from grpo_stack import positions
from grpo_stack.lint import release
from grpo_stack.positions import PosMap, PosSeq
from grpo_stack.safeyaml import load_documents

STREAMS = {
    "anchors and merges": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"
        "---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: &meta\n"
        "    name: b\n    labels: {app: b}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    <<: *meta\n"
        "    name: c\n  data:\n    k: |\n      line\n      ---\n      still the block\n"),
    "flow document on its marker line": (
        "--- {apiVersion: v1, kind: Namespace, metadata: {name: ns}}\n"
        "--- \napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: s}\n"),
    "indented root and comments": (
        "# leading comment\n---\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n"
        "---\n# a comment before the object\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n"),
    "non-ascii text": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: é}\ndata: {greeting: 'grüße €'}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\ndata:\n  list:\n  - ü\n  - [1, 2]\n"),
    "crlf line ends": "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: g}\r\n---\r\napiVersion: v1\r\n"
                      "kind: ConfigMap\r\nmetadata:\r\n  name: h\r\n",
    "empty documents between": ("---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: i}\n---\n# nothing\n"
                                "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: j}\n"),
    "a %TAG directive": ("%TAG !k! tag:yaml.org,2002:\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                         "  name: !k!str k\n"),
}


def every_position(node, path=""):
    """(path, (line, column)) of every key and item, recursively."""
    if isinstance(node, PosMap):
        for k, v in node.items():
            yield f"{path}.{k}", node.lc.key(k)
            yield from every_position(v, f"{path}.{k}")
    elif isinstance(node, PosSeq):
        for i, v in enumerate(node):
            yield f"{path}.{i}", node.lc.item(i)
            yield from every_position(v, f"{path}.{i}")


@pytest.mark.parametrize("name", STREAMS)
def test_each_document_composed_alone_is_located_as_the_whole_stream_locates_it(name):
    text = STREAMS[name]
    spans: list = []
    docs = load_documents(text, "stream.yaml", helm=False, spans=spans)
    assert len(spans) == len(docs)
    whole = positions.load(text)
    alone = positions.documents_at(text, spans)
    assert len(alone) == len(whole) == len(docs)
    for i in range(len(docs)):
        assert list(every_position(alone[i])) == list(every_position(whole[i])), f"document {i}"
        assert list(every_position(alone[i])), f"document {i} has keys to locate"


def test_locating_one_finding_reads_its_own_document_not_the_stream(tmp_path, monkeypatch):
    """Of a stream of 150 objects with one finding, the whole stream is never read for positions (a cut that
    composed to more than one document would fall back to it)."""

    def whole_stream(text):
        raise AssertionError(f"the whole stream ({len(text)} characters) was read for positions")

    monkeypatch.setattr(positions, "load", whole_stream)
    accounts = [f"apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa{i}\n  namespace: apps\n"
                f"automountServiceAccountToken: false\n" for i in range(150)]
    accounts[90] = accounts[90].replace(": false", ": 'no'")
    path = tmp_path / "accounts.yaml"
    path.write_text("---\n".join(accounts))
    result = release.lint_release([release.read_input(str(path))])
    assert [(f.code, f.line, f.column) for f in result.findings] == [("GRPO002", 90 * 7 + 6, 1)]
