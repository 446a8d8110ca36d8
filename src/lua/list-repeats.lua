#!lua flags=no-writes,allow-key-locking
--[[ list-repeats: every repeatable job of a queue (their number is capped by put-repeat).

KEYS[1] meta     hash  config (the queue must exist)
KEYS[2] repeats  hash  repeat key -> spec JSON

Returns {1, {key, spec JSON, key, spec JSON, ...}}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors

if not hasQueue(KEYS[1]) then return { QUEUE_NOT_FOUND } end
return { 1, redis.call('HGETALL', KEYS[2]) }
