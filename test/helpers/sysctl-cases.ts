// The ordering fixtures the netns tests share: each a sysctl.d tree (paths on
// the target, a string for a file, {link} for a symlink) and the per-namespace
// net.ipv4 keys it decides. test/sysctl/order.namespace.test.ts compares the engine with
// the real programs on them; test/sysctl/rehearsal.test.ts compares the
// rehearsal with the engine.
export type Tree = Record<string, string | { link: string }>;

export interface DiffCase {
  name: string;
  tree: Tree;
  keys: string[];
}

const K8S = { '/etc/sysctl.d/k8s.conf': 'net.ipv4.ip_forward = 1\n' };
const RP = ['net.ipv4.conf.all.rp_filter', 'net.ipv4.conf.default.rp_filter', 'net.ipv4.conf.lo.rp_filter'];

export const diffCases: DiffCase[] = [
  {
    name: 'later-etc',
    tree: { ...K8S, '/etc/sysctl.d/security-baseline.conf': '# baseline\nnet.ipv4.conf.all.rp_filter = 1\nnet.ipv4.ip_forward = 0\n' },
    keys: ['net.ipv4.ip_forward', ...RP],
  },
  { name: 'earlier-etc', tree: { ...K8S, '/etc/sysctl.d/10-old.conf': 'net.ipv4.ip_forward = 0\n' }, keys: ['net.ipv4.ip_forward'] },
  { name: 'vendor-later', tree: { ...K8S, '/usr/lib/sysctl.d/zz-vendor.conf': 'net.ipv4.ip_forward=0\n' }, keys: ['net.ipv4.ip_forward'] },
  {
    name: 'same-name-override',
    tree: {
      '/usr/lib/sysctl.d/zz-vendor.conf': 'net.ipv4.ip_forward = 0\nnet.ipv4.conf.all.rp_filter = 2\n',
      '/etc/sysctl.d/zz-vendor.conf': 'net.ipv4.ip_forward = 1\n',
      '/usr/lib/sysctl.d/60-x.conf': 'net.ipv4.conf.default.rp_filter = 2\n',
      '/usr/local/lib/sysctl.d/60-x.conf': 'net.ipv4.conf.default.rp_filter = 0\n',
      '/run/sysctl.d/60-x.conf': 'net.ipv4.conf.default.rp_filter = 1\n',
    },
    keys: ['net.ipv4.ip_forward', ...RP],
  },
  {
    name: 'dev-null-mask',
    tree: { ...K8S, '/usr/lib/sysctl.d/zz-vendor.conf': 'net.ipv4.ip_forward = 0\n', '/etc/sysctl.d/zz-vendor.conf': { link: '/dev/null' } },
    keys: ['net.ipv4.ip_forward'],
  },
  {
    name: 'glob-explicit-exclude',
    tree: {
      '/etc/sysctl.d/10-explicit.conf': 'net.ipv4.conf.all.rp_filter = 1\n-net.ipv4.conf.lo.rp_filter\n',
      '/usr/lib/sysctl.d/50-default.conf': 'net.ipv4.conf.*.rp_filter = 2\n',
    },
    keys: RP,
  },
  {
    // systemd keeps a glob's first slot when a later file repeats it with the same value; procps writes in list order.
    name: 'glob-repeat-order',
    tree: {
      '/etc/sysctl.d/10-a.conf': 'net.ipv4.conf.*.rp_filter = 1\n',
      '/etc/sysctl.d/20-b.conf': 'net.ipv4.conf.d*.rp_filter = 2\n',
      '/etc/sysctl.d/30-c.conf': 'net.ipv4.conf.*.rp_filter = 1\n',
    },
    keys: RP,
  },
  {
    name: 'sysctl-conf',
    tree: { ...K8S, '/etc/sysctl.conf': '# legacy\nnet.ipv4.ip_forward = 0\n', '/etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' } },
    keys: ['net.ipv4.ip_forward'],
  },
  { name: 'sysctl-conf-unlinked', tree: { '/etc/sysctl.conf': 'net.ipv4.ip_forward = 1\n' }, keys: ['net.ipv4.ip_forward'] },
  {
    name: 'dash-prefix',
    tree: { ...K8S, '/etc/sysctl.d/zz.conf': '-net.ipv4.ip_forward\n-net.ipv4.conf.all.rp_filter = 2\n' },
    keys: ['net.ipv4.ip_forward', 'net.ipv4.conf.all.rp_filter'],
  },
  {
    name: 'semicolon-comment',
    tree: { ...K8S, '/etc/sysctl.d/zz.conf': '; net.ipv4.ip_forward = 0\n  # net.ipv4.ip_forward = 0\n' },
    keys: ['net.ipv4.ip_forward'],
  },
  {
    name: 'slashes',
    tree: { ...K8S, '/run/sysctl.d/zz-slash.conf': 'net/ipv4/ip_forward = 0\nnet/ipv4/conf/lo/rp_filter=2\n' },
    keys: ['net.ipv4.ip_forward', 'net.ipv4.conf.lo.rp_filter'],
  },
  // Kernel couplings (src/sysctl/couplings.ts): the last write to either name of ip_forward decides.
  {
    name: 'coupled-later',
    tree: { ...K8S, '/etc/sysctl.d/zz-hardening.conf': 'net.ipv4.conf.all.rp_filter = 1\nnet.ipv4.conf.all.forwarding = 0\n' },
    keys: ['net.ipv4.ip_forward', 'net.ipv4.conf.all.forwarding'],
  },
  {
    // systemd keeps 10-a's slot for ip_forward (k8s.conf repeats the value), so 50-b's write lands later at boot only.
    name: 'coupled-same-value-slot',
    tree: { ...K8S, '/etc/sysctl.d/10-a.conf': 'net.ipv4.ip_forward = 1\n', '/etc/sysctl.d/50-b.conf': 'net.ipv4.conf.all.forwarding = 0\n' },
    keys: ['net.ipv4.ip_forward'],
  },
  {
    name: 'coupled-glob',
    tree: { ...K8S, '/etc/sysctl.d/zz-glob.conf': 'net.ipv4.conf.*.forwarding = 0\n' },
    keys: ['net.ipv4.ip_forward', 'net.ipv4.conf.lo.forwarding'],
  },
  { name: 'hidden', tree: { '/etc/sysctl.d/.hidden.conf': 'net.ipv4.conf.lo.rp_filter = 2\n' }, keys: ['net.ipv4.conf.lo.rp_filter'] },
];

