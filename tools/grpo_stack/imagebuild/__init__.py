"""grpo-images: build and push every image a values file selects, and pin them by digest in a values overlay."""
