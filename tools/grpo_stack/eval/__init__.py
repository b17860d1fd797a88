"""Evaluation after training: merge a checkpoint (with provenance), compare lm-eval results honestly."""
