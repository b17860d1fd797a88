"""What the set's RBAC grants its service accounts (not a rule: no CODE)."""

from __future__ import annotations


def accounts_granted(ctx, resource: str, verbs: frozenset[str], group: str = "") -> set[str]:
    """The ServiceAccounts a RoleBinding or ClusterRoleBinding of the set binds to a Role or ClusterRole of the set
    that allows one of `verbs` on `resource` of API group `group` (a `*` in a rule allows every one)."""
    rules_of = {(r.kind, r.name): r.obj.get("rules") for r in ctx.of_kind("Role", "ClusterRole")}
    out: set[str] = set()
    for b in ctx.of_kind("RoleBinding", "ClusterRoleBinding"):
        ref = b.obj.get("roleRef") if isinstance(b.obj.get("roleRef"), dict) else {}
        rules = rules_of.get((ref.get("kind"), ref.get("name")))
        if not isinstance(rules, list) or not any(_allows(r, resource, verbs, group) for r in rules):
            continue
        subjects = b.obj.get("subjects")
        out |= {str(s["name"]) for s in subjects if isinstance(s, dict) and s.get("kind") == "ServiceAccount"
                and s.get("name")} if isinstance(subjects, list) else set()
    return out


def _allows(rule: object, resource: str, verbs: frozenset[str], group: str) -> bool:
    if not isinstance(rule, dict):
        return False
    groups, resources, allowed = ({str(x) for x in rule.get(k) or []} for k in ("apiGroups", "resources", "verbs"))
    return ((group in groups or "*" in groups) and (resource in resources or "*" in resources)
            and bool(verbs & allowed or "*" in allowed))


def pod_account(pod: dict) -> str:
    """The ServiceAccount a pod runs as (`default` unless it names one)."""
    return str(pod.get("serviceAccountName") or pod.get("serviceAccount") or "default")
