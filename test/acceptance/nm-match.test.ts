// unmanagedCovers: whether NetworkManager's unmanaged-devices list leaves every
// interface a glob stands for unmanaged, by the Device List Format of
// NetworkManager.conf(5) read by hand ("interface-name:" with globs, "=" for
// an exact name, a bare name, "*"; "except:" and the other spec kinds).
import { describe, expect, it } from 'vitest';
import { unmanagedCovers } from '../../src/acceptance/nm-match.js';

describe('unmanagedCovers: the Device List Format of NetworkManager.conf(5), hand-read', () => {
  it('covers a glob only when every name it stands for matches; an exact name by the glob', () => {
    expect(unmanagedCovers(['interface-name:cali*'], 'cali*')).toEqual({ known: true, value: true });
    expect(unmanagedCovers(['interface-name:c*'], 'cali*')).toEqual({ known: true, value: true });
    expect(unmanagedCovers(['*'], 'lxc*')).toEqual({ known: true, value: true });
    expect(unmanagedCovers(['interface-name:flannel*'], 'flannel.1')).toEqual({ known: true, value: true });
    expect(unmanagedCovers(['interface-name:flannel.?'], 'flannel.1')).toEqual({ known: true, value: true });
    expect(unmanagedCovers(['interface-name:=flannel.*'], 'flannel.1')).toEqual({ known: true, value: false });
    expect(unmanagedCovers(['cni0'], 'cni0')).toEqual({ known: true, value: true });
    expect(unmanagedCovers(['interface-name:cali0'], 'cali*')).toEqual({ known: true, value: false });
    expect(unmanagedCovers([], 'tunl*')).toEqual({ known: true, value: false });
  });
  it('another kind of spec, or an except:, that could decide it: not known, naming it', () => {
    expect(unmanagedCovers(['type:veth'], 'lxc*').known).toBe(false);
    expect(unmanagedCovers(['interface-name:lxc*', 'except:interface-name:lxc1'], 'lxc*').known).toBe(false);
    expect(unmanagedCovers(['mac:00:11:22:33:44:55', 'interface-name:lxc*'], 'lxc*')).toEqual({ known: true, value: true });
  });
});
