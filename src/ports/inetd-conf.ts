// inetd.conf as Debian's openbsd-inetd reads it (inetd(8), getconfigent):
// a line whose first byte is '#' is a comment, an empty line is skipped, and
// an entry whose fields run out at the end of a line continues on the next
// line when that line starts with a space or a tab. A first field
// "HOST:SERVICE" binds that service to HOST; "HOST:" alone sets the default
// host of the entries below it ("*:" resets it). Pure.

/** One service inetd listens for. */
export interface InetdEntry {
  file: string;
  /** The line the entry starts on (1-based); `lines` counts its continuation lines too. */
  line: number;
  lines: number;
  /** The entry as written, continuation lines joined with "\n". */
  text: string;
  /** The host part (HOST:SERVICE or a preceding "HOST:" line); null for every address. */
  host: string | null;
  /** A service name from /etc/services, or a port number. */
  service: string;
  socketType: string;
  /** tcp, udp, tcp6, udp6, tcp46, udp46, or rpc/...; what the socket is bound with. */
  protocol: string;
  /** "internal" for inetd's built-ins (echo, discard, chargen, daytime, time). */
  server: string;
  args: string[];
}

/** An entry inetd would refuse: too few fields. It serves nothing, but the file says something is meant. */
export interface InetdProblem {
  file: string;
  line: number;
  message: string;
}

const BLANK = (c: string | undefined) => c === ' ' || c === '\t';

/** Splits on spaces and tabs only, as skip() does (no quoting). */
function fieldsOf(line: string): string[] {
  return line.split(/[ \t]+/).filter((f) => f !== '');
}

/** The entries and refused lines of one inetd.conf. */
export function parseInetdConf(text: string, file: string): { entries: InetdEntry[]; problems: InetdProblem[] } {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const entries: InetdEntry[] = [];
  const problems: InetdProblem[] = [];
  let defaultHost: string | null = null;
  for (let n = 0; n < lines.length; n++) {
    const first = lines[n]!;
    if (first.startsWith('#') || first === '') continue;
    let fields = fieldsOf(first);
    if (fields.length === 0) continue; // only blanks: skip() finds no service name
    const start = n;
    const raw = [first];
    // skip() reads on while a field is wanted and the next line starts with a blank; inetd wants up to
    // the server program (six fields) and then takes the arguments of the following continuation lines too.
    while (BLANK(lines[n + 1]?.[0])) {
      n++;
      raw.push(lines[n]!);
      fields = [...fields, ...fieldsOf(lines[n]!)];
    }
    let service = fields[0]!;
    let host: string | null = defaultHost;
    const colon = service.lastIndexOf(':');
    if (colon >= 0) {
      host = service.slice(0, colon);
      service = service.slice(colon + 1);
      if (service === '') {
        // "HOST:" alone: the default for the lines below; "*" is every address again.
        defaultHost = host === '*' ? null : host;
        continue;
      }
      if (host === '*') host = null;
    }
    if (fields.length < 6) {
      problems.push({
        file,
        line: start + 1,
        message: `${file}:${start + 1}: inetd needs six fields (service, socket type, protocol, wait, user, server), found ${fields.length}`,
      });
      continue;
    }
    entries.push({
      file,
      line: start + 1,
      lines: raw.length,
      text: raw.join('\n'),
      host,
      service,
      socketType: fields[1]!,
      protocol: fields[2]!,
      server: fields[5]!,
      args: fields.slice(6),
    });
  }
  return { entries, problems };
}

/** The transport of an inetd protocol field (tcp6 is TCP; rpc/udp is UDP), or null for one that is neither. */
export function transportOf(protocol: string): 'tcp' | 'udp' | null {
  const p = protocol.startsWith('rpc/') ? protocol.slice(4) : protocol;
  if (/^tcp(6|46)?$/.test(p)) return 'tcp';
  if (/^udp(6|46)?$/.test(p)) return 'udp';
  return null;
}
