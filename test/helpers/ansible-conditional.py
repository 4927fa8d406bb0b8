# Evaluates conditions with ansible-core itself (Conditional + Templar), the oracle
# for src/ansible/jinja.ts. Reads [{expr, vars}] on stdin, prints [{ok, value|error}].
import json, sys
from ansible.template import Templar
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.conditional import Conditional
req = json.load(sys.stdin)
loader = DataLoader()
out = []
for case in req:
    templar = Templar(loader=loader, variables=case['vars'])
    c = Conditional(loader=loader)
    c.when = [case['expr']]
    try:
        out.append({'ok': True, 'value': bool(c.evaluate_conditional(templar, case['vars']))})
    except Exception as e:
        out.append({'ok': False, 'error': type(e).__name__ + ': ' + str(e).split('\n')[0]})
print(json.dumps(out))
