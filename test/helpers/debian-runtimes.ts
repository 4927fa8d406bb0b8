// Debian 12's own container runtime inputs, for the ContainerRuntimeCollision
// tests: its status stanzas for runc 1.1.5+ds1-1+deb12u1, containerd
// 1.6.20~ds1-1+b1 and docker.io 20.10.24+dfsg1-1+b3 (abridged, their Depends
// as bookworm's Packages file has them), and containerd 1.6's `containerd
// config default` runc options (version 2, SystemdCgroup = false).
export const RUNC =
  'Package: runc\nStatus: install ok installed\nPriority: optional\nSection: admin\nArchitecture: amd64\nVersion: 1.1.5+ds1-1+deb12u1\nDepends: libc6 (>= 2.34), libseccomp2 (>= 2.5.0)\nDescription: Open Container Project - runtime\n';
export const CONTAINERD =
  'Package: containerd\nStatus: install ok installed\nPriority: optional\nSection: admin\nArchitecture: amd64\nVersion: 1.6.20~ds1-1+b1\nDepends: runc (>= 1.0.0~rc2~), libc6 (>= 2.34)\nDescription: open and reliable container runtime\n';
export const DOCKER =
  'Package: docker.io\nStatus: install ok installed\nPriority: optional\nSection: admin\nArchitecture: amd64\nVersion: 20.10.24+dfsg1-1+b3\nDepends: adduser, containerd (>= 1.4~), iptables, runc (>= 1.0.0~rc8~), tini (>= 0.18.0), libc6 (>= 2.34)\nDescription: Linux container runtime\n';
export const TZDATA = 'Package: tzdata\nStatus: install ok installed\nArchitecture: all\nVersion: 2024a-0+deb12u1\n';
export const CONFIG_V2 =
  'version = 2\n\n[plugins]\n  [plugins."io.containerd.grpc.v1.cri"]\n    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n      runtime_type = "io.containerd.runc.v2"\n' +
  '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n        BinaryName = ""\n        SystemdCgroup = false\n';
