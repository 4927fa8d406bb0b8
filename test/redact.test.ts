// Which values count as credentials, and how a file's lines show when they
// hold one. Expectations are written out by hand from the inputs.
import { describe, expect, it } from 'vitest';
import { holdsSecret, redactDeep, redactFileTexts, redactString, redactValues } from '../src/redact.js';

describe('holdsSecret', () => {
  it.each([
    'username=u,password=S3cr3t!,vers=3.0',
    'credentials=/root/.smb',
    'pass=x',
    'passwd=x',
    'cred=/etc/c',
    'secret=AQBx==',
    'secretfile=/etc/ceph/admin.secret',
    'token=abc',
    'smbpassword=x',
    'client_secret: x',
    'PASSWORD=x',
    'https://user:pw@dav.example/remote',
    'ExecStart=/usr/bin/agent --api-key=k',
  ])('%s holds one', (line) => expect(holdsSecret(line)).toBe(true));

  it.each([
    'UUID=0a1b /               ext4    errors=remount-ro 0       1',
    '/swapfile\tnone\tswap\tsw\t0\t0',
    'passno=2',
    'compass=north',
    'password=',
    'net.ipv4.ip_forward = 1',
    'https://dav.example/remote',
    'user@host:/srv',
  ])('%s holds none', (line) => expect(holdsSecret(line)).toBe(false));
});

describe('redactValues and redactString', () => {
  it('hides each value to the next blank, an escaped comma inside it too', () => {
    expect(redactValues('//s /m cifs username=u,password=a,,b,vers=3.0 0 0')).toBe('//s /m cifs username=u,password=(sensitive value) 0 0');
    expect(redactValues('x credentials=/root/.smb y')).toBe('x credentials=(sensitive value) y');
    expect(redactValues('curl https://user:pw@host/x')).toBe('curl https://user:(sensitive value)@host/x');
  });

  it("a file name holding a credential word is no key: the tool's own messages about it stay whole", () => {
    const msgs = [
      'reconcile: cannot read /etc/sysctl.d/50-secret.conf: permission denied (EACCES)',
      '/etc/token.d/forward.conf:3 sets net.ipv4.ip_forward = 0',
      'restore /etc/ceph/client.admin.secretfile: changed since the run',
    ];
    for (const m of msgs) expect(redactString(m)).toBe(m);
    // Keys after a blank, a comma, a query separator or a quote are still found.
    expect(redactString('mount -o username=u,password=p1 //s/x')).toBe('mount -o username=u,password=(sensitive value) //s/x');
    expect(redactString('GET /x?a=1&token=t1 HTTP')).toBe('GET /x?a=1&token=(sensitive value) HTTP');
    expect(redactString('{"client_secret": "s1"}')).toBe('{"client_secret": (sensitive value)');
  });

  it('leaves lines without a credential as they are, line by line', () => {
    expect(redactString('a=1\ntoken=t\nb=2')).toBe('a=1\ntoken=(sensitive value)\nb=2');
  });

  it('redactDeep: every string of a JSON value, keys kept', () => {
    expect(redactDeep({ password: 'plain', list: ['pass=x', 1, null, true], nested: { m: 'secret=y z' } })).toEqual({
      password: 'plain',
      list: ['pass=(sensitive value)', 1, null, true],
      nested: { m: 'secret=(sensitive value) z' },
    });
  });
});

describe('redactFileTexts', () => {
  it('an fstab entry keeps its other fields and hides the options; the same options the same number in before and after', () => {
    const before = '# fstab\n//srv/share /mnt cifs username=u,password=S3cr3t!,vers=3.0 0 0\n/swapfile none swap sw 0 0\n';
    const after = '# fstab\n//srv/share /mnt cifs username=u,password=S3cr3t!,vers=3.0 0 0\n#/swapfile none swap sw 0 0\n';
    expect(redactFileTexts('/etc/fstab', { before, after })).toEqual({
      before: '# fstab\n//srv/share /mnt cifs (sensitive value 1) 0 0\n/swapfile none swap sw 0 0\n',
      after: '# fstab\n//srv/share /mnt cifs (sensitive value 1) 0 0\n#/swapfile none swap sw 0 0\n',
      redacted: true,
    });
  });

  it('a changed credential shows as a changed line (another number)', () => {
    const r = redactFileTexts('/etc/fstab', { before: '//s /m cifs password=a 0 0\n', after: '//s /m cifs password=b 0 0\n' });
    expect(r.before).toBe('//s /m cifs (sensitive value 1) 0 0\n');
    expect(r.after).toBe('//s /m cifs (sensitive value 2) 0 0\n');
  });

  it('a URL password in the device field; a comment; another file: what holds one is hidden', () => {
    expect(redactFileTexts('/etc/fstab', { before: 'https://u:pw@dav/x /mnt davfs user 0 0\n', after: null }).before).toBe(
      'https://u:(sensitive value)@dav/x /mnt davfs (sensitive value 1) 0 0\n',
    );
    expect(redactFileTexts('/etc/fstab', { before: '# //s /m cifs password=a 0 0\n', after: null }).before).toBe('(sensitive value 1)\n');
    expect(redactFileTexts('/etc/rc.local', { before: 'mount -o password=a //s /m\r\nexit 0\n', after: null }).before).toBe('(sensitive value 1)\r\nexit 0\n');
  });

  it('text without a credential is returned as it is, unmarked', () => {
    const text = 'overlay\nbr_netfilter\n';
    expect(redactFileTexts('/etc/modules-load.d/k8s.conf', { before: null, after: text })).toEqual({ before: null, after: text, redacted: false });
  });
});
