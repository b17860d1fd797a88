"""grpo-lint: schema, rendered-object and job checks over values files (and plain manifests)."""
