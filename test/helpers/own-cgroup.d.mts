export interface OwnCgroup {
  dir: string;
  wrap(cmd: string, args: string[]): [string, string[]];
  dispose(): void;
}
export function ownCgroup(name: string): OwnCgroup;
