#!lua flags=allow-key-locking
--[[ progress: records a live lease's progress (a number 0-100 or a small JSON object).

KEYS[1] meta    hash  config and counters: the secret lease tokens derive from
KEYS[2] jobs    hash  id -> job record
KEYS[3] active  zset  lease members by lease deadline
KEYS[4] revoked zset  leases a cancel ended, '<id> <token>' (lease.lua)

ARGV[1] id
ARGV[2] lease token
ARGV[3] progress (JSON text)
ARGV[4] now (epoch ms: the event's time)

Returns {1, events?}: a `progress` event (events.lua) while meta's `ev` is later than now, placed
  after the partition's newest numbered event (meta.lua placeEvents)
Errors  {-11} JOB_CANCELLED (the job was cancelled under this lease), {-3} LEASE_LOST
]]
-- @include errors
-- @include job
-- @include meta
-- @include lease
-- @include events

local K = { jobs = KEYS[2], active = KEYS[3], revoked = KEYS[4] }
local M = openMeta(KEYS[1])
if not M.cfg then return { LEASE_LOST } end
local state, data = liveLease(K, M, ARGV[1], ARGV[2])
if not state then return { lostLease(K.revoked, ARGV[1], ARGV[2]) } end
state.p = ARGV[3]
redis.call('HSET', K.jobs, ARGV[1], encodeJob(state, data))
local now = tonumber(ARGV[4])
openEvents(M, now)
noteEvent(M, 'progress', ARGV[1], state.g, 'active', (state.a or 0) + 1, now, ARGV[3])
-- No write of meta here (and none added): the event follows the newest numbered one (meta.lua).
placeEvents(M, false)
return { 1, M.events }