/**
 * glob(3) forms on one key segment, each decided by the real programs in
 * test/sysctl/order.namespace.test.ts: '?' is one character, [...] a class ('!' or '^'
 * negates, a ']' first is literal), '\' escapes, an unclosed '[' is literal,
 * and a pattern matches the whole key, never a prefix.
 */
export const globCases: DiffCase[] = [
  { name: 'glob-question-mark', tree: { '/etc/sysctl.d/50-g.conf': 'net.ipv4.conf.?o.rp_filter = 2\n' }, keys: RP },
  { name: 'glob-class', tree: { '/etc/sysctl.d/50-g.conf': 'net.ipv4.conf.[ad]*.rp_filter = 2\n' }, keys: RP },
  { name: 'glob-class-range', tree: { '/etc/sysctl.d/50-g.conf': 'net.ipv4.conf.[b-z]*.rp_filter = 2\n' }, keys: RP },
  { name: 'glob-class-bang', tree: { '/etc/sysctl.d/50-g.conf': 'net.ipv4.conf.[!a]*.rp_filter = 2\n' }, keys: RP },
  { name: 'glob-class-caret', tree: { '/etc/sysctl.d/50-g.conf': 'net.ipv4.conf.[^d]*.rp_filter = 2\n' }, keys: RP },
  { name: 'glob-class-bracket-first', tree: { '/etc/sysctl.d/50-g.conf': 'net.ipv4.conf.[]l]o.rp_filter = 2\n' }, keys: RP },
  { name: 'glob-escape', tree: { '/etc/sysctl.d/50-g.conf': 'net.ipv4.conf.\\l*.rp_filter = 2\n' }, keys: RP },
  { name: 'glob-unclosed-class', tree: { '/etc/sysctl.d/50-g.conf': 'net.ipv4.conf.[lo*.rp_filter = 2\n' }, keys: RP },
  {
    name: 'glob-whole-key',
    tree: { '/etc/sysctl.d/50-g.conf': 'net.ipv4.conf.*.rp_filte* = 2\nnet.ipv4.conf.*.rp_filt = 1\nnet.ipv4.conf.?.rp_filter = 1\n' },
    keys: RP,
  },
  // A backslash with nothing after it to escape: what fnmatch makes of it, against both programs.
  { name: 'glob-trailing-backslash', tree: { '/etc/sysctl.d/50-g.conf': 'net.ipv4.conf.l*.rp_filter\\ = 2\nnet.ipv4.conf.*.rp_filte\\ = 1\n' }, keys: RP },
  { name: 'glob-no-slash', tree: { '/etc/sysctl.d/50-g.conf': 'net.ipv4.*.rp_filter = 2\nnet.ipv4.conf.lo.rp_filter = 0\n' }, keys: RP },
];
