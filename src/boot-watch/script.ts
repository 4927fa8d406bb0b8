// The boot watch's tracer: one bpftrace program (Debian's bpftrace 0.17 and
// later, on a kernel with BTF at /sys/kernel/btf/vmlinux). Pure text.
//
// Why these probes (measured in the qemu VM on Debian 12's 6.1 kernel, see
// docs/boot-watch.md):
// - sysctl writes: fentry on proc_sys_write, every write to /proc/sys/*; the
//   file is told by its dentry and its parent's (ip_forward under ipv4,
//   bridge-nf-call-ip{,6}tables under bridge), so the br_netfilter module need
//   not be loaded when the probe attaches (at boot it is not yet). The value is
//   read from the writer's buffer (iov_iter's ubuf: a single-buffer write(2),
//   which is what echo, sysctl(8) and systemd-sysctl do).
// - swapon and delete_module: the syscall tracepoints, enter and exit, so a
//   failed call is told apart from one that took effect.
// - ports: fentry on inet_bind/inet6_bind (the socket's type tells TCP from
//   UDP) and on inet_csk_listen_start (TCP listen, explicit or implicit bind),
//   each with the socket's network namespace: a listener in another namespace
//   does not hold the host's port.
// Every field a process chooses (comm, cmdline, cgroup name, the value, a
// path) is printed with %r: bpftrace escapes every unprintable byte as \xNN,
// so a field holds no tab and no newline and one event is one line.
import { WATCHED_PORTS, WATCHED_SYSCTLS } from './record.js';

/**
 * A process's cmdline is read up to this many bytes (the rest is cut, and the record says so). bpftrace caps a
 * buf() at BPFTRACE_STRLEN (64 by default: measured, a 74-byte cmdline came out as 64), so the unit raises it.
 */
export const CMDLINE_MAX = 96;

/** The six control-plane ports, as a bpftrace condition on `$port`. */
const portTest = WATCHED_PORTS.map((p) => `$port == ${p}`).join(' || ');

/**
 * A dentry's name is `text`: its length, then byte by byte. Not str(): two
 * 64-byte strings and the printf's buffers passed the BPF stack's 512 bytes
 * (measured: bpftrace refused the program).
 */
function nameIs(dentry: string, text: string): string {
  const bytes = [...Buffer.from(text, 'latin1')].map((b, i) => `*(${dentry}.name + ${i}) == ${b}`);
  return [`${dentry}.len == ${text.length}`, ...bytes].join(' && ');
}

/** `$k`: which watched key's /proc/sys file the dentry `$d` is, from 1 in WATCHED_SYSCTLS' order (0: none). */
const sysctlIndex = WATCHED_SYSCTLS.map(
  ([parent, name], i) => `  if (${nameIs('$d->d_name', name)} && ${nameIs('$d->d_parent->d_name', parent)}) { $k = ${i + 1}; }`,
).join('\n');

// Who did it: pid, parent pid, the writer's network namespace, comm, the cmdline's length and its first bytes.
const WHO_DECL = `  $mm = curtask->mm;
  $alen = $mm->arg_end - $mm->arg_start;
  if ($alen > ${CMDLINE_MAX}) { $alen = ${CMDLINE_MAX}; }`;
const WHO_FMT = '%d\\t%d\\t%u\\t%r\\t%d\\t%r';
const who = (netns: string) => `pid, curtask->real_parent->tgid, ${netns}, buf(comm, 16), $mm->arg_end - $mm->arg_start, buf(uptr($mm->arg_start), $alen)`;
const TASK_NETNS = 'curtask->nsproxy->net_ns->ns.inum';
// The task's cgroup v2 name (its unit), read in the kernel when the event happens. Not cgroup_path(cgroup):
// bpftrace resolves that in user space when it prints, and a short-lived unit's cgroup is gone by then
// (measured: systemd-sysctl's write came out with an empty path). The cast is needed: without it bpftrace 0.17
// says "struct kernfs_node does not contain a field named name" (measured). Last on the line, the one field
// printed as is: a delegated cgroup's name may hold a tab, which then stays inside it.
// A line of its own after the event's (same probe, same CPU: the next record of its buffer): in the
// event's printf it passed the BPF stack's 512 bytes (measured), as its own printf it does not.
const CGROUP_LINE = '    printf("cgroup\\t%d\\t%s\\n", pid, str(((struct kernfs_node *)curtask->cgroups->dfl_cgrp->kn)->name, 48));';

function sysctlProbe(): string {
  return `kfunc:vmlinux:proc_sys_write
{
  $d = args->iocb->ki_filp->f_path.dentry;
  $k = 0;
${sysctlIndex}
  if ($k > 0) {
${WHO_DECL}
    $vlen = args->iter->count;
    if ($vlen > 16) { $vlen = 16; }
    printf("sysctl\\t%llu\\t${WHO_FMT}\\t%d\\t%r\\n", nsecs, ${who(TASK_NETNS)}, $k, buf(uptr(args->iter->ubuf), $vlen));
${CGROUP_LINE}
  }
}`;
}

function syscallProbe(event: string, syscall: string, arg: string): string {
  return `tracepoint:syscalls:sys_enter_${syscall}
{
${WHO_DECL}
  printf("${event}\\t%llu\\t${WHO_FMT}\\t%r\\n", nsecs, ${who(TASK_NETNS)}, buf(str(args->${arg}, 32), 32));
${CGROUP_LINE}
}

tracepoint:syscalls:sys_exit_${syscall}
{
  printf("${event}-ret\\t%llu\\t%d\\t%d\\n", nsecs, pid, args->ret);
}`;
}

function bindProbe(fn: string, sockaddr: string, portField: string): string {
  return `kfunc:vmlinux:${fn}
{
  $sa = (struct ${sockaddr} *)args->uaddr;
  $port = (($sa->${portField} & 0xff) << 8) | ($sa->${portField} >> 8);
  if (${portTest}) {
${WHO_DECL}
    printf("bind\\t%llu\\t${WHO_FMT}\\t%d\\t%d\\n", nsecs, ${who('args->sock->sk->__sk_common.skc_net.net->ns.inum')}, $port, args->sock->type);
${CGROUP_LINE}
  }
}`;
}

function listenProbe(): string {
  return `kfunc:vmlinux:inet_csk_listen_start
{
  $port = args->sk->__sk_common.skc_num;
  if (${portTest}) {
${WHO_DECL}
    printf("listen\\t%llu\\t${WHO_FMT}\\t%d\\n", nsecs, ${who('args->sk->__sk_common.skc_net.net->ns.inum')}, $port);
${CGROUP_LINE}
  }
}`;
}

/** The whole program. Its BEGIN prints the ready line the unit's ExecStartPost waits for, with the host's network namespace. */
export function watchScript(): string {
  return [
    '// Installed by `reconcile apply --watch-next-boot` (k8s-host-reconcile): records, for one boot,',
    '// who writes the promised sysctls, turns swap on, removes a module or takes a control-plane port.',
    'BEGIN',
    '{',
    `  printf("ready\\t%llu\\t%u\\n", nsecs, ${TASK_NETNS});`,
    '}',
    '',
    sysctlProbe(),
    '',
    syscallProbe('swapon', 'swapon', 'specialfile'),
    '',
    syscallProbe('delete_module', 'delete_module', 'name_user'),
    '',
    bindProbe('inet_bind', 'sockaddr_in', 'sin_port'),
    '',
    bindProbe('inet6_bind', 'sockaddr_in6', 'sin6_port'),
    '',
    listenProbe(),
    '',
  ].join('\n');
}
