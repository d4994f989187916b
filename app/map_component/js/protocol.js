// @ts-check
// The component's protocol as types: what Python sends on every rerun (`ViewState`), what the map
// sends back (`Events`), and the constants shared with Python (`Shared`, generated into map.js as
// `SHARED` by app/map_component/assets.py, `map_script`). Each typedef mirrors the TypedDict of the
// same name in app/map_component/payload.py field by field; tests/test_map_script.py holds them to it.

/**
 * The constants Python and the browser share (payload.py, `shared_constants`).
 * @typedef {Object} Shared
 * @property {string} zoom_key the link's key of the zoom (`view`)
 * @property {string[]} zoom_parts its numbers, in order: x0, x1, y0, y1
 * @property {string} zoom_number the grammar of each number (a regular expression: ASCII decimals only)
 * @property {number} zoom_min_span the narrowest range a zoom may have
 * @property {number} draw_cap points drawn at most per view when the view state names none
 * @property {string} points_magic the point file's first 8 bytes ("ATLASPT" and its format)
 * @property {number} points_format the point file's format
 * @property {string} context_colour the faint colour of the papers left out
 */

/**
 * A placed abstract's star.
 * @typedef {Object} PinMark
 * @property {number} x
 * @property {number} y
 * @property {string} topic
 */

/**
 * A topic name to place on the map.
 * @typedef {Object} TopicName
 * @property {string} text
 * @property {number} x
 * @property {number} y
 * @property {string} colour
 * @property {boolean} chosen
 */

/**
 * A theme name, shown while most of the map is in view.
 * @typedef {Object} ThemeName
 * @property {string} text
 * @property {number} x
 * @property {number} y
 */

/**
 * What clicking an entry of the key shows alone.
 * @typedef {Object} KeyPick
 * @property {number} [theme]
 * @property {number} [value]
 */

/**
 * An entry of the map's key.
 * @typedef {Object} KeyEntry
 * @property {string} text
 * @property {string} colour
 * @property {KeyPick|null} pick
 * @property {boolean} on
 */

/**
 * Everything the map receives on a rerun (payload.py, `ViewState`; docs/app.md says what each means).
 * @typedef {Object} ViewState
 * @property {string} points
 * @property {string} plotly
 * @property {number} n
 * @property {string|null} mask
 * @property {boolean} search
 * @property {number|null} paper
 * @property {PinMark|null} pin
 * @property {TopicName[]} topics
 * @property {ThemeName[]} themes
 * @property {number} label_limit
 * @property {number[]} neighbours
 * @property {string} colour
 * @property {KeyEntry[]} legend
 * @property {number} clear
 * @property {number} reset
 * @property {number} height
 * @property {number} draw_cap
 * @property {Outline|null} selection
 * @property {string} [module]
 * @property {string} [points_data]
 * @property {string} [plotly_data]
 * @property {string} [module_data]
 */

/**
 * The reader clicked a paper.
 * @typedef {Object} ClickEvent
 * @property {number} row
 * @property {string} map
 */

/**
 * A lasso's corners, in order.
 * @typedef {Object} LassoPath
 * @property {number[]} x
 * @property {number[]} y
 */

/**
 * A box (its x range, then its y range) or a lasso drawn on the map.
 * @typedef {Object} Outline
 * @property {number[]} [box]
 * @property {LassoPath} [lasso]
 */

/**
 * A box or lasso selection (shape = null when cleared).
 * @typedef {Object} SelectEvent
 * @property {Outline|null} shape
 * @property {string} map
 */

/**
 * The reader clicked an entry of the key, or "Show all" (null).
 * @typedef {Object} LegendEvent
 * @property {number|null} [theme]
 * @property {number|null} [value]
 * @property {string} map
 */

/**
 * What the map sends back, by trigger name (payload.py, `EVENTS`).
 * @typedef {Object} Events
 * @property {ClickEvent} click
 * @property {SelectEvent} select
 * @property {LegendEvent} legend
 */

/** Streamlit's setTriggerValue, for the map's events only.
 * @typedef {<K extends keyof Events>(name: K, value: Events[K]) => void} Trigger */

// ------------------------------------------------------------------ the browser side's own types

/**
 * A Plotly chart's div, with what Plotly and the map keep on it.
 * @typedef {HTMLDivElement & {layout?: any, _fullLayout?: any, _fullData?: any, on: (event: string, handler: (event: any) => void) => void, atlasDrawn?: any[], atlasTable?: PointTable}} PlotDiv
 */

/** @typedef {{name: "all"|"sub", div: PlotDiv, plotted: boolean, drawnKey: string|undefined, syncing: boolean, sampledFor?: string}} Chart */

/** @typedef {{x: number[], y: number[]}} Ranges */

/** A view's mask (`decodeMask`): 1 = in view, with the rows in view in order.
 * @typedef {Uint8Array & {rows: Uint32Array}} Mask */
