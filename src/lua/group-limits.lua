#!lua flags=allow-key-locking
--[[ group-limits: sets or clears a group's own limits at runtime (docs/flow-control.md#group-limits-at-runtime): its
concurrency and rate limit, over the queue's groupConcurrency and groupRateLimit. They apply to
the group's next start: a raised concurrency offers more of its jobs at once (the caller then
drains), a lowered one lets the jobs in flight finish. They are kept in meta ('l:<group>'),
whether the group has jobs or not, and go with the queue.

KEYS[1] meta           hash  config and counters (meta.lua)
KEYS[2] jobs           hash  id -> job record
KEYS[3] ready          zset  idle group heads
KEYS[4] active         zset  lease members
KEYS[5] held           zset  group -> release time (+inf: paused)
KEYS[6] prioritized    zset  idle group heads with a priority other than 0
KEYS[7] group          zset  the group's jobs

ARGV[1] now (epoch ms)
ARGV[2] group
ARGV[3] limits JSON ({"concurrency"?, "rateLimit"?}, validated by the caller), '' to clear them

Returns {1, limits JSON ('' = none), dueAt}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include group
-- @include partition

local K = { jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5], prioritized = KEYS[6] }
local now, group, limits, groupKey = tonumber(ARGV[1]), ARGV[2], ARGV[3], KEYS[7]
local M = openMeta(KEYS[1], { groupField(group) })
checkPartition(M, group)
if not M.cfg then return { QUEUE_NOT_FOUND } end
local B = newBatch(M, now)
-- The group's state under the old limits first (a one-job group becoming a flow group).
local F = isFlow(M, group) and flowOf(K, B, groupKey, group)
metaSet(M, 'l:' .. group, limits ~= '' and limits or false)
if not F and isFlow(M, group) then F = flowOf(K, B, groupKey, group) end
if F and groupJobs(M, group) > 0 then
  -- Offered jobs step back and the group is offered again under the new limits (a rate hold
  -- is looked at again too).
  pullOffered(K, B, groupKey, group, F)
  if F.h and F.h ~= 'paused' then
    redis.call('ZREM', K.held, group)
    F.h = nil
  end
  refillGroup(K, B, groupKey, group, F)
end
flushBatch(K, B)
saveMeta(M)
return { 1, limits, dueReport(M, now) }
