// The boot farm's and the qemu suite's judge of one promise, assembled from
// the registered providers' promise kinds. Built into dist/promise-judge.mjs
// beside the CLI's bundle (scripts/bundle.mjs), so the suites' plain-node
// scripts judge a promise exactly as the provider that made it says.
import type { BootObservation, Promised, PromiseKind } from '../promises.js';
import { PROVIDERS, type ProviderRegistry } from './index.js';

/** Promised.kind -> its kind, over every provider of the registry; a kind two providers declare is a registry defect. */
export function promiseKinds(registry: ProviderRegistry = PROVIDERS): ReadonlyMap<string, PromiseKind> {
  const out = new Map<string, PromiseKind>();
  const owner = new Map<string, string>();
  for (const [type, provider] of Object.entries(registry)) {
    for (const [kind, k] of Object.entries(provider.promiseKinds ?? {})) {
      if (owner.has(kind)) throw new Error(`promise kind ${kind} is declared by both ${owner.get(kind)} and ${type}`);
      owner.set(kind, type);
      out.set(kind, k);
    }
  }
  return out;
}

/** A judge over `registry`: how `seen` differs from a promise, or null when it holds (or its kind's observation is absent). */
export function promiseJudge(registry: ProviderRegistry = PROVIDERS): (p: Promised, seen: BootObservation) => string | null {
  const kinds = promiseKinds(registry);
  return (p, seen) => {
    const k = kinds.get(p.kind);
    return k ? k.judge(p, seen) : `a promise of kind ${p.kind} this judge cannot check`;
  };
}

export const judgePromise = promiseJudge();
