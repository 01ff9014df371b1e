"""analytics-acp benchmarks: each case runs ours and its baseline alternately, several rounds, in one run."""
