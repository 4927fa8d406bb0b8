#!/usr/bin/python
# Sets the facts the test gives (as ansible -m setup would report them), so the
# oracle needs nothing from this machine.
import json
import sys
from ansible.module_utils.basic import _load_params

params = _load_params()
# setup reports ansible_-prefixed names; Ansible keeps them unprefixed in ansible_facts and as ansible_X vars.
facts = dict(('ansible_' + k, v) for k, v in (params.get('facts') or {}).items())
print(json.dumps({'changed': False, 'ansible_facts': facts}))
sys.exit(0)
