# A callback for the walk oracle (test/helpers/ansible-walk-oracle.ts): one
# JSON line per task result of the roles under test, with where the task is
# written, whether it ran, the arguments the module received (the stub
# modules echo them) and whether it ran in check mode.
import json, os
from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'record'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._out = open(os.environ['WALK_ORACLE_OUT'], 'a')

    def _emit(self, result, status):
        task = result._task
        r = result._result
        rec = {
            'path': task.get_path(),
            'name': task.get_name(),
            'action': task.action,
            'status': status,
            'args': r.get('stub_args'),
            'check_mode': r.get('stub_check_mode'),
            'msg': r.get('msg') if status == 'failed' else None,
            'item': r.get('item') if 'item' in r else None,
        }
        self._out.write(json.dumps(rec, default=str) + '\n')
        self._out.flush()

    def v2_runner_on_ok(self, result):
        self._emit(result, 'ok')

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._emit(result, 'failed')

    def v2_runner_on_skipped(self, result):
        self._emit(result, 'skipped')

    def v2_runner_item_on_ok(self, result):
        self._emit(result, 'ok')

    def v2_runner_item_on_skipped(self, result):
        self._emit(result, 'skipped')

    def v2_runner_item_on_failed(self, result):
        self._emit(result, 'failed')
