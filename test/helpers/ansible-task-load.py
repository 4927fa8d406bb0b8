# ansible-core's loading of task mappings, the oracle for what the task walk
# (src/kubespray/tasks.ts) refuses: a mapping Block.is_block calls a block is
# loaded as a Block, an include_tasks/include_role as TaskInclude/IncludeRole,
# anything else as a Task. Reads a JSON list of mappings on stdin, prints
# {"loaded": [{"refused": message or null, "args": the module's arguments}],
#  "block_keywords": Block's attributes}.
import json, sys
from ansible.parsing.dataloader import DataLoader
from ansible.parsing.mod_args import ModuleArgsParser
from ansible.playbook.block import Block
from ansible.playbook.role_include import IncludeRole
from ansible.playbook.task import Task
from ansible.playbook.task_include import TaskInclude

loader = DataLoader()
loaded = []
for ds in json.load(sys.stdin):
    out = {'refused': None, 'args': None}
    try:
        if Block.is_block(ds):
            Block.load(ds, loader=loader)
        else:
            action, args, _delegate = ModuleArgsParser(ds).parse()
            out['args'] = args
            if action.split('.')[-1] == 'include_role' or action.split('.')[-1] == 'import_role':
                IncludeRole.load(ds, loader=loader)
            elif action.split('.')[-1] in ('include_tasks', 'import_tasks', 'include'):
                TaskInclude.load(ds, loader=loader)
            else:
                Task.load(ds, loader=loader)
    except Exception as e:
        out['refused'] = str(e).split('\n')[0]
    loaded.append(out)
print(json.dumps({'loaded': loaded, 'block_keywords': sorted(Block.fattributes)}))
