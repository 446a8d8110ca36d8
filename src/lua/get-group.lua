#!lua flags=no-writes,allow-key-locking
--[[ get-group: a group's state and its jobs in the order they will run (a solo lease, which is
not in the group zset, first: it is the one running).

KEYS[1] meta           hash  config and counters (meta.lua)
KEYS[2] jobs           hash  id -> job record
KEYS[3] ready          zset  idle group heads
KEYS[4] active         zset  lease members by deadline
KEYS[5] held           zset  held or parked groups
KEYS[6] paused-groups  set   paused group names
KEYS[7] prioritized    zset  idle group heads with a priority other than 0
KEYS[8] group          zset  the group's jobs

ARGV[1] group
ARGV[2] now (epoch ms)
ARGV[3] limit: at most this many jobs

Returns {1, state, {job view (view.lua)...}, limits JSON ('' = none), active (its leases), concurrency}
  (a group without jobs whose limits are set answers state '')
Errors  {-1} QUEUE_NOT_FOUND, {-6} GROUP_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include view
-- @include flow
-- @include partition

local K = { jobs = KEYS[2], ready = KEYS[3], active = KEYS[4], held = KEYS[5], pausedGroups = KEYS[6], prioritized = KEYS[7] }
local group, now, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local M = openMeta(KEYS[1], { groupField(group) })
checkPartition(M, group)
if not M.cfg then return { QUEUE_NOT_FOUND } end
local state = groupState(K, M, KEYS[8], group, now)
local limits = metaGet(M, 'l:' .. group)
if not state and not limits then return { GROUP_NOT_FOUND } end
local active = 0
for _, m in ipairs(redis.call('ZRANGE', K.active, 0, -1)) do
  if select(2, splitLease(m)) == group then active = active + 1 end
end
local ids = {}
if groupJobs(M, group) > redis.call('ZCARD', KEYS[8]) then
  -- A solo lease: its member in `active` (at most `concurrency` of them) names the group.
  for _, m in ipairs(redis.call('ZRANGE', K.active, 0, -1)) do
    local id, owner = splitLease(m)
    if owner == group then ids[#ids + 1] = id end
  end
end
for _, m in ipairs(redis.call('ZRANGE', KEYS[8], 0, limit - 1)) do ids[#ids + 1] = idOf(m) end
local jobs = {}
for i = 1, math.min(#ids, limit) do
  jobs[i] = jobView(K, M, ids[i], redis.call('HGET', K.jobs, ids[i]))
end
return { 1, state or '', jobs, limits or '', active, (groupLimitsOf(M, group)) }
