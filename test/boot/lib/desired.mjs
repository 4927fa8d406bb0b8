// The desired state a container host gets (boot farm, fleet): no SwapOff or
// ModulesLoad, because swap and modules belong to this machine's kernel,
// which the containers share; ip_forward is per network namespace. `extra`:
// resource blocks an entry adds (a catalogue entry's `desired`, each a list
// of YAML lines), before PortFree, so they apply first; `portFree`: list keys
// entries add to PortFree itself (an opt-in such as stop_containers), each
// key once with the items of every entry that names it (a YAML mapping holds
// a key once: two entries' own lines would make the desired state invalid).
export function containerDesired(reportsDir, extra = [], portFree = {}) {
  return [
    `reports_dir: ${reportsDir}`,
    'resources:',
    '  - type: SysctlFile',
    '    file: /etc/sysctl.d/k8s.conf',
    '    settings:',
    '      net.ipv4.ip_forward: 1',
    '    conflict_policy: resolve',
    ...extra.flat(),
    '  - type: PortFree',
    '    ports: [2379, 2380, 6443, 10250, 10257, 10259]',
    '    protected_units: []',
    '    stop_spawner_units: []',
    '    mask: auto',
    '    timeout_seconds: 30',
    ...Object.entries(portFree).map(([key, items]) => `    ${key}: [${items.map((i) => JSON.stringify(i)).join(', ')}]`),
    '',
  ].join('\n');
}
