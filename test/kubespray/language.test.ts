// The audit's language classes against ansible-core itself
// (test/helpers/ansible-language.py and ansible-task-args.py, run with the
// Python ansible runs on): Jinja2 string
// literals and filters as Templar renders them, and free-form key=value
// arguments as parse_kv / ModuleArgsParser split them. Every case is asked of
// ansible-core; ours must give the same value, or fail where Ansible fails.
// YAML 1.1 as AnsibleLoader reads it: test/ansible/yaml11.test.ts.
// The kubespray expressions are copied from the mirror's tags, cited per case.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { templateValue, pythonStr } from '../../src/ansible/jinja.js';
import { parseKv } from '../../src/ansible/kv-args.js';
import { Host } from '../../src/host.js';
import { KubesprayCheckout } from '../../src/kubespray/checkout.js';
import { walkRole } from '../../src/kubespray/tasks.js';
import { parseInventory } from '../../src/kubespray/inventory.js';
import { factMap, targetVarsReader } from '../../src/kubespray/report.js';
import { auditWhoFixes } from '../../src/kubespray/who-fixes.js';
import { auditMemory } from '../../src/kubespray/preflight.js';
import { ansiblePython } from '../helpers/ansible-python.js';
import { ask, shape, unfloat, type Answer } from '../helpers/ansible-language.js';
import { buildTree } from '../helpers/tree.js';

// ---- Jinja2 string literals and filters ----------------------------------------

const VARS: Record<string, unknown> = {
  kube_version: 'v1.29.5',
  youki_version: '0.1.3',
  kube_apiserver_bind_address: '0.0.0.0',
  coredns_version: 'v1.11.1',
  coredns_image_is_namespaced: false,
  manual_dns_server: '10.0.0.1,10.0.0.2',
  ansible_kernel: '6.1.0-31-amd64',
  main_ips: ['192.0.2.10', '2001:db8::10'],
  etcd_access_addresses_list: ['https://192.0.2.10:2379', 'https://192.0.2.11:2379'],
  groups: { k8s_cluster: ['node1', 'node2'], etcd: ['node1', 'node3'], kube_control_plane: ['node1'] },
  proxy_env_defaults: { http_proxy: '', no_proxy: 'localhost' },
  nameservers: ['1.1.1.1', '8.8.8.8'],
  cloud_resolver: ['8.8.8.8', '1.1.1.1'],
  dns_early: true,
  cilium_kube_proxy_replacement: 'True',
  kube_network_plugin: 'calico',
  sysctl_file_path: '/etc/sysctl.d/99-sysctl.conf',
  _root_device: ['/dev/sda1'],
  list_mixed: ['B', 'a', 'A', 'b'],
  text: 'node1 10.0.0.1\n#comment\n  node2\t10.0.0.2',
  b64: 'aGVsbG8gd29ybGQ=',
  empty: [],
  nested: [[1, [2, null]], 'None', 3],
  yaml_text: 'a: yes\nb: 017\nc: n\nd: 1e3\n',
  kube_service_subnets: '10.233.0.0/18,fd85:ee78:d8a6:8607::1000/116',
  kube_service_addresses: '10.233.0.0/18',
  kube_service_subnets_v6: 'fd85:ee78:d8a6:8607::1000/116,10.233.0.0/18',
  resolv_conf: 'search example.org\nnameserver 192.0.2.53\nnameserver 2001:DB8::35\nnameserver   fe80::1\nnameserver 10.0.0.2 # backup\n',
  kube_pods_subnet: '10.233.64.0/18',
  download_run_once: false,
  download_always_pull: 'false',
  calico_version: 'v3.23.3',
  calico_crds_archive_checksums: { 'v3.23.3': 'd25f5c9f', 'v3.23.2': '4e2e4c5d' },
};

