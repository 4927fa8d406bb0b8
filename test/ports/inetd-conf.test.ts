// inetd.conf read as openbsd-inetd reads it. Each expectation is worked out by
// hand from inetd(8)'s rules (a '#' in the first column is a comment, an entry
// continues on the lines that start with a blank, "HOST:" alone sets the host
// of the entries below, "*:" resets it); the same file given to Debian's
// openbsd-inetd 0.20221205 (`inetd -d FILE` in a user and network namespace)
// printed the same services with the same hosts and server arguments.
import { describe, expect, it } from 'vitest';
import { parseInetdConf, transportOf } from '../../src/ports/inetd-conf.js';

const F = '/etc/inetd.conf';

describe('parseInetdConf', () => {
  const text = [
    '# comment', // 1
    '#<off># time stream tcp nowait root internal', // 2: update-inetd's disabled form is a comment
    'echo\tstream\ttcp\tnowait\troot\tinternal', // 3
    '', // 4
    'discard stream tcp', // 5: the entry runs on to line 6
    '\tnowait root internal', // 6
    '127.0.0.1:', // 7: the default host from here on
    '10250 stream tcp nowait root /bin/cat cat', // 8
    '  -n', // 9: a continuation line gives more arguments
    '*:', // 10: every address again
    'daytime stream tcp6 nowait root internal', // 11
    '  # not a comment: a continuation', // 12
    'chargen dgram udp wait root internal', // 13
  ].join('\n');
  const { entries, problems } = parseInetdConf(`${text}\n`, F);

  it('skips comments and blank lines and joins continuation lines to their entry', () => {
    expect(entries.map((e) => [e.service, e.line, e.lines])).toEqual([
      ['echo', 3, 1],
      ['discard', 5, 2],
      ['10250', 8, 2],
      ['daytime', 11, 2],
      ['chargen', 13, 1],
    ]);
    expect(problems).toEqual([]);
    expect(entries[1]!.text).toBe('discard stream tcp\n\tnowait root internal');
    expect(entries[1]!.server).toBe('internal');
  });

  it('gives an entry the default host of a "HOST:" line until "*:" resets it', () => {
    expect(entries.map((e) => e.host)).toEqual([null, null, '127.0.0.1', null, null]);
  });

  it('takes the arguments of continuation lines, a "#" there included', () => {
    expect(entries[2]!.server).toBe('/bin/cat');
    expect(entries[2]!.args).toEqual(['cat', '-n']);
    expect(entries[3]!.args).toEqual(['#', 'not', 'a', 'comment:', 'a', 'continuation']);
  });

  it('reads HOST:SERVICE on the entry itself, and "*:SERVICE" as every address', () => {
    const r = parseInetdConf('10.0.0.1:ftp stream tcp nowait root /usr/sbin/in.ftpd\n*:echo stream tcp nowait root internal\n', F);
    expect(r.entries.map((e) => [e.host, e.service])).toEqual([
      ['10.0.0.1', 'ftp'],
      [null, 'echo'],
    ]);
  });

  it('names an entry with fewer than six fields as a problem, with its file and line', () => {
    const r = parseInetdConf('# x\nshell stream tcp nowait\n', F);
    expect(r.entries).toEqual([]);
    expect(r.problems).toEqual([{ file: F, line: 2, message: `${F}:2: inetd needs six fields (service, socket type, protocol, wait, user, server), found 4` }]);
  });

  it('treats only a "#" in the first column as a comment: an indented one after a comment starts an entry', () => {
    const r = parseInetdConf('# a\n #x stream tcp nowait root internal\n', F);
    expect(r.entries.map((e) => [e.service, e.line])).toEqual([['#x', 2]]);
  });
});

describe('transportOf', () => {
  it('reads tcp and udp with their IPv6 and rpc forms, and nothing else', () => {
    expect(['tcp', 'tcp6', 'tcp46', 'udp', 'udp6', 'rpc/tcp', 'rpc/udp', 'unix', 'tcp4x'].map(transportOf)).toEqual([
      'tcp',
      'tcp',
      'tcp',
      'udp',
      'udp',
      'tcp',
      'udp',
      null,
      null,
    ]);
  });
});
