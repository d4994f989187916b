// What map.js finds on the page, for the type check only
// (`make lint`: tsc over app/map_component/js; docs/app.md). Not part of map.js.

interface Window {
  Plotly: any; // Plotly.js, loaded once a page (load.js, `loadPlotly`)
  atlasFolded?: boolean; // the sidebar was folded once on a narrow window (atlas_map.js, `foldSidebar`)
}

interface History {
  atlasWrapped?: boolean; // pushState/replaceState carry the zoom over (zoom.js, `wrapHistory`)
}
