#!/usr/bin/python
# A module that changes nothing: it echoes the arguments it was given and
# whether it runs in check mode, so the oracle records what Ansible would
# have passed to the real module without running it on this machine.
import json
import sys
from ansible.module_utils.basic import _load_params

params = _load_params()
args = dict((k, v) for k, v in params.items() if not k.startswith('_ansible_'))
# `stat` is what the copy and template actions ask first: the file is absent.
print(json.dumps({'changed': False, 'stub_args': args, 'stub_check_mode': bool(params.get('_ansible_check_mode', False)), 'stat': {'exists': False}}))
sys.exit(0)
