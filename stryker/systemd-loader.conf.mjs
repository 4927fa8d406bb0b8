import { config } from './base.mjs';
export default config('systemd-loader');
