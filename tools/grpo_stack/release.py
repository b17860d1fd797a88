"""The release name and namespace grpo-render and grpo-lint use when none is given: one definition, so the
`--job` command and the lint findings show the same in-cluster URLs (`<svc>.grpo.svc`)."""

DEFAULT_RELEASE = "grpo"
DEFAULT_NAMESPACE = "grpo"
