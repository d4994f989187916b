// @ts-check
// The page's small helpers: elements with literal text, the focus, and whether an Escape is the page's
// to answer (numbers as the page writes them: js/view.js `number`, `counted`).

/** Whether `event` is an Escape the page may answer (closing the opened topic or paper): not taken
 * already, nor pressed in a field that answers it itself (a text box, an open list or dialog).
 * @param {KeyboardEvent} event */
export function freeEscape(event) {
  if (event.key !== "Escape" || event.defaultPrevented) return false;
  const target = /** @type {HTMLElement} */ (event.target);
  return !(target && target.closest && target.closest("input, textarea, select, [contenteditable], [role='dialog'], [role='listbox']"));
}

/** @param {string} tag @param {string} [className] @param {string} [text] */
export function element(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text; // literal text, never markup
  return el;
}

/** The element inside `root` that has the focus (null: none there). @param {HTMLElement} root */
export function focusedIn(root) {
  const active = document.activeElement;
  return active instanceof HTMLElement && root.contains(active) ? active : null;
}

/** `root` was made afresh while `held` had the focus: its new self takes it, so the keyboard keeps its
 * place — the same kind of element (tag, first class) with the same data attributes, or, where it has
 * none, the same text (never a disabled one); else `fallback`, if any.
 * @param {HTMLElement} root @param {HTMLElement} held @param {HTMLElement|null} [fallback] */
export function keepFocus(root, held, fallback = null) {
  const data = JSON.stringify(held.dataset), named = data !== "{}";
  const same = [...root.querySelectorAll(`${held.tagName}.${held.classList[0]}`)].find((el) =>
    el instanceof HTMLElement && !(/** @type {HTMLButtonElement} */ (el).disabled) &&
    (named ? JSON.stringify(el.dataset) === data : el.textContent === held.textContent));
  const target = /** @type {HTMLElement|null} */ (same || fallback);
  if (target) target.focus({ preventScroll: true });
}