const TEMPLATES: string[] = [
  // v2.25.0 roles/kubespray-defaults/defaults/main/download.yml:133 (a wrong reading gives v1.2)
  "{{ kube_version | regex_replace('^v([0-9])+\\.([0-9]+)\\.[0-9]+', 'v\\1.\\2') }}",
  // v2.25.0 roles/kubespray-defaults/defaults/main/download.yml:187
  "youki_{{ youki_version | regex_replace('\\.', '_') }}_linux.tar.gz",
  // v2.25.0 roles/kubespray-defaults/defaults/main/main.yml:564
  "https://{{ kube_apiserver_bind_address | regex_replace('0\\.0\\.0\\.0', '127.0.0.1') }}:6443",
  // v2.25.0 roles/kubespray-defaults/defaults/main/download.yml:301
  "{{ coredns_version if (coredns_image_is_namespaced | bool) else (coredns_version | regex_replace('^v', '')) }}",
  // v2.25.0 roles/kubernetes/preinstall/tasks/0120-growpart-azure-centos-7.yml:19-20
  "{{ _root_device | first | regex_replace('([^0-9]+)[0-9]+', '\\1') }}",
  "{{ _root_device | first | regex_replace('[^0-9]+([0-9]+)', '\\1') }}",
  // a variant of sysctl_file (a wrong reading gives 1/60-2)
  "{{ sysctl_file_path | regex_replace('^(/etc/sysctl.d)/99-(.*)$', '\\1/60-\\2') }}",
  "{{ sysctl_file_path | regex_replace('(?P<dir>.*)/(?P<base>[^/]+)$', '\\g<base> in \\g<dir>') }}",
  // v2.31.0 roles/kubernetes/preinstall/vars/main.yml:5 (the method) and the split filter
  "{{ manual_dns_server.split(',') }}",
  "{{ manual_dns_server | split(',') }}",
  "{{ manual_dns_server | ansible.builtin.split(',') | last }}",
  // v2.31.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:66
  "{{ ansible_kernel.split('-')[0] is version('4.9.17', '>=') }}",
  // v2.31.0 roles/kubernetes/node/defaults/main.yml:4 and :33-34
  "{{ main_ips | join(',') }}",
  "{% for host in (groups['k8s_cluster'] | union(groups['etcd'])) %}{{ host }}{{ ' ' if not loop.last else '' }}{% endfor %}",
  // v2.31.0 roles/kubernetes/preinstall/vars/main.yml:18
  '{{ ([nameservers, cloud_resolver] | flatten | unique) if dns_early else [] }}',
  // v2.31.0 roles/kubespray_defaults/defaults/main/main.yml:53 (the cilium test), 715, 782
  "{{ kube_network_plugin == 'cilium' or (cilium_kube_proxy_replacement | bool) or (cilium_kube_proxy_replacement | string | lower == 'true') }}",
  "{{ etcd_access_addresses_list | join(';') }}",
  "{{ proxy_env_defaults | combine({'SSL_CERT_FILE': '/etc/ssl/x.pem'}) }}",
  // v2.25.0 roles/kubernetes/preinstall/tasks/0090-etchosts.yml:52 (a block: Jinja2 decodes its literal's \t)
  "{% for line in text.split('\\n') %}[{{ (line | regex_replace('[ \\t]+', ' ') | regex_replace('#.*$') | trim).split(' ') | join('|') }}]{% endfor %}",
  "{% set s = 'a\\tb' %}{{ s | length }}",
  "{% if 'a\\x41' == 'aA' %}yes{% else %}no{% endif %}",
  // literals inside {{ }}: Ansible keeps the backslashes
  "{{ 'a\\tb' }}",
  "{{ 'C:\\new' | length }}",
  // filters and tests kubespray uses, against Jinja2/ansible's
  '{{ list_mixed | unique }}',
  '{{ list_mixed | unique(case_sensitive=true) }}',
  '{{ list_mixed | sort }}',
  '{{ list_mixed | sort(reverse=true, case_sensitive=true) }}',
  "{{ list_mixed | difference(['a']) }}",
  "{{ list_mixed | intersect(['a', 'b', 'c']) }}",
  "{{ list_mixed | select('match', '[ab]') | list }}",
  "{{ list_mixed | map('lower') | list }}",
  '{{ nested | flatten }}',
  '{{ nested | flatten(levels=1) }}',
  "{{ text | regex_findall('node[0-9]') }}",
  "{{ text | regex_findall('(node)([0-9])') }}",
  "{{ text | regex_search('node([0-9])', '\\1') }}",
  "{{ text | regex_search('^#.*$', multiline=true) }}",
  '{{ b64 | b64decode }}',
  "{{ 'hello world' | b64encode }}",
  '{{ text | indent(2) }}',
  "{{ '  x  ' | trim }}|",
  "{{ 'aXbXc' | replace('X', '-', 1) }}",
  "{{ {'a': 1, 'b': [true, none]} | to_json }}",
  '{{ \'{"a": [1, 2]}\' | from_json }}',
  '{{ yaml_text | from_yaml }}',
  "{{ groups | dict2items | map(attribute='key') | list }}",
  "{{ [] | ternary('full', 'empty') }}",
  "{{ empty | default('dflt', true) }}",
  "{{ 'b' in 'abc' }} {{ 'ab' is in 'xabc' }} {{ 1 in [1.0] }}",
  "{{ none | string }} {{ true | string }} {{ [1, 'a'] | string }}",
  "{{ kube_version is match('v1\\.29') }} {{ kube_version is search('29') }} {{ kube_version is regex('^v') }}",
  "{{ 10 is divisibleby 5 }} {{ true is number }} {{ 'a' is string }} {{ groups is mapping }} {{ none is none }}",
  '{{ [1, 2] | max }} {{ [3, 1] | min }} {{ [1, 2, 3] | sum }}',
  "{{ 'a b  c' | split }}",
  "{{ 'node1' | upper }} {{ 'NoDe' | lower }} {{ 'abc' | reverse }}",
  '{{ (list_mixed | first) ~ (list_mixed | last) }}',
  "{{ '/etc/sysctl.d/99-sysctl.conf' | dirname }} {{ '/etc/sysctl.d/99-sysctl.conf' | basename }}",
  // ansible.utils.ipwrap, as kubespray_defaults wraps main_ip/access_ip (v2.31.0 roles/kubespray_defaults/defaults/main/main.yml)
  '{{ main_ips | ansible.utils.ipwrap }}',
  "{{ ['192.0.2.10/24', '2001:DB8:0:0:1:0:0:1', '1:0:0:2:0:0:0:3/64', '::', 'node1', '0:0:0:0:0:0:0:1'] | ansible.utils.ipwrap }}",
  "{{ '2001:db8:0:1:1:1:1:1' | ipwrap }}",
  // ansible.utils.ipaddr as kubespray_defaults uses it (v2.31.0 roles/kubespray_defaults/defaults/main/main.yml:152, 296;
  // v2.25.0 roles/kubespray-defaults/defaults/main/main.yml: ipaddr('net'), ipaddr('prefix'), ipaddr(kube_service_addresses))
  "{{ kube_service_subnets.split(',') | first | ansible.utils.ipaddr('net') | ansible.utils.ipaddr(3) | ansible.utils.ipaddr('address') }}",
  "{{ kube_service_subnets.split(',') | first | ansible.utils.ipaddr('net') | ansible.utils.ipaddr(1) | ansible.utils.ipaddr('address') }}",
  "{{ kube_service_addresses | ipaddr('net') | ipaddr(4) | ipaddr('address') }}",
  "{{ kube_pods_subnet | ipaddr('prefix') }} {{ '10.233.64.0/18' | ipaddr('net') }} {{ '10.233.64.1/18' | ipaddr('net') }}",
  "{{ '10.233.0.5' | ipaddr(kube_service_addresses) }} {{ '10.234.0.5' | ipaddr(kube_service_addresses) }}",
  "{{ ['192.0.2.1', 'node1', '10.0.0.0/8', '192.0.2.0/24'] | ipaddr('address') }}",
  "{{ '192.0.2.7/24' | ipaddr }} {{ '192.0.2.7/24' | ipaddr('network') }} {{ '192.0.2.0/30' | ipaddr(-1) }} {{ '192.0.2.0/30' | ipaddr(9) }}",
  "{{ '192.0.2.1' | ipaddr('address') }} {{ '192.0.2.0/31' | ipaddr('address') }} {{ 'node1' | ipaddr }}",
  // IPv6 (an IPv6-only or IPv6-first cluster): master roles/kubespray_defaults/defaults/main/main.yml:156-157, 304
  // (skydns_server, kube_apiserver_ip) and roles/kubernetes/preinstall/vars/main.yml:21 (configured_nameservers)
  "{{ kube_service_subnets_v6.split(',') | first | ansible.utils.ipaddr('net') | ansible.utils.ipaddr(3) | ansible.utils.ipaddr('address') }}",
  "{{ kube_service_subnets_v6.split(',') | first | ansible.utils.ipaddr('net') | ansible.utils.ipaddr(1) | ansible.utils.ipaddr('address') }}",
  "{{ kube_service_subnets.split(',') | last | ipaddr('net') | ipaddr(4) | ipaddr('address') }}",
  "{{ resolv_conf | regex_findall('^nameserver\\s*(\\S*)', multiline=True) | ansible.utils.ipaddr }}",
  "{{ '::ffff:0:5' | ipaddr }} {{ '::5' | ipaddr }} {{ '::ffff:0:0/96' | ipaddr(5) }} {{ '1:0:0:0:0:0:0:0' | ipaddr }} {{ '1:2:3:4:5:6:7::' | ipaddr }} {{ '2001:DB8::/32' | ipaddr }}",
  "{{ '2001:db8::1/64' | ipaddr('address') }} {{ '2001:db8::/64' | ipaddr('address') }} {{ '2001:db8::/127' | ipaddr('address') }} {{ '2001:db8::1/64' | ipaddr('net') }} {{ '2001:db8::1/64' | ipaddr('network') }}",
  "{{ '2001:db8::/64' | ipaddr(-1) }} {{ '2001:db8::/126' | ipaddr(4) }} {{ '2001:db8::5/128' | ipaddr(0) }} {{ '2001:db8::5' | ipaddr(0) }} {{ '2001:db8::/126' | ipaddr(-4) }}",
  "{{ '2001:db8::5' | ipaddr('2001:db8::/64') }} {{ '2001:db8::5' | ipaddr('10.0.0.0/8') }} {{ '10.0.0.5' | ipaddr('2001:db8::/64') }} {{ '2001:db8::/48' | ipaddr('2001:db8::/64') }} {{ '2001:db8::/64' | ipaddr('2001:db8::/48') }}",
  "{{ ['2001:db8::1', '2001:db8::/64', 'node1', '192.0.2.0/24'] | ipaddr('address') }} {{ ['::/0', '10.0.0.0/8'] | ipaddr('prefix') }} {{ '::' | ipaddr('prefix') }} {{ 'fe80::1:2' | ipaddr('net') }}",
  // master roles/kubespray_defaults/defaults/main/main.yml:572 (a chained conditional expression)
  // (master's kube_version has no leading v; a v here fails in ansible too: 'v' < 1)
  "{% set kube_version = kube_version | regex_replace('^v', '') %}{{ 'v1alpha1' if kube_version is version('1.30.0', '<') else 'v1beta1' if kube_version is version('1.32.0', '<') else 'v1' }}",
  "{{ 'a' if false else 'b' if false else 'c' if true else 'd' }}",
  // extract, as kubespray's defaults use it (groups[...] | map('extract', hostvars, ...))
  "{{ ['kube_control_plane', 'etcd'] | map('extract', groups) | list }}",
  "{{ 'etcd' | extract(groups, 1) }}",
  // v2.24.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:48, the item as with_items templates it
  "{{ download_run_once | type_debug == 'bool' }} {{ (download_always_pull | bool) | type_debug }}",
  '{{ none | type_debug }} {{ 1.5 | type_debug }} {{ (3 > 2) | type_debug }}',
  // v2.20.0 roles/network_plugin/calico/tasks/check.yml:39 (dict methods)
  '{{ calico_version in calico_crds_archive_checksums.keys() }} {{ calico_crds_archive_checksums.values() | list }} {{ calico_crds_archive_checksums.items() | list | first | first }}',
];

