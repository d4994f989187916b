"""What leaves a map as a file a person reads: the CSV a user downloads, Markdown and BibTeX reading lists."""
