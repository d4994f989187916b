// @ts-check
// Loading: Plotly.js and the map's point table, each downloaded once a page (and kept in the browser's
// Cache Storage); decoding the binary point file, its titles, and a view's mask of the papers in view.

import { SHARED } from "./shared.js";
/** @import { Mask, Ranges } from "./protocol.js" */
/** @import { Grouping } from "./sampling.js" */

/** @type {Map<string, Promise<unknown>>} url -> its download, shared by every instance on the page */
const LOADS = new Map();

/** `load(url)`, once a page (again after it failed). @template T @param {string} url @param {(url: string) => Promise<T>} load @returns {Promise<T>} */
export function once(url, load) {
  if (!LOADS.has(url)) {
    LOADS.set(
      url,
      load(url).catch((/** @type {unknown} */ error) => {
        LOADS.delete(url); // a failed download may be retried on the next rerun
        throw error;
      }),
    );
  }
  return /** @type {Promise<T>} */ (LOADS.get(url));
}

// Files are named by their content, so a copy kept in the browser's Cache Storage never goes stale:
// a returning reader loads Plotly.js and the map's points without asking the server (Streamlit's
// static files come without caching headers). Cache Storage needs a secure context; elsewhere, fetch.
const CACHE = "abstract-atlas";
const KEEP = 4; // files of each kind (plotly-, points-) kept; older ones are dropped

/** @param {string} url @returns {Promise<Response>} */
async function download(url) {
  const store = window.caches && window.isSecureContext ? await caches.open(CACHE).catch(() => null) : null;
  const kept = store ? await store.match(url) : null;
  if (kept) return kept;
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  if (!store) return response;
  await store.put(url, response.clone()).catch(() => null);
  const name = (/** @type {string} */ address) => address.slice(address.lastIndexOf("/") + 1);
  const kind = name(url).split("-")[0];
  const same = (await store.keys()).filter((r) => name(r.url).startsWith(kind + "-"));
  for (const old of same.slice(0, Math.max(0, same.length - KEEP))) await store.delete(old);
  return response;
}

// A downloaded file, un-gzip'd. `inline`: the file's bytes as base64, sent through the component where
// static/ is read-only.
/** @param {string} url @param {string} [inline] */
export async function gunzipped(url, inline) {
  const response = inline ? new Response(bytesOf(inline)) : await download(url);
  return new Response(/** @type {ReadableStream<Uint8Array<ArrayBuffer>>} */ (response.body).pipeThrough(new DecompressionStream("gzip")));
}

/** @param {string} url @param {string} [inline] @returns {Promise<any>} Plotly */
export function loadPlotly(url, inline) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  return once(url, async () => {
    const code = await (await gunzipped(url, inline)).text();
    const src = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
    await new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.onload = resolve;
      script.onerror = () => reject(new Error("Plotly.js did not load"));
      document.head.appendChild(script);
    });
    URL.revokeObjectURL(src);
    return window.Plotly;
  });
}

/** @param {string} url @param {string} [inline] @returns {Promise<PointTable>} */
export function loadTable(url, inline) {
  return once(url, async () => prepare(decodePoints(await (await gunzipped(url, inline)).arrayBuffer())));
}

// The point file (app/map_component/payload.py, `encode_points`): its magic (`SHARED.points_magic`),
// a uint32 header length, a JSON header (names, palettes, ranges, and where each array is), then
// little-endian typed arrays, each 8-byte aligned: read in place, never copied.
const POINT_ARRAYS = { float32: Float32Array, uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array };

/** A point file read: its JSON header's fields, and its arrays by name.
 * @typedef {Object<string, any> & {arrays: Object<string, Float32Array|Uint8Array|Uint16Array|Uint32Array>}} PointFile */

/** @param {ArrayBuffer} buffer @returns {PointFile} */
export function decodePoints(buffer) {
  const bytes = new Uint8Array(buffer);
  const magic = SHARED.points_magic.length;
  if (new TextDecoder().decode(bytes.subarray(0, magic)) !== SHARED.points_magic) throw new Error("not a point file of this version");
  const length = new DataView(buffer).getUint32(magic, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(magic + 4, magic + 4 + length)));
  const start = magic + 4 + length;
  /** @type {PointFile["arrays"]} */
  const arrays = {};
  for (const [name, [kind, offset, count]] of Object.entries(/** @type {Object<string, [keyof POINT_ARRAYS, number, number]>} */ (header.arrays))) {
    arrays[name] = new POINT_ARRAYS[kind](buffer, start + offset, count);
  }
  return { ...header, arrays };
}