describe('Jinja2 expressions (kubespray v2.20 .. master) as Templar renders them', () => {
  let oracle: Answer[];
  beforeAll(async () => {
    oracle = await ask(TEMPLATES.map((text) => ({ op: 'template' as const, text, vars: VARS })));
  }, 60_000);
  it('ansible rendered every case', () => {
    expect(oracle.filter((a) => !a.ok)).toEqual([]);
  });
  TEMPLATES.forEach((text, i) => {
    it(text, () => {
      const ours = templateValue(text, (n) => (Object.hasOwn(VARS, n) ? { value: VARS[n] } : undefined));
      const a = oracle[i]!;
      expect(ours.ok, ours.ok ? '' : ours.reason).toBe(true);
      if (!ours.ok || !a.ok) return;
      // Ansible 2.14 hands back text unless the result reads as a list or dict; compare what it printed.
      if (typeof a.value === 'string') expect(typeof ours.value === 'string' ? ours.value : String(pythonStr(ours.value))).toBe(a.value);
      else expect(shape(ours.value)).toEqual(unfloat(a.value));
    });
  });
});

describe('a method of an undefined dict names the undefined variable, as Ansible does', () => {
  // v2.20.0 roles/network_plugin/calico/tasks/check.yml:39 when the download role's defaults are not loaded
  const text = '{{ calico_version in undefined_checksums.keys() }}';
  it(
    text,
    async () => {
      const [a] = await ask([{ op: 'template', text, vars: VARS }]);
      expect(a!.ok).toBe(false);
      if (a!.ok) return;
      expect(a!.error).toContain("'undefined_checksums' is undefined");
      const ours = templateValue(text, (n) => (Object.hasOwn(VARS, n) ? { value: VARS[n] } : undefined));
      expect(ours.ok ? '' : ours.reason).toContain("'undefined_checksums' is undefined");
    },
    60_000,
  );
});

