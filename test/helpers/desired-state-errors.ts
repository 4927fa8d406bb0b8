// The messages a rejected desired state gives, one per line of the InputError.
import { expect } from 'vitest';
import { parseDesiredState } from '../../src/reconcile/load.js';
import { InputError } from '../../src/errors.js';

export function errorsOf(text: string, file: string): string[] {
  try {
    parseDesiredState(text, file);
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as InputError).message.split('\n');
  }
  throw new Error(`expected the document to be rejected:\n${text}`);
}
