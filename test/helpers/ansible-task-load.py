# ansible-core's loading of task mappings, the oracle for what the task walk
# (src/kubespray/tasks.ts) refuses: a mapping Block.is_block calls a block is
# loaded as a Block, an include_tasks/include_role as TaskInclude/IncludeRole,
# anything else as a Task. Reads a JSON list of mappings on stdin, prints
# {"loaded": [{"refused": message or null, "args": the module's arguments,
#              "vars": the vars it loaded}],
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
    out = {'refused': None, 'args': None, 'vars': None}
    try:
        if Block.is_block(ds):
            out['vars'] = Block.load(ds, loader=loader).vars
        else:
            action, args, _delegate = ModuleArgsParser(ds).parse()
            out['args'] = args
            if action.split('.')[-1] == 'include_role' or action.split('.')[-1] == 'import_role':
                out['vars'] = IncludeRole.load(ds, loader=loader).vars
            elif action.split('.')[-1] in ('include_tasks', 'import_tasks', 'include'):
                out['vars'] = TaskInclude.load(ds, loader=loader).vars
            else:
                out['vars'] = Task.load(ds, loader=loader).vars
        out['vars'] = dict(out['vars'])
    except Exception as e:
        out['refused'] = str(e).split('\n')[0]
    loaded.append(out)
print(json.dumps({'loaded': loaded, 'block_keywords': sorted(Block.fattributes)}))
