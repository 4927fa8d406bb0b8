# Copyright: k8s-host-reconcile developers
# Apache License 2.0 (see LICENSE)
"""The plan's changes as Ansible diffs, so `--check --diff` shows them.

The CLI already says, per change, the file and its bytes before and after (the
plan document's resources[].changes[]); Ansible's callbacks print a task
result's `diff` (a list of before/after/header dicts, or `prepared` text) when
the task is changed and --diff is on. This runs on the controller, reads only
the document it is given, and touches no host.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

# A change the tool makes without a file of its own: shown as the plan's line, never as a file diff.
_NOT_FILES = ("runtime", "stop", "disable", "mask", "move")

ARGUMENT_SPEC = {
    "document": {"type": "dict", "required": True},
    "mode": {"type": "str", "required": True, "choices": ["plan", "apply"]},
}


def _text(value):
    return "" if value is None else str(value)


def change_diff(resource, change):
    """One change as one Ansible diff dict, or None for what apply does not change (operator, deferred)."""
    action = change.get("action")
    if change.get("operator") is not None or change.get("deferred") or action in ("operator", "deferred"):
        return None
    path = change.get("path")
    if path is None or action in _NOT_FILES:
        return {"prepared": "%s: %s\n" % (resource, _text(change.get("summary")))}
    before = _text(change.get("before"))
    after = _text(change.get("after"))
    # Ansible prints these as "--- before: HEADER" and "+++ after: HEADER".
    # A credential's line is already "(sensitive value N)" in the document (src/redact.ts): say so in the header.
    note = " (credentials redacted)" if change.get("redacted") else ""
    return {
        "before_header": (path if action != "create" else "%s (absent)" % path) + note,
        "after_header": (path if action != "delete" else "%s (removed)" % path) + note,
        "before": before,
        "after": after,
    }


def plan_diffs(document, mode):
    """The diffs of a plan document's changes; in an apply document, only the changes apply carried out."""
    carried = None
    if mode == "apply":
        carried = {}
        for applied in document.get("applied") or []:
            carried.setdefault(applied.get("resource"), set()).update(applied.get("changes") or [])
    diffs = []
    for resource in document.get("resources") or []:
        name = _text(resource.get("name"))
        for change in resource.get("changes") or []:
            if carried is not None and change.get("id") not in carried.get(name, ()):
                continue
            diff = change_diff(name, change)
            if diff is not None:
                diffs.append(diff)
    return diffs


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        diffs = plan_diffs(args["document"], args["mode"])
        result["changed"] = bool(diffs)
        result["diff"] = diffs
        result["changes"] = len(diffs)
        return result
