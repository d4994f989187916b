"""The commands `python -m pipeline` runs (build, add, curate), each composing the packages below it."""
