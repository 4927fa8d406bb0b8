import { config } from './base.mjs';
export default config('sysctl-order');
