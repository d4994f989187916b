// @ts-check
// The component's protocol as types: what Python sends on every rerun (`ViewState`), what the map
// sends back (`Events`), and the constants shared with Python (`Shared`, generated into map.js as
// `SHARED` by app/map_component/assets.py, `map_script`). Each typedef mirrors the TypedDict of the
// same name in app/map_component/payload.py field by field; tests/test_map_script.py holds them to it.

/** @import { PointTable } from "./load.js" */
/** @import { View } from "./view.js" */


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
 * @property {string[]} link_order the link's keys in the order the server writes them ("f." for the filters)
 * @property {string} topic_key the link's key of the opened topic
 * @property {string} topics_key the link's key of the chosen topics
 * @property {string} theme_key the link's key of the chosen themes
 * @property {string} filter_key the link's keys of the column filters start with it (the column follows)
 * @property {string} select_key the link's key of a box or lasso selection (`app.selection`)
 * @property {number} max_corners a lasso's corners in a link at most
 * @property {number} max_topic_labels topic names the map places at most for a view (js/atlas_map.js `namedView`)
 * @property {ViewKeys} link_keys each setting of the view's key in the link (`app.state.SETTINGS`; the filters' the prefix)
 * @property {View} view_defaults each setting's default, left out of the link (`app.state.VIEW_DEFAULTS`)
 * @property {number} unassigned the topic id of the papers no topic holds
 */

/** @typedef {{[K in keyof View]: string}} ViewKeys */

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
 * @property {number} id
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
 * @property {string|null} link
 * @property {boolean} on
 */

/**
 * Everything the map receives on a rerun (payload.py, `ViewState`; docs/app.md says what each means).
 * @typedef {Object} ViewState
 * @property {string} points
 * @property {string} plotly
 * @property {number} n
 * @property {number|null} paper
 * @property {PinMark|null} pin
 * @property {number} label_limit
 * @property {number[]} neighbours
 * @property {string} colour
 * @property {KeyEntry[]} legend
 * @property {number} browser_steps
 * @property {number} reset
 * @property {number} height
 * @property {number} draw_cap
 * @property {Outline|null} selection
 * @property {string} [link]
 * @property {string} [module]
 * @property {string} [points_data]
 * @property {string} [plotly_data]
 * @property {string} [module_data]
 */

/**
 * The view state as the map draws it (js/atlas_map.js `asDrawn`): the server's, with what the link's
 * view says (js/page.js): whether its papers are hits to outline (a search, or the papers added), the
 * names of its topics and themes (from the map's summary; none until it is here), the key's pressed
 * entries and its box or lasso.
 * @typedef {ViewState & {search: boolean, topics: TopicName[], themes: ThemeName[]}} MapView
 */

/**
 * A metadata column the topic list offers values of to filter by: its values as the data writes them,
 * the chosen ones as positions in `values`.
 * @typedef {Object} PanelFacet
 * @property {string} column
 * @property {string} name
 * @property {string[]} values
 * @property {number[]} chosen
 */

/**
 * A filterable column's values as the data writes them (the link's): the point table's codes of the
 * column are positions in `values`.
 * @typedef {Object} HeaderFacet
 * @property {string} column
 * @property {string[]} values
 */

/**
 * What the header's sentence quotes of a search (payload.py, `SearchFacts`; `app.search.search_facts`).
 * @typedef {Object} SearchFacts
 * @property {string} shown
 * @property {boolean} fused
 * @property {string} nearest
 * @property {string} close
 */

/**
 * Everything the header's sentence receives on a rerun (payload.py, `HeaderState`).
 * @typedef {Object} HeaderState
 * @property {[string, string]} sentence
 * @property {string} points
 * @property {number[]} ranks
 * @property {string[]} names
 * @property {number[]} theme_of
 * @property {number[]} themes
 * @property {string[]} theme_names
 * @property {HeaderFacet[]} facets
 * @property {string|null} added
 * @property {SearchFacts|null} search
 * @property {string|null} hits
 * @property {string|null} evidence
 * @property {ExtraColumn[]} columns
 * @property {string} [link]
 * @property {string} [module]
 */

