# ansible-core's own reading of a task mapping, the oracle for the task walk
# (src/kubespray/tasks.ts): ModuleArgsParser splits it into module and
# arguments, Task's attributes are the keywords a task may carry. Reads a JSON
# list of task mappings on stdin, prints {keywords, parsed: [{module, args} | {error}],
# blocks: [whether Ansible reads the mapping as a block]}.
import json, sys
from ansible.parsing.mod_args import ModuleArgsParser
from ansible.playbook.task import Task
from ansible.playbook.handler import Handler
from ansible.playbook.block import Block

parsed = []
blocks = []
for ds in json.load(sys.stdin):
    blocks.append(Block.is_block(ds))
    try:
        action, args, _delegate = ModuleArgsParser(ds).parse()
        parsed.append({'module': action, 'args': args})
    except Exception as e:
        parsed.append({'error': type(e).__name__ + ': ' + str(e).split('\n')[0]})
keywords = sorted(set(Task.fattributes) | set(Handler.fattributes) | {'local_action'})
print(json.dumps({'keywords': keywords, 'parsed': parsed, 'blocks': blocks}))
