// @ts-check
// The component's entry point, the one export of map.js: Streamlit calls it on every rerun with the
// same parent element, so the map (AtlasMap) is made once and kept.

/** @param {{data: ViewState, parentElement: HTMLElement, setTriggerValue: Trigger}} component */
export default function (component) {
  foldSidebar();
  const { data, parentElement, setTriggerValue } = component;
  let inst = INSTANCES.get(parentElement);
  if (!inst) {
    inst = new AtlasMap(parentElement);
    INSTANCES.set(parentElement, inst);
  }
  inst.trigger = setTriggerValue;
  inst.root.style.height = `${data.height}px`;
  inst.pending = data;
  inst.update();
  return () => {
    inst.destroy();
    INSTANCES.delete(parentElement);
  };
}
