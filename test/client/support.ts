// Shared by the client suites: the error a call must throw.
import { expect } from 'vitest';
import { GroupqError } from '../../src/client';

/** Awaits a call that must fail, and returns its GroupqError. */
export async function caught(promise: Promise<unknown>): Promise<GroupqError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(GroupqError);
  return error as GroupqError;
}
