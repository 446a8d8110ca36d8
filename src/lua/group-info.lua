#!lua flags=no-writes,allow-key-locking
--[[ group-info: the counts and state of the groups list-groups named.

KEYS[1]    meta           hash  config and counters (meta.lua)
KEYS[2]    ready          zset  idle group heads
KEYS[3]    active         zset  lease members '<id> <token><group>' (at most `concurrency`)
KEYS[4]    held           zset  held or parked groups
KEYS[5]    paused-groups  set   paused group names
KEYS[6]    prioritized    zset  idle group heads with a priority other than 0
KEYS[6+i]  group          zset  the i-th group's jobs

ARGV[1] now (epoch ms)
ARGV[2...] group names, one per declared group key

Returns {1, {{group, waiting, active, state, concurrency}...}} for the groups that hold jobs
  (concurrency: the group's effective one, flow.lua)
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include view
-- @include flow

local K = { ready = KEYS[2], active = KEYS[3], held = KEYS[4], pausedGroups = KEYS[5], prioritized = KEYS[6] }
local now = tonumber(ARGV[1])
local extra = {}
for i = 2, #ARGV do extra[#extra + 1] = groupField(ARGV[i]) end
local M = openMeta(KEYS[1], extra)
if not M.cfg then return { QUEUE_NOT_FOUND } end
-- Leases per group, from one read of `active` (its size is bounded by the queue's concurrency).
local leases = {}
for _, m in ipairs(redis.call('ZRANGE', K.active, 0, -1)) do
  local _, group = splitLease(m)
  leases[group] = (leases[group] or 0) + 1
end
local rows = {}
for i = 2, #ARGV do
  local group = ARGV[i]
  local state = groupState(K, M, KEYS[5 + i], group, now)
  if state then
    local active = leases[group] or 0
    rows[#rows + 1] = { group, groupJobs(M, group) - active, active, state, (groupLimitsOf(M, group)) }
  end
end
return { 1, rows }
