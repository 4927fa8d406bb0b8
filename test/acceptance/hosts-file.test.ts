// /etc/hosts as Go's net package reads it (hosts(5): address, canonical name, aliases; '#' starts a comment).
import { describe, expect, it } from 'vitest';
import { hostsFileLine } from '../../src/acceptance/hosts-file.js';

describe("/etc/hosts read as Go's resolver reads it", () => {
  const HOSTS = [
    '127.0.0.1\tlocalhost',
    '127.0.1.1\tdebian.lab debian',
    '# 10.0.0.5 node1',
    'notanip node2',
    '10.0.0.6 Node3. # comment',
    'fe80::1%eth0 node4',
    '',
  ].join('\n');
  it('names and aliases, case-insensitively and without a trailing dot; comments and lines without an address do not count', () => {
    expect(['localhost', 'debian', 'DEBIAN.lab', 'node1', 'node2', 'node3', 'node3.', 'node4', 'node5'].map((n) => hostsFileLine(HOSTS, n))).toEqual([
      1,
      2,
      2,
      null,
      null,
      5,
      5,
      6,
      null,
    ]);
  });
});
