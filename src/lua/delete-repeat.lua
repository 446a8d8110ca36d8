#!lua flags=allow-key-locking
--[[ delete-repeat: removes a repeatable job. Runs already enqueued stay: they are ordinary jobs.

KEYS[1] meta        hash  config (the queue must exist)
KEYS[2] repeats     hash  repeat key -> spec JSON
KEYS[3] repeat-due  zset  repeat key -> next run

ARGV[1] repeat key

Returns {1}
Errors  {-1} QUEUE_NOT_FOUND, {-7} REPEAT_NOT_FOUND
]]
-- @include errors

local metaKey, repeatsKey, repeatDueKey, key = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
if not hasQueue(metaKey) then return { QUEUE_NOT_FOUND } end
if redis.call('HDEL', repeatsKey, key) == 0 then return { REPEAT_NOT_FOUND } end
redis.call('ZREM', repeatDueKey, key)
return { 1 }
