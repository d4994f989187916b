"""The map folder: its files and columns, the manifest, safe writes (lock and swap), reading and
writing a map, the full-text search index and the curation file. Nothing here fits or embeds."""
