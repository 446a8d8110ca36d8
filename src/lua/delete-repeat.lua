--[[ delete-repeat: removes a repeatable job. Runs already enqueued stay: they are ordinary jobs.

KEYS[1] repeats     hash  repeat key -> spec JSON
KEYS[2] repeat-due  zset  repeat key -> next run

ARGV[1] repeat key

Returns {1}
Errors  {-7} REPEAT_NOT_FOUND
]]
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return { -7 } end
redis.call('ZREM', KEYS[2], ARGV[1])
return { 1 }
