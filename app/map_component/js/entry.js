// @ts-check
// The component's entry point, the one export of map.js: Streamlit calls it on every rerun with the
// same parent element, so the map (AtlasMap) is made once and kept.

/** @param {{data: ViewState|PanelState|TableState, parentElement: HTMLElement, setTriggerValue: Trigger}} component */
export default function (component) {
  foldSidebar();
  const { data, parentElement, setTriggerValue } = component;
  if ("summary" in data) return panelEntry(data, parentElement, setTriggerValue);
  if ("table" in data) return tableEntry(data, parentElement, setTriggerValue); // js/table.js
  let inst = INSTANCES.get(parentElement);
  if (!inst) {
    inst = new AtlasMap(parentElement);
    INSTANCES.set(parentElement, inst);
    LINK.map = inst;
    if (LINK.panel) LINK.panel.show(); // a topic already open dims the new map
  }
  inst.trigger = setTriggerValue;
  inst.root.style.height = `${data.height}px`;
  inst.pending = data;
  inst.update();
  return () => {
    inst.destroy();
    INSTANCES.delete(parentElement);
    if (LINK.map === inst) LINK.map = null;
  };
}

/** @type {WeakMap<HTMLElement, TopicPanel>} */
const PANELS = new WeakMap(); // parentElement -> the topic panel, kept across reruns

// The second instance: the topic panel beside the map (js/panel.js).
/** @param {PanelState} data @param {HTMLElement} parentElement @param {Trigger} setTriggerValue */
function panelEntry(data, parentElement, setTriggerValue) {
  let panel = PANELS.get(parentElement);
  if (!panel) {
    panel = new TopicPanel(parentElement);
    PANELS.set(parentElement, panel);
  }
  LINK.panel = panel;
  panel.trigger = setTriggerValue;
  panel.root.style.height = `${data.height}px`;
  const shown = panel;
  panel.ready = panel.ready.then(() => shown.update(data)).catch((error) => {
    shown.loading.hidden = false;
    shown.loading.textContent = `The topics could not be shown: ${error.message}`;
    console.error(error);
  });
  return () => {
    shown.destroy();
    PANELS.delete(parentElement);
  };
}