/**
 * Everything the topic panel receives on a rerun (payload.py, `PanelState`).
 * @typedef {Object} PanelState
 * @property {string} summary
 * @property {string} points
 * @property {string} plotly
 * @property {string} sort
 * @property {number[]} themes
 * @property {number[]} topics
 * @property {PanelFacet[]} facets
 * @property {number} browser_steps
 * @property {number} height
 * @property {PaperState|null} paper
 * @property {string} [link]
 * @property {string} [module]
 * @property {string} [summary_data]
 * @property {string} [plotly_data]
 * @property {string} [module_data]
 */

/**
 * One column of the papers table's file (payload.py, `TableColumn`).
 * @typedef {Object} TableColumn
 * @property {string} name
 * @property {string[]} [values]
 */

/**
 * A topic as the papers table names it, by palette position (payload.py, `TableTopic`).
 * @typedef {Object} TableTopic
 * @property {number} id
 * @property {string} name
 */

/**
 * A column a search adds to the papers table, one value a ranked row (payload.py, `ExtraColumn`).
 * @typedef {Object} ExtraColumn
 * @property {string} name
 * @property {string[]} [values]
 * @property {string} [codes]
 * @property {string} [numbers]
 */

/**
 * Everything the papers table receives on a rerun (payload.py, `TableState`).
 * @typedef {Object} TableState
 * @property {string} table
 * @property {string} points
 * @property {number|null} topic
 * @property {number} page_rows
 * @property {number} browser_steps
 * @property {string} [link]
 * @property {string} [module]
 * @property {string} [table_data]
 * @property {string} [module_data]
 */

/**
 * One of an opened paper's nearest papers (payload.py, `NearPaper`).
 * @typedef {Object} NearPaper
 * @property {number} row
 * @property {string} title
 * @property {string|null} topic
 * @property {number} similarity
 */

/**
 * How an opened paper matched the search (payload.py, `MatchNote`).
 * @typedef {Object} MatchNote
 * @property {string} kind
 * @property {string} text
 */

/**
 * An opened paper as the topic panel shows it in the list's place (payload.py, `PaperState`): texts as
 * written, the title and the abstract in pieces, those the search matched marked.
 * @typedef {Object} PaperState
 * @property {string} back
 * @property {[string, boolean][]} title
 * @property {number} topic
 * @property {string} topic_name
 * @property {string} details
 * @property {boolean} added
 * @property {string|null} url
 * @property {MatchNote|null} match
 * @property {[string, boolean][]} abstract
 * @property {NearPaper[]} nearest
 */
/**
 * One of a topic's papers nearest its centre.
 * @typedef {Object} CentralPaper
 * @property {number} row
 * @property {string} title
 */

/**
 * A topic near another.
 * @typedef {Object} NearTopic
 * @property {number} id
 * @property {number} similarity
 */

/**
 * A topic's papers in one year.
 * @typedef {Object} YearShare
 * @property {number} year
 * @property {number} papers
 * @property {number} total
 * @property {number} share
 */

/**
 * A topic's papers at one venue.
 * @typedef {Object} VenueCount
 * @property {string} venue
 * @property {number} papers
 * @property {number} total
 * @property {number} share
 */

/**
 * One topic (or the unassigned papers, id -1) as the panel shows it (payload.py, `SummaryTopic`).
 * @typedef {Object} SummaryTopic
 * @property {number} id
 * @property {number} rank
 * @property {string} name
 * @property {number} size
 * @property {string} colour
 * @property {number|null} theme
 * @property {number|null} x
 * @property {number|null} y
 * @property {string[]} keywords
 * @property {number[]} weights
 * @property {CentralPaper[]} central
 * @property {NearTopic[]} nearest
 * @property {number|null} stability
 * @property {number|null} growth
 * @property {number|null} written
 * @property {string} note
 * @property {YearShare[]} years
 * @property {VenueCount[]} venues
 */

/**
 * A heading of the topic list and its topics in order.
 * @typedef {Object} ListSection
 * @property {number|null} theme
 * @property {string|null} name
 * @property {number} size
 * @property {number[]} topics
 * @property {string|null} colour
 */

/**
 * The topic list in each order it offers.
 * @typedef {Object} TopicLists
 * @property {ListSection[]} size
 * @property {ListSection[]} [rising]
 */

/**
 * The per-map file the panel reads (payload.py, `Summary`), sent once per map.
 * @typedef {Object} Summary
 * @property {number} n
 * @property {SummaryTopic[]} topics
 * @property {ThemeName[]} themes
 * @property {TopicLists} lists
 * @property {string} stability_help
 */

