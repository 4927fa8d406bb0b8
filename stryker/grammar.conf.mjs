import { config } from './base.mjs';
export default config('grammar');
