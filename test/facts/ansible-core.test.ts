// Which ansible-core runs kubespray, from the forms kubespray's requirements.txt
// took in v2.20.0 .. master, and which distro that ansible-core bundles (read
// from ansible-core's release tags: module_utils/distro/_distro.py __version__).
import { describe, expect, it } from 'vitest';
import { bundledDistroVersion, coreFromRequirements, parseAnsibleVersion } from '../../src/facts/ansible-core.js';

describe('ansible-core version', () => {
  it('reads `ansible --version` in both the core and the pre-2.11 form', () => {
    expect(parseAnsibleVersion('ansible [core 2.14.18]\n  config file = None\n')).toBe('2.14.18');
    expect(parseAnsibleVersion('ansible [core 2.19.0b2]\n')).toBe('2.19.0');
    expect(parseAnsibleVersion('ansible 2.10.8\n')).toBe('2.10.8');
    expect(parseAnsibleVersion('bash: ansible: command not found\n')).toBeNull();
  });

  it('reads the pins kubespray releases used', () => {
    // v2.20.0: both pinned; ansible-core wins.
    expect(coreFromRequirements('ansible==5.7.1\nansible-core==2.12.5\ncryptography==3.4.8\n')).toBe('2.12.5');
    // v2.25.0: ansible 9 requires ansible-core 2.16.
    expect(coreFromRequirements('ansible==9.5.1\ncryptography==42.0.7\n')).toBe('2.16');
    // master: ansible 11 requires ansible-core 2.18.
    expect(coreFromRequirements('ansible==11.13.0\n# Prevented passlib version conflicts\nbcrypt<6\n')).toBe('2.18');
    expect(coreFromRequirements('jinja2==3.1.4\n')).toBeNull();
  });

  it('maps ansible-core to the distro it bundles', () => {
    expect(['2.12.5', '2.14.18', '2.16', '2.17.0', '2.18', '2.19.1'].map(bundledDistroVersion)).toEqual(['1.6.0', '1.6.0', '1.6.0', '1.8.0', '1.9.0', '1.9.0']);
  });
});
