"""Abstract Atlas app helpers: pure state, filter, selection and figure code the Streamlit entry point composes.

One module a panel (`map_panel`, `topic_list`, `topic_view`, `paper_view`, `changes_panel`, `about`,
`downloads`, `controls`, `curation_panel`); URL and session state in `state`/`session`; per-map data
in `data`/`loaders`; the live map in `map_component/`. See docs/architecture.md.
"""
