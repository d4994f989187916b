// A stand-in page for the browser's modules under `node --test`: a location, a history that moves it
// (each entry pushed kept in `page.entries`), and the popstate listeners, which `move` runs.
export const page = { search: "", entries: [""] };
const listeners = [];
globalThis.window = /** @type {any} */ ({
  location: {
    get search() { return page.search; },
    get href() { return `http://app.test/${page.search}`; },
    pathname: "/",
    hash: "",
  },
  history: {
    state: null,
    pushState: (_state, _title, url) => {
      page.search = new URL(String(url), "http://app.test/").search;
      page.entries.push(page.search);
    },
    replaceState: (_state, _title, url) => { page.search = new URL(String(url), "http://app.test/").search; },
  },
  addEventListener: (name, listener) => { if (name === "popstate") listeners.push(listener); },
});

/** Back or Forward to the entry `search`. @param {string} search */
export const move = (search) => {
  page.search = search;
  for (const listener of listeners) listener({});
};
