"""The dataset view (issue 36): one MCP Apps view of a whole dataset, its reads, and the extension's negotiation.

``dataset.html`` is the view (self-contained, no network); ``pages.DatasetView`` answers its reads (pages
anywhere in a dataset, the chart its shape calls for) through the query cache; ``apps`` is what the bridge
shows a client that negotiates MCP Apps. Another host of the same view (the local page, issue 35.7) serves
``apps.view_html()`` and answers the view's ``tools/call`` with ``DatasetView.page``/``summary``.
"""
