// @ts-check
// An opened paper's nearest papers beside the map (app.map_component.live_nearest): nearest first, one
// button a paper, its title as written (with its topic where their topics differ) and its similarity;
// a click, or Enter on it, opens that paper (the server's step). All text is set with textContent.

class NearestPapers {
  /** @type {HTMLElement} */ root;
  /** @type {HTMLElement} */ loading;
  /** @type {Trigger} */ trigger = () => {};
  /** @type {Promise<void>} */ ready = Promise.resolve();

  /** @param {HTMLElement} parentElement */
  constructor(parentElement) {
    this.root = element("section", "atlas-nearest");
    this.root.setAttribute("aria-label", "Nearest papers");
    this.loading = element("div", "atlas-map-loading", "");
    this.loading.hidden = true;
    this.list = element("ol", "atlas-paper-list");
    this.root.append(this.loading, this.list);
    parentElement.appendChild(this.root);
  }

  /** @param {NearestState} data */
  async update(data) {
    const items = data.nearest.map((paper) => {
      const similarity = paper.similarity.toFixed(2);
      const button = element("button", "atlas-paper");
      button.setAttribute("type", "button");
      button.setAttribute("aria-label", `${paper.title}${paper.topic === null ? "" : `, ${paper.topic}`}, similarity ${similarity}`);
      const text = element("span", "atlas-near-text");
      text.append(element("span", "atlas-near-title", paper.title));
      if (paper.topic !== null) text.append(element("span", "atlas-near-topic", paper.topic));
      button.append(text, element("span", "atlas-near-similarity", similarity));
      button.addEventListener("click", () => this.trigger("click", { row: paper.row, map: data.points }));
      const item = element("li");
      item.appendChild(button);
      return item;
    });
    this.list.replaceChildren(...items);
  }

  destroy() {
    this.root.remove();
  }
}