describe('a lookup plugin is unknown, named as a lookup (never "\'lookup\' is undefined")', () => {
  // master roles/kubespray_defaults/defaults/main/main.yml:509 and download.yml:69 (env on the controller; vars)
  const LOOKUPS = ["{{ lookup('env', 'OS_CACERT') }}", "{{ lookup('vars', 'kube_version') }}", "{{ query('env', 'HOME') | length > 0 }}"];
  let oracle: Answer[];
  beforeAll(async () => {
    oracle = await ask(LOOKUPS.map((text) => ({ op: 'template' as const, text, vars: VARS })));
  }, 60_000);
  LOOKUPS.forEach((text, i) => {
    it(text, () => {
      expect(oracle[i]!.ok).toBe(true); // ansible answers: lookup is defined there
      const ours = templateValue(text, (n) => (Object.hasOwn(VARS, n) ? { value: VARS[n] } : undefined));
      expect(ours.ok).toBe(false);
      if (ours.ok) return;
      expect(ours.reason).toMatch(/^(lookup|query)\("(env|vars)", \.\.\.\): an Ansible lookup plugin runs on the controller; not modelled$/);
    });
  });
});

describe('what ansible refuses is unknown, never an answer', () => {
  // type_debug where Python's type depends on what JS does not keep: str or AnsibleUnicode, int or float, list or tuple
  const BAD = [
    '{{ download_always_pull | type_debug }}',
    '{{ 3 | type_debug }}',
    '{{ [1] | type_debug }}',
    '{{ calico_crds_archive_checksums.keys() | type_debug }}',
    '{{ calico_crds_archive_checksums | type_debug }}',
    "{{ 'it\\'s' }}",
    '{{ undefined_thing | split(",") }}',
    "{{ 'abc' | split('') }}",
    '{{ [1, 2] | ipaddr }}',
    "{{ '2001:db8::1/064' | ipaddr }}",
    "{{ '::1.2.3.4' | ipaddr }}",
    "{{ 'fe80::1%eth0' | ipaddr }}",
    "{{ '10.1' | ipaddr }}",
    '{{ 3 | random }}',
    "{{ '10.1' | ansible.utils.ipwrap }}",
    "{{ 'cafe' | ipwrap }}",
  ];
  let oracle: Answer[];
  beforeAll(async () => {
    oracle = await ask(BAD.map((text) => ({ op: 'template' as const, text, vars: VARS })));
  }, 60_000);
  BAD.forEach((text, i) => {
    it(text, () => {
      const ours = templateValue(text, (n) => (Object.hasOwn(VARS, n) ? { value: VARS[n] } : undefined));
      if (oracle[i]!.ok)
        expect(ours.ok ? 'answer' : 'unknown').toBe('unknown'); // random and a collection filter: ansible answers something we do not model
      else expect(ours.ok).toBe(false);
    });
  });
});

