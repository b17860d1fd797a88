"""grpo-stack: one values file -> Helm release and the GRPO job command."""

__version__ = "0.1.0"
