"""The Prometheus Operator objects, dashboards and alert rules the chart ships, and their checks.

One source: `python -m grpo_stack.monitoring.generate` writes the chart's dashboards
(charts/grpo-stack/files/dashboards/*.json) and alert rules (charts/grpo-stack/files/monitoring/rules.yaml) from
dashboards.py and rules.py; a test fails when the committed files drift. Every metric a query names is in
metrics.py with where it is seen emitted; every query is parsed by Prometheus's own parser (promql.py).
"""
