"""Naming topics and themes: the word lists, phrases the papers write, acronyms spelled out, names
scored and kept distinct, and sentence splitting (titles derived from abstracts use it too)."""
