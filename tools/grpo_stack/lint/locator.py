"""Where a finding is: a values key path or an object path mapped to (file, line, column)."""

from __future__ import annotations

from dataclasses import replace

from ..render import RenderedObject
from ..values import ValuesFile, locate
from .context import LintContext
from .finding import Finding, Hit, Severity
from .steps import positions


class Locator:
    """Maps a values key path or an object path to (file, line, column)."""

    def __init__(self, files: list[ValuesFile], manifest_docs: dict[str, list] | None = None):
        self.files = files
        self.manifest_docs = manifest_docs or {}
        self._rendered_docs: dict[str, list] = {}

    def locate(self, key_path: str, ctx: LintContext) -> tuple[str, int, int]:
        if not self.files:  # a manifest-mode hit that names no object: the top of the manifest file
            return ctx.file, 1, 1
        return locate(self.files, key_path)

    def locate_object(self, obj: RenderedObject, path: str, ctx: LintContext) -> tuple[str, int, int]:
        docs = self.manifest_docs.get(obj.template)
        shown = obj.template
        if docs is None and ctx.rendered is not None:
            if obj.template not in self._rendered_docs:
                self._rendered_docs[obj.template] = positions(ctx.rendered.manifests.get(obj.template, ""))
            docs = self._rendered_docs[obj.template]
            # grpo-stack/charts/vllm/templates/x.yaml -> charts/grpo-stack/charts/vllm/templates/x.yaml
            shown = f"charts/{obj.template}"
        from ..positions import PosMap, PosSeq

        line, col = 1, 1
        node = docs[obj.index] if docs and obj.index < len(docs) else None
        parts, i = [p for p in path.split(".") if p], 0
        while i < len(parts):
            if isinstance(node, PosMap):
                # a key may hold dots itself (`nvidia.com/gpu`, `fs.oss.accessKeySecret`): the longest that is one
                key = next((k for j in range(len(parts), i, -1) if (k := ".".join(parts[i:j])) in node), None)
                if key is None:
                    break
                line, col = (x + 1 for x in node.lc.key(key))
                node, i = node[key], i + key.count(".") + 1
            elif isinstance(node, PosSeq) and parts[i].isdigit() and int(parts[i]) < len(node):
                line, col = (x + 1 for x in node.lc.item(int(parts[i])))
                node, i = node[int(parts[i])], i + 1
            else:
                break
        return shown, line, col

    def finding(self, code: str, name: str, severity: Severity, hit: Hit, ctx: LintContext) -> Finding:
        from .rules import finding

        if hit.obj is not None:
            file, line, col = self.locate_object(hit.obj, hit.key_path, ctx)
        else:
            file, line, col = self.locate(hit.key_path, ctx)
        return replace(finding(code, severity, hit, file, line, col), name=name)
