#!lua flags=no-writes,allow-key-locking
--[[ get-metrics: the queue's per-minute outcome counters (the ring in meta, see meta.lua), as
stored; the caller picks the last 60 minutes and drops slots that hold an older minute.

KEYS[1] meta  hash  config and counters: '<c|f|r>:<minute % 60>' -> epoch minute * 1e8 + count

Returns {1, {value of c:0, c:1, ... c:59, f:0, ... f:59, r:0, ... r:59}} (false where unset)
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors

if redis.call('HEXISTS', KEYS[1], 'config') == 0 then return { QUEUE_NOT_FOUND } end
local fields = {}
for _, kind in ipairs({ 'c', 'f', 'r' }) do
  for slot = 0, 59 do fields[#fields + 1] = kind .. ':' .. slot end
end
return { 1, redis.call('HMGET', KEYS[1], unpack(fields)) }
