"""CPU reward service for GRPO trainers' remote reward path (slime/miles --rm-url, verl via its client)."""
