"""Abstract Atlas's Streamlit app: the panels `streamlit_app.py` composes, and what they share.

- Panels, one module each, none importing another: `controls` (sidebar, header, notices), `map_panel`,
  `paper_view`, `papers_panel`, `placement`, `changes_panel`, `curation_panel`, `downloads`, `about`;
  the topic list and an opened topic are the map component's panel (`map_component`, js/panel.js),
  which reads `topic_summary` (every topic's reading, made once per map).
- Shared page elements and per-view helpers: `widgets` (the selectable paper table),
  `nearest` (an opened paper's nearest papers), `place` (placing a pasted abstract and its verdict).
- What the page shows: `view` (the papers in view for the filters and search, the header's sentence).
- View state: `state` (the `ViewState`, its link settings declared once in `state.SETTINGS`, and the
  URL round trip; pure), `session` (the only module touching Streamlit's session state; callbacks).
- Pure helpers: `filters`, `search`, `changes` (changes since the previous build, with curation),
  `themes`, `trends`, `palette`, `text`; `encoder` (the map's int8 ONNX encoder for queries).
- Per-map data: `data` (load and precompute), `loaders` (Streamlit caches); the live map component in
  `map_component/`. See docs/architecture.md.
"""
