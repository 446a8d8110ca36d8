-- A repeatable job's spec and its place in `repeat-due`, written together: put-repeat (a spec
-- created or replaced) and commit-repeat (a run created) both end by moving the repeat to its
-- next run, or out of `repeat-due` once its `limit` of runs exists or it has no next run.

-- @include meta

-- Saves `spec` under `key` with its next run `nextRunAt` (-1 = none; `limit` used up makes it
-- none), and returns that next run. The spec keeps `nextRunAt` only while it has one: the
-- listing shows null for a series that ended.
local function saveRepeat(M, repeatsKey, repeatDueKey, key, spec, nextRunAt)
  if spec.limit and spec.count >= spec.limit then nextRunAt = -1 end
  if nextRunAt >= 0 then
    spec.nextRunAt = nextRunAt
    redis.call('ZADD', repeatDueKey, nextRunAt, key)
    noteTimer(M, nextRunAt)
  else
    spec.nextRunAt = nil
    redis.call('ZREM', repeatDueKey, key)
  end
  redis.call('HSET', repeatsKey, key, cjson.encode(spec))
  return nextRunAt
end
