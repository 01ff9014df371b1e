"""A forwarded ``<source>__<tool>`` call: its arguments, its ACP's answer, the datasets it leaves (16.4-16.6)."""
