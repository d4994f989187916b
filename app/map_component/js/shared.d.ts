// The module map.js's generated first part is (app/map_component/assets.py, `map_script`): the
// constants shared with Python (`payload.shared_constants`). For the type check only.
import type { Shared } from "./protocol.js";

export const SHARED: Shared;
