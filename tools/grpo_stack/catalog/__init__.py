"""Sourced facts the builder and the rules need: model shapes and EC2 instance capacity."""
