// The interfaces each of kubespray's network plugins creates on a node, by
// the names NetworkManager would see, with where each name comes from. Not
// evaluated from kubespray (its roles do not list them as data), so each one
// cites the plugin's own code or kubespray's reset tasks, which delete them
// by name. A plugin not listed here is not judged: unknown, never "none".

export interface CniInterfaces {
  /** NM interface-name globs (`*` only), or exact names. */
  patterns: string[];
  /**
   * The patterns that are veth devices: NetworkManager's own udev rule
   * (network-manager's /lib/udev/rules.d/85-nm-unmanaged.rules:
   * ID_NET_DRIVER=="veth", INTERFACE!="eth[0-9]*" sets NM_UNMANAGED=1)
   * already leaves them alone while that file is in force.
   */
  veths: string[];
  source: string;
}

export const CNI_INTERFACES: Readonly<Record<string, CniInterfaces>> = {
  calico: {
    // The pods' veths (cali<hash>), the IP-in-IP tunnel (tunl0) and the VXLAN device; kubespray's own 0062 task names the same.
    patterns: ['cali*', 'tunl*', 'vxlan.calico'],
    veths: ['cali*'],
    source:
      "Calico's docs, Configure NetworkManager (cali*, tunl*, vxlan.calico); kubespray roles/kubernetes/preinstall/tasks/0062-networkmanager-unmanaged-devices.yml names them too",
  },
  flannel: {
    patterns: ['cni0', 'flannel.1'],
    veths: [],
    source: 'kubespray roles/network_plugin/flannel/tasks/reset.yml:4,16 (the bridge cni0 and the VXLAN device flannel.1, which reset deletes)',
  },
  cilium: {
    // cilium_host, cilium_net (a veth pair), cilium_vxlan (kubespray's reset deletes them), and the pods' host-side veths lxc<hash>.
    patterns: ['cilium_host', 'cilium_net', 'cilium_vxlan', 'lxc*'],
    veths: ['cilium_host', 'cilium_net', 'lxc*'],
    source:
      'kubespray roles/network_plugin/cilium/tasks/reset.yml:7-9 (cilium_host, cilium_net, cilium_vxlan); cilium pkg/datapath/connector (a pod veth is "lxc" and a hash)',
  },
};

/** kubespray's plugins that create no interface of their own for NM to take. */
export const NO_CNI_INTERFACES = ['none'];
