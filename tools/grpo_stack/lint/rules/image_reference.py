"""GRPO702 image-reference-invalid."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers

CODE = "GRPO702"
NAME = "image-reference-invalid"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A container's image is not a reference the kubelet can parse: the container never starts."
DOC = """## What it does
Parses every container image of every pod template the way the kubelet does (`ParseNormalizedNamed` of
github.com/distribution/reference v0.6.0, `normalize.go` and `regexp.go`): the first path part is a registry host
when it holds a `.` or a `:`, is `localhost`, or has capitals; the repository path after it must be lowercase
letters and digits joined by `.`, `_`, `__` or dashes, at most 255 characters; the tag at most 128 word characters,
`.` and `-`, not starting with either; a digest `algorithm:hex` of at least 32 hex digits. Reported as an error when
the image fails that grammar: most often a repository path with capitals (`ghcr.io/MyOrg/app:1.0`: GitHub's owner
name as written, or a `YOUR_ORG` left in), a space, or two tags. An image whose first part has capitals and no `.`
or `:` (`MyOrg/app:1.0`) parses, as a registry host of that name: a warning, since no registry answers at such a
host unless the cluster's resolver names one so. An image that names its registry host twice
(`ghcr.io/ghcr.io/org/app:1.0`, a prefix pasted before a reference that had one) is a warning too: it parses, and
asks that registry for a repository whose path starts with its own host name, which no registry keeps unless it is a
mirror laid out so. An image holding a placeholder (`<...>`, `${...}`, `$(...)`, `{{...}}`) is GRPO851's (a value
nothing filled in), and an empty image the object schema's.

## Why is this bad?
The kubelet refuses the reference before it pulls anything: the pod sits in `InvalidImageName` ("invalid
reference format: repository name must be lowercase") until the manifest changes, after the node was scaled up
for it.

## Example
```yaml
containers:
  - name: api
    image: ghcr.io/AcmeLabs/inference-api:1.4.2
```
Use instead:
```yaml
containers:
  - name: api
    image: ghcr.io/acmelabs/inference-api:1.4.2
```

## Fix
Write the repository path in lowercase (registries store it so: `docker push` and GitHub's registry refuse capitals
too), and give one tag and at most one digest.
"""

# github.com/distribution/reference v0.6.0 regexp.go, as Python patterns.
_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
REFERENCE = re.compile(rf"^(?P<domain>{_HOST}(?::[0-9]+)?)/(?P<path>{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
                       rf"(?::(?P<tag>{_TAG}))?(?:@(?P<digest>{_DIGEST}))?$")
IDENTIFIER = re.compile(r"^[a-f0-9]{64}$")
MAX_PATH = 255
PLACEHOLDER = re.compile(r"[<>{}$]")


def problem(image: str) -> tuple[str, Severity] | None:
    """Why the kubelet cannot use `image` and how sure that is, or None where it parses (ParseNormalizedNamed)."""
    if IDENTIFIER.match(image):
        return "a bare 64-hex identifier is not a repository name", Severity.ERROR
    first, slash, rest = image.partition("/")
    named_host = "." in first or ":" in first or first == "localhost"
    uppercase_host = bool(slash) and not named_host and first != first.lower()
    if slash and (named_host or uppercase_host):  # splitDockerDomain: the first part is a registry host
        domain, remainder = first, rest
    else:
        domain, remainder = "docker.io", image if slash else f"library/{image}"
    remote = remainder.split(":", 1)[0]
    if remote != remote.lower():
        return (f"its repository path {remote.split('@', 1)[0]!r} has capitals, and the kubelet refuses it "
                "(invalid reference format: repository name must be lowercase)"), Severity.ERROR
    m = REFERENCE.match(f"{domain}/{remainder}")
    if m is None:
        return ("it is not a reference the kubelet can parse (registry/path[:tag][@digest], the path in lowercase "
                "letters, digits and . _ -)"), Severity.ERROR
    if len(m.group("path")) > MAX_PATH:
        return f"its repository path is longer than {MAX_PATH} characters", Severity.ERROR
    if uppercase_host:
        return (f"its first part {first!r} has capitals, so the kubelet reads it as a registry host, where no "
                f"registry answers (assumed: the cluster's resolver names no registry {first!r})"), Severity.WARNING
    if named_host and "." in first and remainder.split("/", 1)[0] == first:
        return (f"the registry host {first!r} is written twice, so the kubelet asks {first} for a repository "
                f"named {remote.split('@', 1)[0]!r} (assumed: not a mirror that keeps repositories under its own "
                "host's name)"), Severity.WARNING
    return None


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        for field, i, c in containers(pod):
            image = c.get("image")
            if not isinstance(image, str) or not image.strip() or PLACEHOLDER.search(image):
                continue
            found = problem(image.strip())
            if found:
                why, severity = found
                yield Hit(f"{pod_path}.{field}.{i}.image", f"{o.kind} {o.name}: container {c.get('name', i)} names "
                          f"image {image!r}, but {why}: the container never starts (InvalidImageName)"
                          if severity is Severity.ERROR else
                          f"{o.kind} {o.name}: container {c.get('name', i)} names image {image!r}: {why}; the "
                          "pull fails (ErrImagePull)", obj=o, severity=severity)