// As app.text.plotly_escape and plotly_wrap: titles are untrusted text, escaped for Plotly's hover
// (which reads a few tags and entities); <br> between wrapped lines is the one tag added.
/** @param {string} text */
export function plotlyEscape(text) {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** @param {string} text @param {number} width @param {number} maxLines */
function plotlyWrap(text, width, maxLines) {
  if (text.length <= width && !text.includes("\n")) return plotlyEscape(text);
  const lines = [];
  let line = "";
  for (let word of text.split(/\s+/)) {
    if (!word) continue;
    while (word.length > width) {
      if (line) {
        lines.push(line);
        line = "";
      }
      lines.push(word.slice(0, width));
      word = word.slice(width);
    }
    if (!line) line = word;
    else if (line.length + 1 + word.length <= width) line += " " + word;
    else {
      lines.push(line);
      line = word;
    }
    if (lines.length > maxLines) break;
  }
  if (line) lines.push(line);
  if (lines.length > maxLines) {
    lines.length = maxLines;
    lines[maxLines - 1] = lines[maxLines - 1].replace(/[ .,;:]+$/, "") + "…";
  }
  return lines.map(plotlyEscape).join("<br>");
}

/** Row i's title as stored (UTF-8 in one block).
 * @param {PointTable} t @param {number} i */
export function rawTitle(t, i) {
  return t.decoder.decode(t.titleBytes.subarray(i ? t.titleEnd[i - 1] : 0, t.titleEnd[i]));
}

/** Row i's hover title, escaped and wrapped, made when first drawn and kept.
 * @param {PointTable} t @param {number} i */
export function hoverTitle(t, i) {
  let title = t.titles[i];
  if (title === undefined) title = t.titles[i] = plotlyWrap(rawTitle(t, i), 64, 3);
  return title;
}

/**
 * The point table as the map draws from it (`prepare`): the file's header (names, palettes, the
 * opening ranges, the marker size) and its arrays, with each row's hover title once made.
 * @typedef {{
 *   n: number, format: number, sources: string[], palette: string[], topic_names: string[],
 *   range: Ranges, size: number, webgl: boolean,
 *   colourings: Object<string, {values: string[], palette: string[], code: Uint16Array}>,
 *   facets: string[], codes: Object<string, Uint8Array|Uint16Array>,
 *   x: Float32Array, y: Float32Array, colour: Uint16Array, source: Uint32Array, order: Uint32Array,
 *   titleEnd: Uint32Array, titleBytes: Uint8Array, titles: string[], decoder: TextDecoder,
 *   groupings: Map<string, Grouping>,
 * }} PointTable
 */

/** @param {PointFile} points @returns {PointTable} */
function prepare(points) {
  const { arrays: a, ...header } = points;
  const table = /** @type {PointTable} */ ({
    ...header, x: a.x, y: a.y, colour: a.colour, source: a.source, order: a.order,
    titleEnd: a.title_end, titleBytes: a.title_bytes, titles: new Array(points.n),
    decoder: new TextDecoder(), groupings: new Map(), codes: {},
  });
  // each filterable column's value a row (its position among the column's values; missing: their number)
  for (const column of table.facets) table.codes[column] = /** @type {Uint8Array|Uint16Array} */ (a[`code:${column}`]);
  for (const [column, entry] of Object.entries(table.colourings)) entry.code = /** @type {Uint16Array} */ (a[`code:${column}`]);
  return table;
}

/** @param {PointTable} t @param {number} i */
export function detailOf(t, i) {
  return t.topic_names[t.colour[i]] + "<br>" + t.sources[t.source[i]];
}

// A view's mask (app/map_component/payload.py, `encode_mask`): "b" + the bits in base64, or "d" + the
// gaps between its rows as LEB128 varints in base64; null = every paper. A Uint8Array (1 = in view)
// with its rows in order as `rows`.
/** The papers of `rows` (null: every paper) that `has` keeps (null: all), counted by colour rank.
 * @param {PointTable} t @param {ArrayLike<number>|null} rows @param {((row: number) => boolean)|null} has */
export function rankCounts(t, rows, has = null) {
  const counts = new Int32Array(t.palette.length);
  const total = rows ? rows.length : t.n;
  for (let j = 0; j < total; j++) {
    const i = rows ? rows[j] : j;
    if (!has || has(i)) counts[t.colour[i]] += 1;
  }
  return counts;
}

/** base64 as its bytes (a loop over `atob`'s text: `Uint8Array.from` with a mapping function takes
 * 20 times as long, 0.2 s for a search's 1 MB of hits at a million papers). @param {string} text */
export function bytesOf(text) {
  const raw = atob(text), bytes = new Uint8Array(raw.length);
  for (let k = 0; k < raw.length; k++) bytes[k] = raw.charCodeAt(k);
  return bytes;
}

/** Unsigned LEB128 varints in base64 (payload.varints): the rows a search ranks, best first. @param {string} text */
export function decodeVarints(text) {
  const bytes = bytesOf(text), out = new Uint32Array(bytes.length); // a value takes a byte at least
  let value = 0, shift = 0, count = 0;
  for (let k = 0; k < bytes.length; k++) {
    const byte = bytes[k];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte & 0x80) continue;
    out[count++] = value;
    value = shift = 0;
  }
  return out.slice(0, count);
}

/** @param {string|null|undefined} text @param {number} n @returns {Mask|null} */
export function decodeMask(text, n) {
  if (text === null || text === undefined) return null;
  if (text[0] === "d") {
    let row = -1; // the gaps between the rows, as varints
    return maskOf(decodeVarints(text.slice(1)).map((gap) => (row += gap)), n);
  }
  const mask = /** @type {Mask} */ (new Uint8Array(n));
  const bits = bytesOf(text.slice(1));
  let count = 0;
  for (let i = 0; i < n; i++) count += mask[i] = (bits[i >> 3] >> (i & 7)) & 1;
  mask.rows = new Uint32Array(count);
  for (let i = 0, k = 0; i < n; i++) if (mask[i]) mask.rows[k++] = i;
  return mask;
}

/** The mask of `n` papers holding the rows `rows` (ascending). @param {ArrayLike<number>} rows @param {number} n @returns {Mask} */
export function maskOf(rows, n) {
  const mask = /** @type {Mask} */ (new Uint8Array(n));
  mask.rows = Uint32Array.from(rows);
  for (const i of mask.rows) mask[i] = 1;
  return mask;
}

/** The map's point table, once the map's instance has started loading it (it may carry its bytes). */
/** @param {string} url @returns {Promise<PointTable>} */
export async function mapTable(url) {
  while (!LOADS.has(url)) await new Promise((resolve) => setTimeout(resolve, 50));
  return /** @type {Promise<PointTable>} */ (LOADS.get(url));
}
