"""Every wire between components, driven by its real caller or checked against its real peer's own models."""