// ---- free-form key=value ----------------------------------------------------------

const KV: [string, boolean][] = [
  ['name=net.ipv4.ip_forward value=1', false],
  ['name=net.ipv4.ip_forward value=1 sysctl_file={{ sysctl_file_path }} state=present reload=yes', false],
  ['name=br_netfilter state=present', false],
  ['name="a b" value=\'c d\' x="{{ foo | default("x y") }}"', false],
  ['msg={{ a }} {{ b }} other=1', false],
  ['a=b\\=c d\\=e', false],
  ['k="v\\"q" path=C:\\\\tmp t="a\\tb"', false],
  ['/sbin/swapoff -a', true],
  ['swapoff -a creates=/x chdir=/tmp', true],
  ['echo a=b removes=/y', true],
  ['echo "{{ x }} y" | tee /z', true],
  ['free words name=x', false],
  ['a=1\nb=2', false],
  ['line1 \\\n line2', true],
];

describe('parse_kv as ansible-core splits it', () => {
  let oracle: Answer[];
  beforeAll(async () => {
    oracle = await ask(KV.map(([text, check_raw]) => ({ op: 'kv' as const, text, check_raw })));
  }, 60_000);
  KV.forEach(([text, raw], i) => {
    it(`${raw ? 'check_raw ' : ''}${text}`, () => {
      const a = oracle[i]!;
      let ours: Answer;
      try {
        ours = { ok: true, value: parseKv(text, raw) };
      } catch (e) {
        ours = { ok: false, error: (e as Error).message };
      }
      expect(ours.ok).toBe(a.ok);
      if (ours.ok && a.ok) expect(ours.value).toEqual(a.value);
    });
  });
});

