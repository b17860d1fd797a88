"""Name and label syntax, as k8s.io/apimachinery/pkg/util/validation/validation.go defines it. Each check
returns None when the value is valid, else the API server's reason (its own wording where it has one)."""

from __future__ import annotations

import re

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
DNS1035_LABEL_MAX = 63
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
PORT_NAME_MAX = 15  # IANA service names
HELM_RELEASE_MAX = 53  # helm's chartutil.ValidateReleaseName

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL = re.compile(_DNS1123_LABEL)
DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")
DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_PORT_NAME_CHARS = re.compile(r"[-a-z0-9]+")
_PORT_NAME_LETTER = re.compile(r".*[a-z]")


def dns1123_label(value: str) -> str | None:
    if len(value) > DNS1123_LABEL_MAX:
        return f"must be no more than {DNS1123_LABEL_MAX} characters"
    if not DNS1123_LABEL.fullmatch(value):
        return ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                "start and end with an alphanumeric character")
    return None


def dns1123_subdomain(value: str) -> str | None:
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        return f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
    if not DNS1123_SUBDOMAIN.fullmatch(value):
        return ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character")
    return None


def path_segment_name(value: str) -> str | None:
    """RBAC objects' names (apimachinery path.IsValidPathSegmentName, rbac's ValidateRBACName): anything that can
    sit in a URL path segment, so `system:controller:job-controller` and upper case are valid."""
    if value in (".", ".."):
        return f"may not be {value!r}"
    for bad in ("/", "%"):
        if bad in value:
            return f"may not contain {bad!r}"
    return None


def dns1035_label(value: str) -> str | None:
    if len(value) > DNS1035_LABEL_MAX:
        return f"must be no more than {DNS1035_LABEL_MAX} characters"
    if not DNS1035_LABEL.fullmatch(value):
        return ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character")
    return None


def qualified_name(value: str) -> str | None:
    """A label or annotation key: an optional DNS subdomain prefix and '/', then a name of at most 63."""
    prefix, slash, name = value.rpartition("/") if "/" in value else ("", "", value)
    if slash and value.count("/") > 1:
        return ("a qualified name must consist of alphanumeric characters, '-', '_' or '.', with an optional "
                "DNS subdomain prefix and '/'")
    if slash:
        if not prefix:
            return "prefix part must be non-empty"
        why = dns1123_subdomain(prefix)
        if why:
            return f"prefix part {why}"
    if not name:
        return "name part must be non-empty"
    if len(name) > QUALIFIED_NAME_MAX:
        return f"name part must be no more than {QUALIFIED_NAME_MAX} characters"
    if not _QUALIFIED_NAME.fullmatch(name):
        return ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                "an alphanumeric character")
    return None


def label_value(value: str) -> str | None:
    if len(value) > LABEL_VALUE_MAX:
        return f"must be no more than {LABEL_VALUE_MAX} characters"
    if not _LABEL_VALUE.fullmatch(value):
        return ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character")
    return None


def port_name(value: str) -> str | None:
    """IsValidPortName: an IANA service name."""
    if len(value) > PORT_NAME_MAX:
        return f"must be no more than {PORT_NAME_MAX} characters"
    if not _PORT_NAME_CHARS.fullmatch(value):
        return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
    if not _PORT_NAME_LETTER.match(value):
        return "must contain at least one letter (a-z)"
    if "--" in value:
        return "must not contain consecutive hyphens"
    if value.startswith("-") or value.endswith("-"):
        return "must not begin or end with a hyphen"
    return None


def port_number(value: object, allow_zero: bool = False) -> str | None:
    low = 0 if allow_zero else 1
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 65535:
        return f"must be between {low} and 65535, inclusive"
    return None


def helm_release(value: str) -> str | None:
    """helm's release-name rule: a DNS-1123 subdomain of at most 53 characters."""
    if not value:
        return "must not be empty"
    if len(value) > HELM_RELEASE_MAX:
        return f"must be no more than {HELM_RELEASE_MAX} characters (Helm's limit)"
    if not DNS1123_SUBDOMAIN.fullmatch(value):
        return dns1123_subdomain(value)
    return None


def namespace(value: str) -> str | None:
    if not value:
        return "must not be empty"
    return dns1123_label(value)
