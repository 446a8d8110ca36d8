--[[ get-metrics: the queue's per-minute outcome counters (the ring metrics.lua writes), as
stored; the caller picks the last 60 minutes and drops slots that hold an older minute.

KEYS[1] meta     hash  config (the queue must exist)
KEYS[2] metrics  hash  '<c|f|r>:<minute % 60>' -> epoch minute * 1e8 + count

Returns {1, {field, value, field, value, ...}}
Errors  {-1} QUEUE_NOT_FOUND
]]
if redis.call('HEXISTS', KEYS[1], 'config') == 0 then return { -1 } end
return { 1, redis.call('HGETALL', KEYS[2]) }
