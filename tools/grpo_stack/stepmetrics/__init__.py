"""Training-step metrics for Prometheus, read from the step file verl's own `file` tracker writes (one JSON line a
step), served as text on an HTTP /metrics by the supervised submit."""