// Real kubespray tasks rewritten in free form, walked as the audit walks them and
// parsed by ansible-core's ModuleArgsParser (test/helpers/ansible-task-args.py).
const FREE_FORM_TASKS = [
  // v2.25.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml "Enable ip forwarding"
  { name: 'Enable ip forwarding', 'ansible.posix.sysctl': 'sysctl_file="{{ sysctl_file_path }}" name=net.ipv4.ip_forward value=1 state=present reload=yes' },
  // v2.25.0 roles/kubernetes/node/tasks/main.yml "Modprobe br_netfilter"
  { name: 'Modprobe br_netfilter', 'community.general.modprobe': 'name=br_netfilter state=present' },
  // the same with the old action: form
  { name: 'Enable ip forwarding (action)', action: 'sysctl name=net.ipv4.ip_forward value=1 sysctl_file=/etc/sysctl.d/99-sysctl.conf' },
  { name: 'Modprobe (local_action dict)', action: { module: 'community.general.modprobe name=br_netfilter', state: 'present' } },
  // v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml "Disable swap"
  { name: 'Disable swap', command: '/sbin/swapoff -a creates=/nonexistent' },
];

describe('free-form task arguments as ModuleArgsParser reads them', () => {
  let root: string;
  let oracle: { parsed: ({ module: string; args: Record<string, unknown> } | { error: string })[] };
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ks-kv-'));
    const yaml = FREE_FORM_TASKS.map((t) => `- ${JSON.stringify(t)}`).join('\n');
    buildTree(root, { 'ks/roles/r/tasks/main.yml': `${yaml}\n` });
    const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-task-args.py')], { input: JSON.stringify(FREE_FORM_TASKS) });
    oracle = JSON.parse(r.stdout);
  }, 60_000);
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });
  it("each task gives ansible-core's module and arguments", async () => {
    const walked = await walkRole(new KubesprayCheckout(new Host({ root }), '/ks'), 'r');
    expect(walked.tasks.map((t) => ({ module: t.rawModule, args: t.args }))).toEqual(oracle.parsed);
  });
});

// ---- the audit over rewritten kubespray trees ---------------------------------------

const KS = '/opt/ks/kubespray';
const INV = '/root/inv';
const P = 'roles/kubernetes/preinstall';
const N = 'roles/kubernetes/node';

