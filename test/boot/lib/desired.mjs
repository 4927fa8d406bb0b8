// The desired state a container host gets (boot farm, fleet): no SwapOff or
// ModulesLoad, because swap and modules belong to this machine's kernel,
// which the containers share; ip_forward is per network namespace.
export function containerDesired(reportsDir) {
  return [
    `reports_dir: ${reportsDir}`,
    'resources:',
    '  - type: SysctlFile',
    '    file: /etc/sysctl.d/k8s.conf',
    '    settings:',
    '      net.ipv4.ip_forward: 1',
    '    conflict_policy: resolve',
    '  - type: PortFree',
    '    ports: [2379, 2380, 6443, 10250, 10257, 10259]',
    '    protected_units: []',
    '    stop_spawner_units: []',
    '    mask: auto',
    '    timeout_seconds: 30',
    '',
  ].join('\n');
}
