"""What a lint run is asked (Options) and what it gives back (LintResult), for values and manifest mode alike."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..errors import InputError
from ..release import DEFAULT_NAMESPACE, DEFAULT_RELEASE
from .context import LintContext
from .finding import Finding
from .suppress import LintConfig


@dataclass
class LintResult:
    findings: list[Finding] = field(default_factory=list)
    input_errors: list[InputError] = field(default_factory=list)
    unchecked_rayclusters: int = 0  # RayCluster objects not validated against the KubeRay CRD (none given)
    # (apiVersion, kind) -> objects of a kind with no bundled schema: shape-checked only, said once per kind
    unchecked_kinds: Counter = field(default_factory=Counter)
    # What the rules saw (values runs only): callers that check the same release elsewhere (the scheduler oracle,
    # the live preflight) read the rendered objects from here instead of rendering again. Never cached.
    context: LintContext | None = field(default=None, repr=False, compare=False)


@dataclass
class Options:
    release: str = DEFAULT_RELEASE
    namespace: str = DEFAULT_NAMESPACE
    kuberay_crd: str | None = None
    config: LintConfig = field(default_factory=LintConfig)
    select: frozenset[str] | None = None  # only these codes