/**
 * The reader clicked a paper (null: closed the opened paper: Escape, or the panel's "Back to …").
 * @typedef {Object} ClickEvent
 * @property {number|null} row
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
 * A box or lasso selection (shape = null when cleared); `query`: the query string the browser wrote
 * for the step (js/select.js, js/steps.js `readingStep`; none: the server's step): the step is that link.
 * @typedef {Object} SelectEvent
 * @property {Outline|null} shape
 * @property {string} [query]
 * @property {boolean} [drawn] whether the browser drew the step (else the server draws the link's view)
 * @property {string} map
 */

/**
 * The reader clicked an entry of the key, or "Show all" (null).
 * @typedef {Object} LegendEvent
 * @property {number|null} [theme]
 * @property {number|null} [value]
 * @property {string} [query]
 * @property {boolean} [drawn] whether the browser drew the step (else the server draws the link's view)
 * @property {string} map
 */

/**
 * The panel opened a topic (null: back to the list); `query`: the query string it wrote.
 * @typedef {Object} TopicEvent
 * @property {number|null} topic
 * @property {string} query
 * @property {string} map
 */

/**
 * Back or Forward went to `query`, a view the browser drew (js/history.js `historyStep`).
 * @typedef {Object} HistoryEvent
 * @property {string} query
 * @property {string} map
 */

/**
 * The papers table's "Clear selection"; `query`: the query string the browser wrote for the step
 * (js/select.js; none: the server's step).
 * @typedef {Object} ClearEvent
 * @property {string} [query]
 * @property {boolean} [drawn] whether the browser drew the step (else the server draws the link's view)
 * @property {string} map
 */

/**
 * Topics kept alone: ticked in the panel's list, or its "Only this topic" (none: every topic again);
 * `query`: the query string the browser wrote for the step (js/panel.js `showTopics`).
 * @typedef {Object} OnlyEvent
 * @property {number[]} topics
 * @property {string} [query]
 * @property {boolean} [drawn] whether the browser drew the step (else the server draws the link's view)
 * @property {string} map
 */

/**
 * Values of a metadata column toggled in the panel's list (positions in its `PanelFacet.values`; none:
 * every value again); `query`: the query string the browser wrote for the step (js/panel.js `showValues`).
 * @typedef {Object} ValuesEvent
 * @property {string} column
 * @property {number[]} values
 * @property {string} [query]
 * @property {boolean} [drawn] whether the browser drew the step (else the server draws the link's view)
 * @property {string} map
 */

/**
 * The opened paper's "Open topic" in the panel: the paper closed, its topic opened (the server's step).
 * @typedef {Object} PaperTopicEvent
 * @property {number} topic
 * @property {string} map
 */

/**
 * The panel's list order chosen.
 * @typedef {Object} SortEvent
 * @property {string} sort
 * @property {string} map
 */

/**
 * What the map, the panel and the papers table send back, by trigger name (payload.py, `EVENTS`).
 * @typedef {Object} Events
 * @property {ClickEvent} click
 * @property {SelectEvent} select
 * @property {LegendEvent} legend
 * @property {HistoryEvent} history
 * @property {TopicEvent} topic
 * @property {OnlyEvent} only
 * @property {ValuesEvent} values
 * @property {SortEvent} sort
 * @property {PaperTopicEvent} paper_topic
 * @property {ClearEvent} clear
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

/** What the map's own moves and the reader's leave on a chart besides its data: the ranges, the drag
 * tool, a drawn box or lasso (js/plot.js, `shownState`).
 * @typedef {{x: number[], y: number[], dragmode: string, selections: any[]|undefined}} ChartState */

/** A Plotly event of a chart (a click, a box or lasso drawn, a relayout's changed keys).
 * @typedef {{points?: {pointIndex: number, curveNumber: number}[], range?: {x: number[], y: number[]}, lassoPoints?: {x: number[], y: number[]}} & Object<string, any>} PlotEvent */

/** An image Plotly places on a chart (a layout image): the faint rest, or the map without WebGL.
 * @typedef {{source: string, xref: string, yref: string, x: number, y: number, sizex: number, sizey: number, sizing: string, layer: string, opacity: number}} PlotImage */

/** A view's mask (`decodeMask`): 1 = in view, with the rows in view in order.
 * @typedef {Uint8Array & {rows: Uint32Array}} Mask */
