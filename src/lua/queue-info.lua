--[[ queue-info: a queue's config, paused flag and counts, all O(1) reads.
waiting = jobs - active - delayed - completed - failed (every record is in exactly one state);
groups = idle groups in ready + held groups + active groups (each busy group has one lease).

KEYS[1] meta       hash  config, paused flag
KEYS[2] jobs       hash  id -> job record
KEYS[3] ready      zset  idle group heads (+ ~timers marker)
KEYS[4] active     zset  leased job ids
KEYS[5] held       zset  held or parked groups
KEYS[6] delayed    zset  delayed job ids
KEYS[7] completed  zset  kept completed job ids
KEYS[8] failed     zset  kept failed job ids

Returns {1, config JSON, paused 0|1, waiting, delayed, active, completed, failed, groups}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include job

local metaKey, jobsKey, readyKey, activeKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local heldKey, delayedKey, completedKey, failedKey = KEYS[5], KEYS[6], KEYS[7], KEYS[8]

local meta = redis.call('HMGET', metaKey, 'config', 'paused')
if not meta[1] then return { -1 } end
local active = redis.call('ZCARD', activeKey)
local delayed = redis.call('ZCARD', delayedKey)
local completed = redis.call('ZCARD', completedKey)
local failed = redis.call('ZCARD', failedKey)
local waiting = redis.call('HLEN', jobsKey) - active - delayed - completed - failed
local idle = redis.call('ZCARD', readyKey)
if redis.call('ZSCORE', readyKey, TIMERS) then idle = idle - 1 end
local groups = idle + redis.call('ZCARD', heldKey) + active
return { 1, meta[1], meta[2] and 1 or 0, waiting, delayed, active, completed, failed, groups }
