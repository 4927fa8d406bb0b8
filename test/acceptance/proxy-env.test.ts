// What kubeadm's proxy checks see (src/acceptance/proxy-env.ts): /etc/environment as pam_env reads it
// (environment(5): NAME=VALUE lines, # comments; pam_env skips "export " and one pair of matching quotes),
// the play's environment over it, and Go's getEnvAny (the upper-case name first, an empty value unset).
import { describe, expect, it } from 'vitest';
import { firstSet, HTTPS_PROXY_VARS, kubeadmEnvironment, NO_PROXY_VARS, readEnvironmentFile } from '../../src/acceptance/proxy-env.js';

describe('/etc/environment', () => {
  it('NAME=VALUE lines with their numbers; comments, blank lines and lines that set nothing are skipped', () => {
    const text = [
      '# proxy for the lab',
      'PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"',
      '',
      "export https_proxy='http://p:3128'",
      'no_proxy=localhost,.lab',
      'not a line',
      '=x',
      '1X=y',
      '',
    ].join('\n');
    expect(readEnvironmentFile(text)).toEqual([
      { name: 'PATH', value: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin', line: 2 },
      { name: 'https_proxy', value: 'http://p:3128', line: 4 },
      { name: 'no_proxy', value: 'localhost,.lab', line: 5 },
    ]);
  });
});

describe("kubeadm's environment", () => {
  const session = readEnvironmentFile('https_proxy=http://p:3128\nno_proxy=localhost\n');
  it("kubespray's proxy_disable_env over the login's: every proxy empty, so Go sees none", () => {
    const play = { HTTPS_PROXY: '', https_proxy: '', NO_PROXY: '', no_proxy: '', HTTP_PROXY: '', http_proxy: '' };
    const env = kubeadmEnvironment(session, '/etc/environment', play, 'playbooks/cluster.yml:34');
    expect(firstSet(env, HTTPS_PROXY_VARS)).toBeNull();
    expect(firstSet(env, NO_PROXY_VARS)).toBeNull();
  });
  it('a play without an environment leaves the login one; the upper-case name wins when both are set', () => {
    const env = kubeadmEnvironment(session, '/etc/environment', null, 'cluster.yml:75');
    expect(firstSet(env, HTTPS_PROXY_VARS)).toEqual({ value: 'http://p:3128', where: '/etc/environment:1' });
    const both = kubeadmEnvironment(session, '/etc/environment', { HTTPS_PROXY: 'http://q:8080' }, 'cluster.yml:75');
    expect(firstSet(both, HTTPS_PROXY_VARS)).toEqual({ value: 'http://q:8080', where: 'cluster.yml:75' });
    expect(firstSet(both, NO_PROXY_VARS)).toEqual({ value: 'localhost', where: '/etc/environment:2' });
  });
});
