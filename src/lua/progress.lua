#!lua flags=allow-key-locking
--[[ progress: records a live lease's progress (a number 0-100 or a small JSON object).

KEYS[1] jobs    hash  id -> job record
KEYS[2] active  zset  lease members by lease deadline

ARGV[1] id
ARGV[2] lease token
ARGV[3] progress (JSON text)

Returns {1}
Errors  {-3} LEASE_LOST
]]
-- @include errors
-- @include job
-- @include lease

local K = { jobs = KEYS[1], active = KEYS[2] }
local state, data = liveLease(K, ARGV[1], ARGV[2])
if not state then return { LEASE_LOST } end
state.p = ARGV[3]
redis.call('HSET', K.jobs, ARGV[1], encodeJob(state, data))
return { 1 }
