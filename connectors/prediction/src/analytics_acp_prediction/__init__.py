"""analytics-acp connector ``prediction``: statsmodels forecasts and matplotlib charts over host tables (8.8).

Nothing heavy is imported here or in ``plugin``: pandas, statsmodels and matplotlib
load on the first tool call, so the server starts fast.
"""

__version__ = "0.1.0"
