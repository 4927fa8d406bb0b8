# ansible-core's own reading of the language the kubespray audit evaluates,
# the oracle for src/ansible/yaml11.ts, jinja.ts and kv-args.ts. Reads a JSON
# list of requests on stdin, prints one answer per request:
#   {op: yaml, text}            -> AnsibleLoader (PyYAML's YAML 1.1 resolver) loads it
#   {op: template, text, vars}  -> Templar.template (Jinja2 with Ansible's filters, tests, backslash rule)
#   {op: kv, text, check_raw}   -> ansible.parsing.splitter.parse_kv
# Answers are {ok: true, value} or {ok: false, error}; a float comes back as {"float": repr}.
import datetime, json, math, sys
from ansible.parsing.yaml.loader import AnsibleLoader
from ansible.parsing.splitter import parse_kv
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

def plain(v):
    if isinstance(v, bool) or v is None or isinstance(v, int) or isinstance(v, str):
        return v if not isinstance(v, str) else str(v)
    if isinstance(v, float):
        return {'float': repr(v)}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (datetime.date, datetime.datetime)):
        return {'date': v.isoformat()}
    return {'type': type(v).__name__, 'repr': repr(v)}

loader = DataLoader()
out = []
for req in json.load(sys.stdin):
    try:
        if req['op'] == 'yaml':
            value = AnsibleLoader(req['text']).get_single_data()
        elif req['op'] == 'template':
            value = Templar(loader=loader, variables=req.get('vars', {})).template(req['text'])
        elif req['op'] == 'kv':
            value = parse_kv(req['text'], check_raw=req.get('check_raw', False))
        else:
            raise ValueError(req['op'])
        out.append({'ok': True, 'value': plain(value)})
    except Exception as e:
        out.append({'ok': False, 'error': type(e).__name__ + ': ' + str(e).split('\n')[0]})
print(json.dumps(out))
