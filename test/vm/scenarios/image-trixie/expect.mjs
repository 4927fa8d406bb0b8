// The image scenario on Debian 13 (trixie), whose own nodejs is 20: the same
// faults, the same bake with the default desired state, the same two boots
// and checks (scenarios/image/expect.mjs).
import { imageScenario } from '../image/expect.mjs';

const s = imageScenario('trixie');
export const guest = s.guest;
export const hostApply = s.hostApply;
export const checks = s.checks;
