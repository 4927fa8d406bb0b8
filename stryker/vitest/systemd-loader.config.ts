import { groupConfig } from './shared.js';
export default groupConfig('systemd-loader');