function tree(over: Record<string, string>): Record<string, string> {
  return {
    [`${KS}/roles/kubespray_defaults/defaults/main/main.yml`]:
      '---\nignore_assert_errors: false\nkubelet_fail_swap_on: true\nsysctl_file_path: /etc/sysctl.d/99-sysctl.conf\nkube_version: v1.29.5\n',
    [`${KS}/${P}/defaults/main.yml`]: '---\nminimal_master_memory_mb: 1500\n',
    [`${KS}/${P}/tasks/main.yml`]:
      '---\n- name: Disable swap\n  import_tasks: 0010-swapoff.yml\n  when: kubelet_fail_swap_on\n- name: System configurations\n  import_tasks: 0080-system-configurations.yml\n',
    [`${KS}/${P}/tasks/0010-swapoff.yml`]:
      '---\n- name: Mask swap.target\n  ansible.builtin.systemd_service:\n    name: swap.target\n    masked: true\n- name: Disable swap\n  command: /sbin/swapoff -a\n',
    [`${KS}/${P}/tasks/0080-system-configurations.yml`]:
      '---\n- name: Enable ip forwarding\n  ansible.posix.sysctl:\n    sysctl_file: "{{ sysctl_file_path }}"\n    name: net.ipv4.ip_forward\n    value: "1"\n',
    [`${KS}/${N}/tasks/main.yml`]:
      '---\n- name: Modprobe br_netfilter\n  community.general.modprobe:\n    name: br_netfilter\n    state: present\n- name: Persist\n  copy:\n    dest: /etc/modules-load.d/kubespray-br_netfilter.conf\n    content: br_netfilter\n',
    [`${INV}/inventory.ini`]: '[kube_control_plane]\nnode1\n\n[kube_node]\nnode1\n\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n',
    ...over,
  };
}

