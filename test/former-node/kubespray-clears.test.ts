// What kubespray's reset.yml and cluster.yml do to each piece of a former
// node's evidence, in the finding's words: per path (clearsClause) and for all
// of them (clearsSentence). The answers are written by hand, as the reset and
// cluster roles' evaluation would give them.
import { describe, expect, it } from 'vitest';
import { clearsClause, clearsSentence, type KubesprayClears, type ResetAnswer } from '../../src/former-node/kubespray-clears.js';

const removes = (file: string, line: number): ResetAnswer => ({ clears: true, by: { file, line } });
const keeps: ResetAnswer = { clears: false };
const unknown = (file: string, line: number, message: string): ResetAnswer => ({ clears: 'unknown', warning: { file, line, message } });
const clears = (reset: Record<string, ResetAnswer>, cluster: Record<string, ResetAnswer> = {}): KubesprayClears => ({
  reset: new Map(Object.entries(reset)),
  cluster: new Map(Object.entries(cluster)),
  clusterRoles: ['kubernetes/preinstall', 'kubernetes/node'],
});

describe('clearsClause: one path', () => {
  it('removed, kept or unknown by reset.yml, and what cluster.yml does, each with its task', () => {
    const c = clears(
      {
        '/etc/kubernetes': removes('roles/reset/tasks/main.yml', 210),
        '/opt/cni': keeps,
        '/var/lib/etcd': unknown('roles/reset/tasks/main.yml', 99, 'etcd_data_dir is undefined'),
      },
      { '/opt/cni': removes('roles/kubernetes/preinstall/tasks/0050.yml', 12), '/etc/kubernetes': keeps },
    );
    expect(clearsClause(c, '/etc/kubernetes')).toBe('reset.yml removes it (roles/reset/tasks/main.yml:210); cluster.yml does not');
    expect(clearsClause(c, '/opt/cni')).toBe('reset.yml does not remove it; cluster.yml removes it (roles/kubernetes/preinstall/tasks/0050.yml:12)');
    expect(clearsClause(c, '/var/lib/etcd')).toBe('reset.yml: unknown (roles/reset/tasks/main.yml:99: etcd_data_dir is undefined)');
  });
  it('a path neither playbook was asked about has no clause', () => {
    expect(clearsClause(clears({}), '/etc/cni/net.d')).toBe('');
  });
});

describe('clearsSentence: all the paths', () => {
  it('reset removes every one and cluster.yml none: the install meets them only if reset is skipped', () => {
    const c = clears({ '/a': removes('r.yml', 1), '/b': removes('r.yml', 2) }, { '/a': keeps, '/b': keeps });
    expect(clearsSentence(c, ['/a', '/b'])).toBe(
      "kubespray's reset.yml removes all 2 (evaluated from roles/reset for this node); cluster.yml clears none of them (no task of kubernetes/preinstall or kubernetes/node removes them), so the install meets them",
    );
  });
  it('some kept, some unknown; cluster.yml removing some and not knowing one', () => {
    const c = clears(
      { '/a': removes('r.yml', 1), '/b': keeps, '/c': unknown('r.yml', 3, 'x'), '/d': keeps },
      { '/a': removes('c.yml', 5), '/b': unknown('c.yml', 6, 'y') },
    );
    expect(clearsSentence(c, ['/a', '/b', '/c', '/d'])).toBe(
      "kubespray's reset.yml removes 1 of 4, not /b, /d, 1 unknown (evaluated from roles/reset for this node); cluster.yml's kubernetes/preinstall and kubernetes/node remove 1 of them, 1 unknown",
    );
  });
  it('only the paths named count: an answer for another path changes nothing', () => {
    const c = clears({ '/a': keeps, '/other': removes('r.yml', 9) }, { '/other': removes('c.yml', 1) });
    expect(clearsSentence(c, ['/a'])).toBe(
      "kubespray's reset.yml removes 0 of 1, not /a (evaluated from roles/reset for this node); cluster.yml clears none of them (no task of kubernetes/preinstall or kubernetes/node removes them), so the install meets them",
    );
  });
});
