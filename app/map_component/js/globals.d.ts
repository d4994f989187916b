// What map.js finds on the page and in its generated first line, for the type check only
// (`npx -y typescript@5 tsc -p app/map_component/js`; docs/app.md). Not part of map.js.

/** The constants shared with Python, generated into map.js (app/map_component/assets.py, `map_script`). */
declare const SHARED: Shared;

interface Window {
  Plotly: any; // Plotly.js, loaded once a page (load.js, `loadPlotly`)
  atlasFolded?: boolean; // the sidebar was folded once on a narrow window (atlas_map.js, `foldSidebar`)
}

interface History {
  atlasWrapped?: boolean; // pushState/replaceState carry the zoom over (zoom.js, `wrapHistory`)
}
