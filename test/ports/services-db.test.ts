// /etc/services as getservbyname(3) reads it; expectations worked out by hand from services(5).
import { describe, expect, it } from 'vitest';
import { parseServices, servicePort } from '../../src/ports/services-db.js';

describe('parseServices and servicePort', () => {
  const db = parseServices(
    [
      '# Network services',
      'echo\t\t7/tcp',
      'echo\t\t7/udp',
      'discard\t\t9/tcp\t\tsink null',
      'daytime 13/tcp # a comment',
      'daytime 99/tcp',
      'broken tcp',
      'big 70000/tcp',
    ].join('\n'),
  );

  it('reads names and aliases per protocol; the first line for a name wins', () => {
    expect(servicePort(db, 'echo', 'udp')).toBe(7);
    expect(servicePort(db, 'sink', 'tcp')).toBe(9);
    expect(servicePort(db, 'null', 'tcp')).toBe(9);
    expect(servicePort(db, 'daytime', 'tcp')).toBe(13);
    expect(servicePort(db, 'discard', 'udp')).toBe(null);
  });

  it('takes a decimal port for a name it does not know, and nothing out of range', () => {
    expect(servicePort(db, '10250', 'tcp')).toBe(10250);
    expect(servicePort(db, 'big', 'tcp')).toBe(null);
    expect(servicePort(db, '0', 'tcp')).toBe(null);
    expect(servicePort(db, 'kubelet', 'tcp')).toBe(null);
  });
});