const FACTS = { memtotal_mb: 1978, processor_vcpus: 2, distribution: 'Debian', distribution_version: '12', kernel: '6.1.0-31-amd64' };
const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});
async function audit(files: Record<string, string>, facts: Record<string, unknown> = FACTS) {
  const root = await mkdtemp(path.join(tmpdir(), 'ks-lang-'));
  temps.push(root);
  buildTree(root, Object.fromEntries(Object.entries(files).map(([k, v]) => [k.replace(/^\//, ''), v])));
  const host = new Host({ root });
  const ck = new KubesprayCheckout(host, KS);
  const inv = parseInventory((await host.readFile(`${INV}/inventory.ini`))!, `${INV}/inventory.ini`);
  const opts = { facts, host: { inventory: inv, inventoryDir: INV, host: 'node1' }, reader: targetVarsReader(host) };
  return { who: await auditWhoFixes(ck, opts), memory: await auditMemory(ck, opts) };
}

describe('rewrites of real kubespray tasks and vars, verdicts as ansible-core reads them', () => {
  // What ansible-core makes of each rewritten value decides the expected verdict.
  let loaded: Answer[];
  let rendered: Answer[];
  beforeAll(async () => {
    loaded = await ask([
      { op: 'yaml', text: 'kubelet_fail_swap_on: no\n' },
      { op: 'yaml', text: '- name: Disable swap\n  import_tasks: 0010-swapoff.yml\n  when: off\n' },
      { op: 'yaml', text: 'kubelet_fail_swap_on: n\n' },
    ]);
    rendered = await ask([{ op: 'template', text: "{{ 'v1.29.5' | regex_replace('^v([0-9])+\\.([0-9]+)\\.[0-9]+', '/etc/sysctl.d/\\1\\2-k8s.conf') }}" }]);
  }, 60_000);

  it('the unchanged tree: kubespray fixes swap, ip_forward and br_netfilter (so each rewrite below changes a verdict or keeps it for a reason)', async () => {
    const { who } = await audit(tree({}));
    expect([who.swap.who, who.ip_forward.who, who.br_netfilter.who]).toEqual(['kubespray', 'kubespray', 'kubespray']);
  });

  it("group_vars kubelet_fail_swap_on: no (YAML 1.1 false): swap is the operator's", async () => {
    expect((loaded[0] as { value: unknown }).value).toEqual({ kubelet_fail_swap_on: false });
    const { who } = await audit(tree({ [`${INV}/group_vars/all/all.yml`]: 'kubelet_fail_swap_on: no\n' }));
    expect(who.swap.who).toBe('operator');
  });

  it("when: off on the swapoff import (YAML 1.1 false): swap is the operator's", async () => {
    expect((loaded[1] as { value: Record<string, unknown>[] }).value[0]!.when).toBe(false);
    const { who } = await audit(tree({ [`${KS}/${P}/tasks/main.yml`]: '---\n- name: Disable swap\n  import_tasks: 0010-swapoff.yml\n  when: off\n' }));
    expect(who.swap.who).toBe('operator');
  });

  it('group_vars kubelet_fail_swap_on: n is the string "n" to ansible (truthy): kubespray still disables swap', async () => {
    expect((loaded[2] as { value: unknown }).value).toEqual({ kubelet_fail_swap_on: 'n' });
    const { who } = await audit(tree({ [`${INV}/group_vars/all/all.yml`]: 'kubelet_fail_swap_on: n\n' }));
    expect(who.swap.who).toBe('kubespray');
  });

  it("sysctl in free form (name=... value=1): ip_forward is kubespray's, in its sysctl_file", async () => {
    const { who } = await audit(
      tree({
        [`${KS}/${P}/tasks/0080-system-configurations.yml`]:
          '---\n- name: Enable ip forwarding\n  ansible.posix.sysctl: sysctl_file="{{ sysctl_file_path }}" name=net.ipv4.ip_forward value=1 state=present\n',
      }),
    );
    expect(who.ip_forward.who).toBe('kubespray');
    expect(who.sysctl_file?.path).toBe('/etc/sysctl.d/99-sysctl.conf');
  });

  it("modprobe in free form and through action:: br_netfilter is kubespray's", async () => {
    for (const task of ['community.general.modprobe: name=br_netfilter state=present', 'action: community.general.modprobe name=br_netfilter state=present']) {
      const { who } = await audit(
        tree({
          [`${KS}/${N}/tasks/main.yml`]: `---\n- name: Modprobe br_netfilter\n  ${task}\n- name: Persist\n  copy:\n    dest: /etc/modules-load.d/kubespray-br_netfilter.conf\n    content: br_netfilter\n`,
        }),
      );
      expect(who.br_netfilter.who, task).toBe('kubespray');
    }
  });

  it('sysctl_file_path from a regex_replace back-reference (a variant of kube_major_version): the file ansible computes', async () => {
    const want = (rendered[0] as { value: string }).value;
    const { who } = await audit(
      tree({
        [`${KS}/roles/kubespray_defaults/defaults/main/main.yml`]:
          "---\nignore_assert_errors: false\nkubelet_fail_swap_on: true\nkube_version: v1.29.5\nsysctl_file_path: \"{{ kube_version | regex_replace('^v([0-9])+\\\\.([0-9]+)\\\\.[0-9]+', '/etc/sysctl.d/\\\\1\\\\2-k8s.conf') }}\"\n",
      }),
    );
    expect(who.sysctl_file?.path).toBe(want);
  });

  it('facts beyond the six (ansible_os_family, ansible_architecture, as setup reports them on Debian): conditions on them are decided', async () => {
    // The native facts of a Debian 12 x86_64 host (test/facts/native.test.ts compares them with `ansible -m setup`).
    const facts = factMap({ ...FACTS, default_ipv4: null, extra: { os_family: 'Debian', system: 'Linux', architecture: 'x86_64', machine: 'x86_64' } });
    const sysctl = (when: string) => ({
      [`${KS}/${P}/tasks/0080-system-configurations.yml`]: `---\n- name: Enable ip forwarding\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n  when: ${when}\n`,
    });
    expect((await audit(tree(sysctl("ansible_os_family == 'Debian' and ansible_architecture in ['x86_64', 'aarch64']")), facts)).who.ip_forward.who).toBe(
      'kubespray',
    );
    expect((await audit(tree(sysctl("ansible_os_family == 'RedHat'")), facts)).who.ip_forward.who).toBe('operator');
    // A fact no source reported stays undefined: unknown, never false.
    expect((await audit(tree(sysctl("ansible_pkg_mgr == 'apt'")), facts)).who.ip_forward.who).toBe('unknown');
  });
});
