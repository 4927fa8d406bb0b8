# ansible-core's own ServiceMgrFactCollector and PkgMgrFactCollector (and
# Distribution's Debian release rule through DistributionFiles) run over a
# described file system instead of this machine's: the oracle for
# src/facts/managers.ts. Reads a JSON list of cases on stdin:
#   {proc1: str|null, sbin_init: str|null, paths: [...], os_family: str}
# paths: the paths that exist (a trailing / for a directory). Prints one
# {service_mgr, pkg_mgr} per case; null where the collector would run a
# command (ps, rpm) the case does not describe.
import json, os, sys
import ansible.module_utils.facts.system.service_mgr as sm
import ansible.module_utils.facts.system.pkg_mgr as pm

class Ran(Exception):
    pass

class FakeModule:
    def __init__(self, paths):
        self.paths = paths
    def get_bin_path(self, name, required=False, opt_dirs=None):
        for d in ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']:
            if d + '/' + name in self.paths:
                return d + '/' + name
        return None
    def run_command(self, *a, **k):
        raise Ran()

out = []
for case in json.load(sys.stdin):
    paths = set(p.rstrip('/') for p in case['paths'])
    dirs = set(p.rstrip('/') for p in case['paths'] if p.endswith('/'))
    def exists(p, paths=paths, dirs=dirs):
        return (p.rstrip('/') in dirs) if p.endswith('/') else p in paths
    os.path.exists = exists
    os.path.islink = lambda p, case=case: p == '/sbin/init' and case['sbin_init'] is not None
    os.readlink = lambda p, case=case: case['sbin_init']
    sm.get_file_content = lambda p, default=None, strip=True, case=case: (case['proc1'].strip() or None) if (p == '/proc/1/comm' and case['proc1'] is not None) else default
    r = {}
    try:
        r['service_mgr'] = sm.ServiceMgrFactCollector().collect(module=FakeModule(paths), collected_facts={'ansible_system': 'Linux', 'ansible_distribution': 'Debian'})['service_mgr']
    except Ran:
        r['service_mgr'] = None
    if '/usr/bin/rpm' in paths:
        r['pkg_mgr'] = None
    else:
        r['pkg_mgr'] = pm.PkgMgrFactCollector().collect(collected_facts={'ansible_os_family': case['os_family']})['pkg_mgr']
    out.append(r)
print(json.dumps(out))
