import { config } from './base.mjs';
export default config('modprobe-d');
