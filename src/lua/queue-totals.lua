#!lua flags=no-writes,allow-key-locking
--[[ queue-totals: what GET /metrics shows of one queue or partition (src/core/engine/scrape.ts):
its lifetime totals (totals.lua) and its gauges, in one HMGET and two ZCARDs. The fields are
read as stored: a partitioned queue's root has only `config` and `partitions`.

KEYS[1] meta     hash  config and counters (meta.lua)
KEYS[2] held     zset  held or parked groups
KEYS[3] delayed  zset  delayed jobs

Returns {1, {exists 0|1, partitions, paused, live, active, ready, pausedGroups,
  n:a, n:c, n:f, n:r, n:x, n:t, n:os, n:of, n:oa, n:e, h:w, h:r} ('' where unset), held groups, delayed jobs}
]]
local FIELDS = {
  'config', 'partitions', 'paused', 'live', 'active', 'ready', 'pausedGroups',
  'n:a', 'n:c', 'n:f', 'n:r', 'n:x', 'n:t', 'n:os', 'n:of', 'n:oa', 'n:e', 'h:w', 'h:r',
}
local values = redis.call('HMGET', KEYS[1], unpack(FIELDS))
local out = { values[1] and 1 or 0 }
for i = 2, #FIELDS do out[i] = values[i] or '' end
return { 1, out, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]) }
