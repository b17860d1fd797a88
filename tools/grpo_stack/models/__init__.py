"""grpo-models: stage a Hugging Face model at a pinned revision onto the shared volume, verified, with a manifest."""
