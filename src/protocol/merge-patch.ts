// JSON Merge Patch (RFC 7396), as PATCH /v1/queues/{queue} takes it: each member of the patch
// replaces the target's, null removes it, and an object patches an object member in turn. The
// RFC's algorithm is a dozen lines; none of the project's packages has it.

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `target` with `patch` applied; neither is changed. A patch that is not an object replaces the target. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result = new Map(Object.entries(isObject(target) ? target : {}));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) result.delete(key);
    else result.set(key, mergePatch(result.get(key), value));
  }
  // fromEntries defines each key as its own property: "__proto__" stays a member, as it was parsed.
  return Object.fromEntries(result);
}
