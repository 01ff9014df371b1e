"""The `ga4` ACP connector: Google Analytics 4 through the Data and Admin APIs (spec 4.2, 7, 8.2, 15.1)."""
