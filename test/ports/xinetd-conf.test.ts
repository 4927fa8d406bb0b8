// xinetd's service blocks. The expectations are worked out by hand from
// xinetd.conf(5); the same files given to Debian's xinetd 2.3.15.3
// (`xinetd -dontfork -f FILE` in a user and network namespace) listened on
// exactly the services these tests call enabled: a "{" on the "service" line
// is refused, the first "disable =" of a block wins, defaults' "disabled ="
// switches a service off, and an includedir skips names with a '.' or a '~'.
import { describe, expect, it } from 'vitest';
import { isDisabled, parseXinetdConf, readInIncludedir, serviceId, xinetdTransport } from '../../src/ports/xinetd-conf.js';

const F = '/etc/xinetd.conf';
const conf = [
  'defaults', // 1
  '{', // 2
  '\tdisabled = daytime', // 3
  '}', // 4
  '# a comment', // 5
  'service echo', // 6
  '{', // 7
  '\tid = echo-stream', // 8
  '\ttype = INTERNAL', // 9
  '\tsocket_type = stream', // 10
  '\tdisable = no', // 11
  '}', // 12
  'service mine', // 13
  '{', // 14
  '\ttype = UNLISTED', // 15
  '\tprotocol = tcp', // 16
  '\tport = 10250', // 17
  '\tdisable = yes', // 18
  '\tdisable = no', // 19
  '}', // 20
  'service daytime', // 21
  '{', // 22
  '\tsocket_type = dgram', // 23
  '}', // 24
  'includedir /etc/xinetd.d', // 25
].join('\n');

describe('parseXinetdConf', () => {
  const c = parseXinetdConf(conf, F);

  it('reads each block with its lines, the defaults block and the include line', () => {
    expect(c.services.map((s) => [s.name, s.line, s.endLine, s.disableLine])).toEqual([
      ['echo', 6, 12, 11],
      ['mine', 13, 20, 18],
      ['daytime', 21, 24, null],
    ]);
    expect(c.defaults).toEqual({ disabled: ['daytime'] });
    expect(c.includes).toEqual([{ kind: 'includedir', path: '/etc/xinetd.d', file: F, line: 25 }]);
    expect(c.problems).toEqual([]);
  });

  it('keeps the first "=" of an attribute, so the first disable line decides', () => {
    const [echo, mine, daytime] = c.services;
    expect(mine!.attrs.disable).toEqual(['yes']);
    expect([echo, mine, daytime].map((s) => isDisabled(s!, c.defaults))).toEqual([false, true, true]);
  });

  it('names a service by its id, and its transport by protocol or socket_type', () => {
    expect(c.services.map(serviceId)).toEqual(['echo-stream', 'mine', 'daytime']);
    expect(c.services.map(xinetdTransport)).toEqual(['tcp', 'tcp', 'udp']);
  });

  it('applies += and -= to the values before them', () => {
    const r = parseXinetdConf('service x\n{\n\tflags = A B\n\tflags += C\n\tflags -= A\n}\n', F);
    expect(r.services[0]!.attrs.flags).toEqual(['B', 'C']);
  });

  it('refuses a "{" on the service line, with file and line, and still reads the next block', () => {
    const r = parseXinetdConf('service echo {\n\tsocket_type = stream\n}\nservice daytime\n{\n\tsocket_type = stream\n}\n', F);
    expect(r.services.map((s) => s.name)).toEqual(['daytime']);
    expect(r.problems[0]).toBe(`${F}:1: xinetd expects "service NAME", "defaults" or an include here, not "service echo {"`);
  });

  it('names a block that is never closed', () => {
    expect(parseXinetdConf('service echo\n{\n\tsocket_type = stream\n', F).problems).toEqual([`${F}:1: the block is never closed with "}"`]);
  });

  it('lets "enabled =" in defaults switch off what it does not name', () => {
    const r = parseXinetdConf('defaults\n{\n\tenabled = echo\n}\nservice echo\n{\n}\nservice time\n{\n}\n', F);
    expect(r.services.map((s) => isDisabled(s, r.defaults))).toEqual([false, true]);
  });
});

describe('readInIncludedir', () => {
  it('skips a name with a dot or a trailing tilde', () => {
    expect(['discard', 'chargen.dpkg-old', 'time~', 'my-service'].map(readInIncludedir)).toEqual([true, false, false, true]);
  });
});
