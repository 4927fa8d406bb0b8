// /etc/services as getservbyname(3) reads it (services(5)): "NAME PORT/PROTO
// ALIAS...", '#' to the end of the line a comment, fields split on blanks.
// The first line that names a service for a protocol wins. Pure.

export type Transport = 'tcp' | 'udp';

/** "name/proto" -> port, for names and aliases; the first line wins. */
export type ServicesDb = ReadonlyMap<string, number>;

export function parseServices(text: string): ServicesDb {
  const out = new Map<string, number>();
  for (const raw of text.split('\n')) {
    const hash = raw.indexOf('#');
    const fields = (hash >= 0 ? raw.slice(0, hash) : raw).split(/[ \t]+/).filter((f) => f !== '');
    if (fields.length < 2) continue;
    const m = /^(\d+)\/([a-z0-9]+)$/.exec(fields[1]!);
    if (!m) continue;
    const port = Number(m[1]);
    if (port < 1 || port > 65535) continue;
    for (const name of [fields[0]!, ...fields.slice(2)]) {
      const key = `${name}/${m[2]}`;
      if (!out.has(key)) out.set(key, port);
    }
  }
  return out;
}

/** The port a service field means for a transport: a name from the database, else a decimal port number; null when neither. */
export function servicePort(db: ServicesDb, service: string, proto: Transport): number | null {
  const named = db.get(`${service}/${proto}`);
  if (named !== undefined) return named;
  if (!/^\d+$/.test(service)) return null;
  const n = Number(service);
  return n >= 1 && n <= 65535 ? n : null;
}
