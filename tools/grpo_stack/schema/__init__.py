"""The typed model of the values, from which every chart's values.schema.json is generated.

One source: `python -m grpo_stack.schema.generate` writes the JSON schemas and docs/values.md;
a test fails when the committed files drift from this model.
"""
