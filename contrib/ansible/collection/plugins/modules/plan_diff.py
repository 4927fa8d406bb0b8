#!/usr/bin/python
# Copyright: k8s-host-reconcile developers
# Apache License 2.0 (see LICENSE)
# The documentation of the plan_diff action (plugins/action/plan_diff.py does the work, on the controller).
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: plan_diff
short_description: Show a k8s-host-reconcile plan's changes as Ansible diffs
version_added: "0.1.0"
description:
  - Turns the changes of a C(k8s-host-reconcile) plan or apply document (C(--json)) into the task's C(diff),
    so C(ansible-playbook --check --diff) prints each file's lines before and after, and each runtime change,
    stop, disable or mask as the plan's own line.
  - Operator lines and deferred changes are not changes the tool makes, and get no diff.
  - Runs on the controller and reads only I(document).
options:
  document:
    description: The parsed JSON document the CLI printed (C(plan --json) or C(apply --json)).
    type: dict
    required: true
  mode:
    description: C(plan) shows every pending change; C(apply) only those the document lists as carried out.
    type: str
    required: true
    choices: [plan, apply]
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
author:
  - k8s-host-reconcile developers
"""

EXAMPLES = r"""
- name: Show the plan's changes as diffs under --diff
  k8s_host_reconcile.k8s_host_reconcile.plan_diff:
    document: "{{ reconcile_result.document }}"
    mode: plan
  when: ansible_diff_mode
"""

RETURN = r"""
changes:
  description: How many diffs the document gave.
  returned: always
  type: int
  sample: 3
"""

if __name__ == "__main__":
    raise SystemExit("plan_diff is an action: it runs on the controller, not on a host")
